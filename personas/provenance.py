"""Where a row a persona's tool call wrote came from: the prompt record of its turn and the message
that turn answered (``source_prompt_record_id``, ``source_message_disc_id`` on personal and server
memories and reminders).

Plain ids, not foreign keys (personas rows never depend on chatcontext rows). So when a record goes
— retention prunes it, forget-me deletes it — or the message's author is forgotten, the pointers are
cleared here, and no row keeps naming a record or a message that is gone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import models, transaction

from personas.models import ConversationSummary, PersonalMemory, Reminder, ServerMemory, ShortTermMemory

PROVENANCE_MODELS: tuple[type[models.Model], ...] = (
    PersonalMemory,
    ServerMemory,
    Reminder,
    ShortTermMemory,
    ConversationSummary,
)
_CHUNK = 500


@dataclass(frozen=True)
class Provenance:
    """The turn a tool write belongs to; the record id is known only once the record is stored."""

    message_disc_id: str = ""
    prompt_record_id: int | None = None

    def fields(self) -> dict[str, object]:
        return {"source_message_disc_id": self.message_disc_id[:32], "source_prompt_record_id": self.prompt_record_id}


# A moderator's write: from no turn.
NO_PROVENANCE = Provenance()


@dataclass(frozen=True)
class WrittenRow:
    """One row a tool call wrote: ``kind`` is a key of ``ROW_MODELS``."""

    kind: str
    pk: int

    def as_json(self) -> dict[str, object]:
        return {"kind": self.kind, "id": self.pk}


ROW_MODELS: dict[str, type[models.Model]] = {
    "personal_memory": PersonalMemory,
    "server_memory": ServerMemory,
    "reminder": Reminder,
    "short_term_memory": ShortTermMemory,
}


def attach_prompt_record(rows: Iterable[WrittenRow], prompt_record_id: int) -> int:
    """Point the rows a turn's tool calls wrote at that turn's prompt record, stored after them."""
    updated = 0
    with transaction.atomic():
        by_kind: dict[str, list[int]] = {}
        for row in rows:
            by_kind.setdefault(row.kind, []).append(row.pk)
        for kind, pks in by_kind.items():
            model = ROW_MODELS[kind]
            updated += model._default_manager.filter(pk__in=pks).update(source_prompt_record_id=prompt_record_id)
    return updated


def clear_provenance(*, record_ids: Iterable[int] = (), message_ids: Iterable[str] = ()) -> int:
    """Clear the pointers at deleted prompt records and at messages of a forgotten author. Runs in
    the caller's transaction (retention, forget-me)."""
    records, messages = sorted(set(record_ids)), sorted(set(message_ids))
    cleared = 0
    for model in PROVENANCE_MODELS:
        rows = model._default_manager
        for i in range(0, len(records), _CHUNK):
            cleared += rows.filter(source_prompt_record_id__in=records[i : i + _CHUNK]).update(
                source_prompt_record_id=None
            )
        for i in range(0, len(messages), _CHUNK):
            cleared += rows.filter(source_message_disc_id__in=messages[i : i + _CHUNK]).update(
                source_message_disc_id=""
            )
    return cleared
