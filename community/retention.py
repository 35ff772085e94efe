"""Prompt-record retention: delete records older than each server's ``ServerSettings.retention_days``.

Servers are grouped by their retention (a server without a settings row gets the default, 30 days),
so the work is one delete loop per distinct retention value, not per server. A memory or reminder a
tool call wrote forgets the record it came from with it (``personas.provenance``, cleared by
chatcontext's ``prune_batch`` in the same transaction). Deletes go in batches
of primary keys so a large backlog never holds one long transaction or lock. Log lines carry counts
only: no server ids, names or record content. The records are chatcontext's; it deletes them
(``chatcontext.records.forgetting``).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from chatcontext.records.forgetting import prune_batch
from personas.models import (
    DiscordUser,
    Persona,
    PersonalizationBlacklist,
    PersonalMemory,
    PersonaUserBlock,
    Server,
    ServerMemory,
    ServerSettings,
)

logger = logging.getLogger(__name__)

DELETE_BATCH_SIZE = 500
DEFAULT_RETENTION_DAYS: int = ServerSettings._meta.get_field("retention_days").get_default()


@dataclass(frozen=True)
class RetentionReport:
    deleted: int = 0
    batches: int = 0
    # retention days → records deleted under that policy
    deleted_by_retention_days: dict[int, int] = field(default_factory=dict)


def servers_by_retention_days() -> dict[int, list[int]]:
    """Server primary keys grouped by their effective retention in days (one query)."""
    groups: dict[int, list[int]] = defaultdict(list)
    rows = Server.objects.annotate(days=Coalesce("settings__retention_days", Value(DEFAULT_RETENTION_DAYS)))
    for server_id, days in rows.values_list("server_id", "days"):
        groups[max(1, int(days))].append(server_id)
    return dict(groups)


def prune_prompt_records(*, now: datetime | None = None, batch_size: int = DELETE_BATCH_SIZE) -> RetentionReport:
    """Delete every prompt record older than its server's retention; returns counts."""
    now = now or timezone.now()
    deleted = 0
    batches = 0
    by_days: dict[int, int] = {}
    for days, server_ids in sorted(servers_by_retention_days().items()):
        removed_here = 0
        while removed := prune_batch(server_ids, now - timedelta(days=days), batch_size):
            batches += 1
            removed_here += removed
            logger.info("retention: batch %d deleted %d prompt records (policy %d days)", batches, removed, days)
        if removed_here:
            by_days[days] = removed_here
            deleted += removed_here
    logger.info("retention: %d prompt records deleted in %d batches", deleted, batches)
    return RetentionReport(deleted=deleted, batches=batches, deleted_by_retention_days=by_days)


def prune_history(*, now: datetime | None = None) -> int:
    """Delete audit-trail rows older than ``AUDIT_HISTORY_DAYS`` (0: kept); returns how many.

    One platform-wide age rather than each server's record retention: personal memories belong to a
    lineage, not a server, and a server's 30-day record retention would make a memory deleted last
    month unrestorable. Counts only in the log.
    """
    days = settings.TOMORI["AUDIT_HISTORY_DAYS"]
    if days <= 0:
        return 0
    cutoff = (now or timezone.now()) - timedelta(days=days)
    deleted = 0
    for model in (PersonalMemory, ServerMemory, DiscordUser, PersonalizationBlacklist, PersonaUserBlock, Persona):
        deleted += model.history.filter(history_date__lt=cutoff).delete()[0]
    deleted += ServerSettings.history.filter(history_date__lt=cutoff).delete()[0]
    logger.info("retention: %d audit-trail rows deleted", deleted)
    return deleted
