"""Servers the bot hears from, registered on first contact."""

from __future__ import annotations

from django.db import transaction

from personas.actions.actor import Actor, recording
from personas.models import (
    Persona,
    Server,
)


def register_server(
    server_disc_id: str,
    *,
    name: str,
    is_dm: bool,
    locale: str | None,
    main_persona_nickname: str,
    actor: Actor,
) -> Server:
    """The server row of a guild (or DM channel) the bot hears from, created on first contact with
    its settings and a main persona named ``main_persona_nickname`` (triggered by that name).
    Idempotent: an existing server is returned unchanged."""
    with recording(actor), transaction.atomic():
        server, created = Server.objects.get_or_create(
            server_disc_id=server_disc_id,
            defaults={"name": name[:100], "is_dm_channel": is_dm, "registration_locale": locale},
        )
        if created or not Persona.objects.filter(server=server, is_alter=False).exists():
            Persona.objects.create(
                server=server, persona_nickname=main_persona_nickname, trigger_words=[main_persona_nickname.lower()]
            )
    return server
