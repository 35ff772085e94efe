"""Errors a surface raises to the turn (kept apart from the runner so the tools can raise and catch
them without importing it)."""


class DeliveryRefused(Exception):
    """The surface refused a post (Discord answered with an HTTP error). The message is short and
    names no one: it becomes the prompt record's error."""
