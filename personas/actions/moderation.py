"""A server's decisions about users: the personalization blacklist."""

from __future__ import annotations

from django.db import transaction

from personas.models import (
    PersonalizationBlacklist,
    Server,
)


def add_to_blacklist(server: Server, user_disc_id: str, reason: str = "") -> PersonalizationBlacklist:
    """Stop a server from using a user's memories and saved names (P-02, P-05, P-06). Idempotent."""
    with transaction.atomic():
        entry, created = PersonalizationBlacklist.objects.get_or_create(
            server=server, user_disc_id=user_disc_id, defaults={"reason": reason}
        )
        if not created and reason and entry.reason != reason:
            entry.reason = reason
            entry.save(update_fields=["reason"])
    return entry


def remove_from_blacklist(server: Server, user_disc_id: str) -> bool:
    """True when an entry was removed."""
    with transaction.atomic():
        deleted, _ = PersonalizationBlacklist.objects.filter(server=server, user_disc_id=user_disc_id).delete()
    return deleted > 0
