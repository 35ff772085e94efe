"""``manage.py invite_url``: the link that adds the bot to a Discord server."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = (
        "Print the OAuth2 link that adds the bot to a server, with the bot and applications.commands "
        "scopes and exactly the permissions the bot's features use. The application id comes from "
        "DISCORD_APPLICATION_ID, else from DISCORD_TOKEN (its first segment)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        from bot.discord.client import application_id_from_token, invite_url

        configured = settings.DISCORD_APPLICATION_ID
        if configured and not configured.isdigit():
            raise CommandError("DISCORD_APPLICATION_ID is not a Discord id (digits only)", returncode=2)
        application_id = int(configured) if configured else application_id_from_token(settings.DISCORD_TOKEN)
        if application_id is None:
            raise CommandError(
                "Set DISCORD_APPLICATION_ID (General Information in https://discord.com/developers/applications) "
                "or a valid DISCORD_TOKEN",
                returncode=2,
            )
        self.stdout.write(invite_url(application_id))
