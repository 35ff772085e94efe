"""What the apps run on rather than what they are about: Redis that may be down (``best_effort``).

The lowest layer (pyproject.toml's import contract): it imports none of the apps, so every app may use it.
"""
