"""The writes that steer a channel's conversation: a summary ``/compact`` posted, and a persona's
short-term memory of a channel (its ``update_short_term_memory`` tool, or a moderator's edit).

One mutation per action, each its own durable transaction: none of them is ever part of a larger
write, so a caller that holds a transaction open is a bug, and ``durable`` says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from personas.actions.actor import Actor, recording
from personas.actions.errors import ActionError
from personas.models import SHORT_TERM_MEMORY_MAX_CHARS, ConversationSummary, Persona, ShortTermMemory
from personas.provenance import NO_PROVENANCE, Provenance


def _authors(disc_ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(str(d) for d in disc_ids if str(d).isdigit()))


def clean_short_term_memory(content: str) -> str:
    """The note as stored, or ActionError saying why it cannot be (forms and tools show the reason)."""
    text = content.strip()
    if len(text) > SHORT_TERM_MEMORY_MAX_CHARS:
        raise ActionError(
            f"A short-term memory holds at most {SHORT_TERM_MEMORY_MAX_CHARS} characters (this one has {len(text)})."
        )
    return text


@dataclass(frozen=True)
class NoteWrite:
    """A whole-note replacement: which persona's note of which channel, the new text, and whose
    messages the writer read (forget-me deletes a note that drew on them)."""

    persona: Persona
    channel_disc_id: str
    content: str
    author_disc_ids: tuple[str, ...] = ()
    provenance: Provenance = NO_PROVENANCE


def replace_short_term_memory(write: NoteWrite, *, actor: Actor) -> ShortTermMemory | None:
    """Replace the persona's note of the channel with ``write.content``; an empty text deletes it
    (None). The note keeps the authors it drew on before as well: rewriting it may keep their words."""
    text = clean_short_term_memory(write.content)
    with recording(actor), transaction.atomic(durable=True):
        note = (
            ShortTermMemory.objects.select_for_update()
            .filter(persona=write.persona, channel_disc_id=write.channel_disc_id)
            .first()
        )
        if not text:
            if note is not None:
                note.delete()
            return None
        if note is None:
            note = ShortTermMemory(
                server_id=write.persona.server_id, persona=write.persona, channel_disc_id=write.channel_disc_id
            )
        note.content = text
        note.author_disc_ids = _authors([*note.author_disc_ids, *write.author_disc_ids])
        if write.provenance != NO_PROVENANCE:  # a moderator's edit keeps where the note came from
            for name, value in write.provenance.fields().items():
                setattr(note, name, value)
        note.save()
        return note


@dataclass(frozen=True)
class SummaryWrite:
    """A summary ``/compact`` posted in a channel, with the people whose messages it summarised."""

    persona: Persona
    channel_disc_id: str
    kind: str
    content: str
    author_disc_ids: tuple[str, ...]
    requested_by_disc_id: str
    provenance: Provenance = NO_PROVENANCE


def record_summary(write: SummaryWrite, *, actor: Actor) -> ConversationSummary:
    if write.kind not in ConversationSummary.Kind.values:
        raise ActionError(f"Unknown summary kind {write.kind!r}.")
    if not write.content.strip():
        raise ActionError("A summary cannot be empty.")
    with recording(actor), transaction.atomic(durable=True):
        return ConversationSummary.objects.create(
            server_id=write.persona.server_id,
            persona=write.persona,
            channel_disc_id=write.channel_disc_id,
            kind=write.kind,
            content=write.content.strip(),
            author_disc_ids=_authors(write.author_disc_ids),
            requested_by_disc_id=write.requested_by_disc_id,
            **write.provenance.fields(),
        )
