"""Refusals of the actions: what a moderator (or member) is told when a write breaks a rule."""

from __future__ import annotations


class ActionError(ValueError):
    """A mutation the rules refuse; the message is safe to show to a moderator (no user text).

    ``field`` names the argument (and model field) the refusal is about, so a form can show it
    next to that field; None when it is about the whole write.
    """

    field: str | None = None


class InvalidLineage(ActionError):
    field = "persona_lineage_id"


class MemoryTooLong(ActionError):
    field = "content"


class MemoryLimitReached(ActionError):
    pass


class ReminderNotCancellable(ActionError):
    pass


class ReminderNotRetryable(ActionError):
    pass


class ModeratorAccountRefused(ActionError):
    field = "username"
