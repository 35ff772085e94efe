"""A server's decisions about users: the personalization blacklist and persona blocks."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from personas.actions.actor import Actor, recording
from personas.actions.errors import ActionError
from personas.actions.versions import bump_server
from personas.models import Persona, PersonalizationBlacklist, PersonaUserBlock, Server


def add_to_blacklist(server: Server, user_disc_id: str, reason: str = "", *, actor: Actor) -> PersonalizationBlacklist:
    """Stop a server from using a user's memories and saved names (P-02, P-05, P-06). Idempotent."""
    with recording(actor), transaction.atomic():
        entry, created = PersonalizationBlacklist.objects.get_or_create(
            server=server, user_disc_id=user_disc_id, defaults={"reason": reason}
        )
        if created:
            bump_server(server.server_id)
        elif reason and entry.reason != reason:
            entry.reason = reason
            entry.save(update_fields=["reason"])  # the reason reaches no prompt: no bump
    return entry


def remove_from_blacklist(server: Server, user_disc_id: str, *, actor: Actor) -> bool:
    """True when an entry was removed."""
    with recording(actor), transaction.atomic():
        deleted, _ = PersonalizationBlacklist.objects.filter(server=server, user_disc_id=user_disc_id).delete()
        if deleted:
            bump_server(server.server_id)
    return deleted > 0


def block_user(
    persona: Persona,
    user_disc_id: str,
    *,
    block_type: str,
    reason: str,
    expires_at: datetime,
    actor: Actor,
) -> PersonaUserBlock:
    """Mute a user for one persona (they cannot trigger it) or block them (their messages are hidden
    from it) until ``expires_at``; one entry per (persona, user), replaced by a new decision."""
    if block_type not in PersonaUserBlock.BlockType.values:
        raise ActionError(f"Unknown block type {block_type!r}; expected one of {PersonaUserBlock.BlockType.values}.")
    with recording(actor), transaction.atomic():
        block, _ = PersonaUserBlock.objects.update_or_create(
            server_id=persona.server_id,
            persona=persona,
            user_disc_id=user_disc_id,
            defaults={"block_type": block_type, "reason": reason, "expires_at": expires_at},
        )
    return block


def unblock_user(block: PersonaUserBlock, *, actor: Actor) -> None:
    with recording(actor), transaction.atomic():
        PersonaUserBlock.objects.filter(pk=block.pk).delete()
