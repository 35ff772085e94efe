"""The audit trail's extra columns (issue 16): who changed a row, beside django-simple-history's own.

``history_user`` names the account when there is one (an admin or API session); these columns say
what kind of caller it was and which one (an API token, a member's slash command, a persona's tool
call, a task), filled from the action's ``Actor`` (``personas.actions.actor``).
"""

from __future__ import annotations

from typing import Any

from django.db import models
from simple_history.models import HistoricalRecords


class ActorKind(models.TextChoices):
    ADMIN = "admin", "admin"
    API = "api", "API"
    SLASH_COMMAND = "slash_command", "slash command"
    TOOL_CALL = "tool_call", "tool call"
    SYSTEM = "system", "system"


class ActorColumns(models.Model):
    # Blank: a write outside any action or admin page (a shell), so nobody is recorded.
    actor_kind = models.CharField(max_length=16, choices=ActorKind.choices, blank=True, default="")
    actor = models.CharField(max_length=200, blank=True, default="", help_text="Who, in words: no user text.")

    class Meta:
        abstract = True


class AuditTrail(HistoricalRecords):
    """simple-history's records without a version identical to the one before it (a page saved
    unchanged, the demo loader run again): one query to compare, so the trail lists changes only."""

    def post_save(self, instance: Any, created: bool, using: str | None = None, **kwargs: Any) -> None:
        if not created and not kwargs.get("raw", False) and self._unchanged(instance, using):
            return
        super().post_save(instance, created, using=using, **kwargs)

    def _unchanged(self, instance: Any, using: str | None) -> bool:
        last = getattr(instance, self.manager_name).using(using).order_by("-history_date", "-history_id").first()
        if last is None:
            return False
        compared = [f.attname for f in self.fields_included(instance) if not getattr(f, "auto_now", False)]
        return all(getattr(last, name) == getattr(instance, name) for name in compared)


def audit_trail(**options: Any) -> HistoricalRecords:
    """A model's history with the actor columns."""
    return AuditTrail(bases=[ActorColumns], **options)
