"""Prompt-record retention: delete records older than each server's ``ServerSettings.retention_days``.

Servers are grouped by their retention (a server without a settings row gets the default, 30 days),
so the work is one delete loop per distinct retention value, not per server. A memory or reminder a
tool call wrote forgets the record it came from with it (``personas.provenance``). Deletes go in batches
of primary keys so a large backlog never holds one long transaction or lock. Log lines carry counts
only: no server ids, names or record content.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from chatcontext.models import PromptRecord
from personas.models import Server, ServerSettings
from personas.provenance import clear_provenance

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
        old = PromptRecord.objects.filter(server_id__in=server_ids, created_at__lt=now - timedelta(days=days))
        removed_here = 0
        while True:
            ids = list(old.order_by("pk").values_list("pk", flat=True)[:batch_size])
            if not ids:
                break
            with transaction.atomic():
                PromptRecord.objects.filter(pk__in=ids).delete()
                clear_provenance(record_ids=ids)
            batches += 1
            removed_here += len(ids)
            logger.info("retention: batch %d deleted %d prompt records (policy %d days)", batches, len(ids), days)
        if removed_here:
            by_days[days] = removed_here
            deleted += removed_here
    logger.info("retention: %d prompt records deleted in %d batches", deleted, batches)
    return RetentionReport(deleted=deleted, batches=batches, deleted_by_retention_days=by_days)
