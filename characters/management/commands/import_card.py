"""``manage.py import_card FILE --server DISCORD_SERVER_ID [--alter]``: a SillyTavern card as a persona."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from characters.commands import add_file_and_server, read_bounded, refuse, server_for
from characters.errors import CardError
from characters.files import read_card
from personas import actions
from personas.actions.cards import import_card


class Command(BaseCommand):
    help = (
        "Import a character card (PNG, JSON or CHARX; Character Card V1, V2 or V3) as the server's main persona, "
        "or with --alter as a new alter. Prints the new persona; a file that is no card exits 2 and writes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_file_and_server(parser, "the card: .png, .json or .charx")
        parser.add_argument("--alter", action="store_true", help="add the character as an alter")

    def handle(self, *args: Any, **options: Any) -> None:
        data = read_bounded(options["file"])
        try:
            card = read_card(data)
        except CardError as exc:
            raise refuse(f"{options['file']}: {exc}") from exc
        server = server_for(options["server"])
        try:
            persona = import_card(
                server, card, as_alter=options["alter"], actor=actions.Actor.system("manage.py import_card")
            )
        except actions.ActionError as exc:
            raise refuse(f"{options['file']}: {exc}") from exc
        kind = "alter" if persona.is_alter else "main persona"
        book = f", lorebook of {len(card.lorebook.entries)} entries" if card.lorebook else ""
        self.stdout.write(f"Imported {persona.persona_nickname} as {kind} {persona.persona_id} of {server}{book}")
