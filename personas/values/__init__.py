"""personas' Django-free values and rules the pure pipeline reads: display-name rules, memory
placeholders and sampling settings."""
