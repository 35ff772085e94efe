"""The prompt records' side of forget-me and retention (``community.forget``, ``community.retention``):
which prompt records are about a user, the voice transcripts those records show they authored, and
batched pruning.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import BooleanField, Q, QuerySet
from django.db.models.expressions import RawSQL

from chatcontext.records.models import PromptRecord
from chatcontext.voice.cache import shared_cache
from chatcontext.voice.models import VoiceTranscript
from personas.provenance import clear_provenance


@dataclass(frozen=True)
class ForgottenRecords:
    prompt_records: int = 0
    voice_transcripts: int = 0


# Bounded IN lists: SQLite caps bound parameters, and one forgotten user may appear in many records.
_CHUNK = 500


def about_user(user_disc_id: str) -> Q:
    """The condition "this record is about the user": its ``subject_user_ids`` JSON list holds the id
    (as a string or a number).

    PostgreSQL answers with the JSONB ``@>`` operator (Django's ``contains``); SQLite has no
    ``contains`` for JSON, so it tests each element through ``json_each``. Both match whole
    elements: forgetting "12" never touches a record about "123".
    """
    if connection.vendor == "sqlite":
        table = PromptRecord._meta.db_table
        member = RawSQL(
            f"EXISTS (SELECT 1 FROM json_each({table}.subject_user_ids) AS e WHERE CAST(e.value AS TEXT) = %s)",
            (str(user_disc_id),),
            output_field=BooleanField(),
        )
        return Q(member)
    match = Q(subject_user_ids__contains=[str(user_disc_id)])
    if str(user_disc_id).isdigit():
        match |= Q(subject_user_ids__contains=[int(user_disc_id)])
    return match


def records_about(user_disc_id: str) -> QuerySet[PromptRecord]:
    """Prompt records about this user: what forget-me deletes, and what its confirmation counts beforehand."""
    return PromptRecord.objects.filter(about_user(user_disc_id))


def _authored_ids(snapshot: Any, user_disc_id: str) -> tuple[set[str], set[str]]:
    """Message ids and attachment ids the user authored in a stored turn snapshot (turn-snapshot.md §1)."""
    message_ids: set[str] = set()
    attachment_ids: set[str] = set()
    messages = snapshot.get("messages") if isinstance(snapshot, dict) else None
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        author = message.get("author")
        if not isinstance(author, dict) or str(author.get("id")) != user_disc_id:
            continue
        message_ids.add(str(message.get("id")))
        for attachment in message.get("attachments") or []:
            if isinstance(attachment, dict) and attachment.get("id") is not None:
                attachment_ids.add(str(attachment["id"]))
    return message_ids, attachment_ids


def _delete_in_chunks(queryset: QuerySet[Any], field: str, values: Iterable[Any]) -> int:
    """Rows of the queryset's own model deleted (cascaded rows of other models are not counted)."""
    ordered = sorted(values)
    label = queryset.model._meta.label
    return sum(
        queryset.filter(**{f"{field}__in": ordered[i : i + _CHUNK]}).delete()[1].get(label, 0)
        for i in range(0, len(ordered), _CHUNK)
    )


def forget_records_about(user_disc_id: str) -> ForgottenRecords:
    """Delete, in the caller's transaction (forget-me's), every prompt record about the user and the
    voice transcripts of the messages those records show they authored."""
    message_ids: set[str] = set()
    attachment_ids: set[str] = set()
    record_ids: list[int] = []
    for record_id, snapshot in records_about(user_disc_id).values_list("pk", "snapshot").iterator():
        record_ids.append(record_id)
        authored, attachments = _authored_ids(snapshot, user_disc_id)
        message_ids |= authored
        attachment_ids |= attachments
    attachment_ids.discard("")
    transcripts = VoiceTranscript.objects.all()
    voice = _delete_in_chunks(transcripts, "message_disc_id", message_ids)
    voice += _delete_in_chunks(transcripts, "attachment_disc_id", attachment_ids)
    # This process's copy of the table would go on serving the transcripts; it lets go once the
    # rows are gone for good (a rolled-back forget-me leaves both as they were).
    transaction.on_commit(lambda: shared_cache.forget(message_ids, attachment_ids))
    deleted = _delete_in_chunks(PromptRecord.objects.all(), "pk", record_ids)
    # A memory or reminder a tool call wrote stops naming the records and the messages that went.
    clear_provenance(record_ids=record_ids, message_ids=message_ids)
    return ForgottenRecords(prompt_records=deleted, voice_transcripts=voice)


def prune_batch(server_ids: list[int], before: datetime, limit: int) -> int:
    """Delete up to ``limit`` records of these servers created before ``before``; how many went."""
    old = PromptRecord.objects.filter(server_id__in=server_ids, created_at__lt=before)
    ids = list(old.order_by("pk").values_list("pk", flat=True)[:limit])
    if ids:
        with transaction.atomic():
            PromptRecord.objects.filter(pk__in=ids).delete()
            clear_provenance(record_ids=ids)
    return len(ids)
