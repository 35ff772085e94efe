"""Personal and server memories: lineage, length and per-lineage limits (data-model.md §2.9, §2.11, §2.12)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max

from personas.actions.actor import Actor, recording
from personas.actions.errors import ActionError, InvalidLineage, MemoryLimitReached, MemoryTooLong
from personas.models import (
    FIRST_LINEAGE_ID,
    GLOBAL_LINEAGE_ID,
    DiscordUser,
    Persona,
    PersonalMemory,
    Server,
    ServerMemory,
)
from personas.provenance import NO_PROVENANCE, Provenance

_Memory = TypeVar("_Memory", PersonalMemory, ServerMemory)


def persona_memory_lineage(persona: Persona) -> int:
    """The lineage a memory written on a persona's behalf goes to.

    A persona holding lineage 0 (or anything below 10000) is a failed migration, and memory writes
    must refuse it rather than silently write global memories (data-model.md §2.9).
    """
    if persona.persona_lineage_id is None or persona.persona_lineage_id < FIRST_LINEAGE_ID:
        raise InvalidLineage("This persona has no valid lineage id; memory writes are refused.")
    return persona.persona_lineage_id


def check_lineage(lineage_id: int, server: Server | None = None) -> None:
    """A memory is written to lineage 0 (global) or to a lineage a persona holds now (data-model.md §2.9).

    The registry (``PersonaLineage``) is not the test: a persona may carry a lineage id it was given
    rather than drew, and a lineage whose personas were all deleted keeps its memories for a
    re-import but is read by no prompt, so a new memory there would be stored and never used.
    With ``server`` (server memories, read only by that server's personas) the persona must be
    one of that server's.
    """
    # 1..9999 are never drawn; negative ids are nothing.
    if lineage_id != GLOBAL_LINEAGE_ID and lineage_id < FIRST_LINEAGE_ID:
        raise InvalidLineage(f"Lineage {lineage_id} is neither 0 (global) nor a drawn lineage id (>= 10000).")
    if lineage_id == GLOBAL_LINEAGE_ID:
        return
    holders = Persona.objects.filter(persona_lineage_id=lineage_id)
    if server is not None and not holders.filter(server=server).exists():
        raise InvalidLineage(f"Lineage {lineage_id} is not the lineage of a persona of this server (nor 0, global).")
    if server is None and not holders.exists():
        raise InvalidLineage(f"Lineage {lineage_id} is not held by any persona (nor 0, global).")


def _clean_content(content: str) -> str:
    text = content.strip()
    if not text:
        raise ActionError("A memory cannot be empty.")
    limit = settings.TOMORI["MAX_MEMORY_LENGTH"]
    if len(text) > limit:
        raise MemoryTooLong(f"A memory holds at most {limit} characters (this one has {len(text)}).")
    return text


def _clean_tags(tags: Iterable[str]) -> list[str]:
    cleaned: list[str] = []
    for tag in tags:
        value = str(tag).strip()
        if value and value not in cleaned:
            cleaned.append(value)
    return cleaned


def _visible_memory_count(user: DiscordUser, lineage_id: int) -> int:
    """Rows a persona of ``lineage_id`` sees for this user: its own lineage plus the global rows.

    For a global write the fullest lineage is what a new global row would overflow, so the count is
    the global rows plus the largest per-lineage count (data-model.md §2.11).
    """
    rows = PersonalMemory.objects.filter(user=user)
    if lineage_id != GLOBAL_LINEAGE_ID:
        return rows.filter(persona_lineage_id__in=[lineage_id, GLOBAL_LINEAGE_ID]).count()
    global_count = rows.filter(persona_lineage_id=GLOBAL_LINEAGE_ID).count()
    fullest = (
        rows.exclude(persona_lineage_id=GLOBAL_LINEAGE_ID)
        .values("persona_lineage_id")
        .annotate(n=Count("pk"))
        .aggregate(m=Max("n"))["m"]
    )
    return global_count + (fullest or 0)


def _lock(row: DiscordUser | Server) -> None:
    # Serializes concurrent memory writes for one user (or server) so two writers cannot both pass
    # the limit check.
    type(row).objects.select_for_update().filter(pk=row.pk).values_list("pk", flat=True).first()


def check_new_personal_memory(user: DiscordUser, lineage_id: int, content: str) -> str:
    """The cleaned text of a memory that may be added, or ActionError saying why not.

    Forms call it to show the refusal next to the field; ``add_personal_memory`` calls it again
    under the user lock, where the answer is final.
    """
    check_lineage(lineage_id)
    text = _clean_content(content)
    limit = settings.TOMORI["MAX_PERSONAL_MEMORIES"]
    if _visible_memory_count(user, lineage_id) >= limit:
        raise MemoryLimitReached(f"This user already has {limit} memories visible to lineage {lineage_id}.")
    return text


def add_personal_memory(
    user: DiscordUser,
    lineage_id: int,
    content: str,
    tags: Iterable[str] = (),
    *,
    actor: Actor,
    provenance: Provenance = NO_PROVENANCE,
) -> PersonalMemory:
    """Store a memory about ``user`` in ``lineage_id`` (0 = every persona of every server).

    Enforces MAX_MEMORY_LENGTH per memory and MAX_PERSONAL_MEMORIES per (user, lineage), counting
    lineage-0 rows (data-model.md §2.11, §3). ``provenance``: the turn of a tool call that wrote it.
    """
    with recording(actor), transaction.atomic():
        _lock(user)
        text = check_new_personal_memory(user, lineage_id, content)
        return PersonalMemory.objects.create(
            user=user, persona_lineage_id=lineage_id, content=text, tags=_clean_tags(tags), **provenance.fields()
        )


def update_personal_memory(
    memory: PersonalMemory, *, content: str | None = None, tags: Iterable[str] | None = None, actor: Actor
) -> PersonalMemory:
    """Edit a memory's text or tags in place; its lineage and owner never change (that is a new memory)."""
    return _update_memory(memory, content, tags, actor)


def _update_memory(memory: _Memory, content: str | None, tags: Iterable[str] | None, actor: Actor) -> _Memory:
    with recording(actor), transaction.atomic():
        if content is not None:
            memory.content = _clean_content(content)
        if tags is not None:
            memory.tags = _clean_tags(tags)
        memory.save(update_fields=["content", "tags", "updated_at"])
    return memory


def delete_personal_memory(memory: PersonalMemory, *, actor: Actor) -> None:
    with recording(actor), transaction.atomic():
        PersonalMemory.objects.filter(pk=memory.pk).delete()


def delete_server_memory(memory: ServerMemory, *, actor: Actor) -> None:
    with recording(actor), transaction.atomic():
        ServerMemory.objects.filter(pk=memory.pk).delete()


def delete_personal_memories(user: DiscordUser, lineage_ids: Iterable[int], *, actor: Actor) -> int:
    """Delete all of a user's memories in the given lineages (a member's "forget all"); returns the count."""
    with recording(actor), transaction.atomic():
        rows = PersonalMemory.objects.filter(user=user, persona_lineage_id__in=sorted(set(lineage_ids)))
        return rows.delete()[1].get(PersonalMemory._meta.label, 0)


def check_new_server_memory(server: Server, lineage_id: int, content: str) -> str:
    """The cleaned text of a server memory that may be added, or ActionError saying why not
    (``check_new_personal_memory``'s counterpart: forms call it, ``add_server_memory`` decides)."""
    check_lineage(lineage_id, server)
    text = _clean_content(content)
    limit = settings.TOMORI["MAX_SERVER_MEMORIES"]
    if ServerMemory.objects.filter(server=server, persona_lineage_id=lineage_id).count() >= limit:
        raise MemoryLimitReached(f"This server already has {limit} memories in lineage {lineage_id}.")
    return text


def add_server_memory(
    server: Server,
    lineage_id: int,
    content: str,
    tags: Iterable[str] = (),
    *,
    persona: Persona | None = None,
    user: DiscordUser | None = None,
    actor: Actor,
    provenance: Provenance = NO_PROVENANCE,
) -> ServerMemory:
    """Store a memory of ``server`` for the personas of ``lineage_id`` (0 = every persona of the server).

    Enforces MAX_MEMORY_LENGTH and MAX_SERVER_MEMORIES per (server, lineage) (data-model.md §2.12);
    ``persona`` and ``user`` are attribution only (who learned it, who taught it).
    """
    with recording(actor), transaction.atomic():
        _lock(server)
        text = check_new_server_memory(server, lineage_id, content)
        return ServerMemory.objects.create(
            server=server,
            persona_lineage_id=lineage_id,
            content=text,
            tags=_clean_tags(tags),
            persona=persona,
            user=user,
            **provenance.fields(),
        )


def update_server_memory(
    memory: ServerMemory, *, content: str | None = None, tags: Iterable[str] | None = None, actor: Actor
) -> ServerMemory:
    """Edit a server memory's text or tags; its server and lineage never change (that is a new memory)."""
    return _update_memory(memory, content, tags, actor)


def restore_personal_memory(version: Any, *, actor: Actor) -> PersonalMemory:
    """Bring back a personal memory as one of its history rows (``PersonalMemory.history``) holds it:
    a deleted one is stored again under its old id, an existing one gets that version's text and tags.

    A deleted memory is a new write as far as the rules go: its lineage must still be one a persona
    holds and the user's limit must have room (the checks of ``add_personal_memory``).
    """
    with recording(actor), transaction.atomic():
        current = PersonalMemory.objects.filter(pk=version.personal_memory_id).first()
        if current is not None:
            return _update_memory(current, version.content, version.tags, actor)
        user = DiscordUser.objects.get(pk=version.user_id)
        _lock(user)
        text = check_new_personal_memory(user, version.persona_lineage_id, version.content)
        return PersonalMemory.objects.create(
            personal_memory_id=version.personal_memory_id,
            user=user,
            persona_lineage_id=version.persona_lineage_id,
            content=text,
            tags=_clean_tags(version.tags or []),
        )


def restore_server_memory(version: Any, *, actor: Actor) -> ServerMemory:
    """``restore_personal_memory`` for a server memory: a deleted one is checked against the server's
    lineages and ``MAX_SERVER_MEMORIES`` again."""
    with recording(actor), transaction.atomic():
        current = ServerMemory.objects.filter(pk=version.id).first()
        if current is not None:
            return _update_memory(current, version.content, version.tags, actor)
        server = Server.objects.get(pk=version.server_id)
        _lock(server)
        text = check_new_server_memory(server, version.persona_lineage_id, version.content)
        return ServerMemory.objects.create(
            id=version.id,
            server=server,
            persona_id=version.persona_id if Persona.objects.filter(pk=version.persona_id).exists() else None,
            persona_lineage_id=version.persona_lineage_id,
            user_id=version.user_id if DiscordUser.objects.filter(pk=version.user_id).exists() else None,
            content=text,
            tags=_clean_tags(version.tags or []),
        )
