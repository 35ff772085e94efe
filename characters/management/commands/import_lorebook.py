"""``manage.py import_lorebook FILE --server ID [--persona NAME]``: SillyTavern world info for a server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from characters.commands import add_file_and_server, read_bounded, refuse, server_for
from characters.errors import CardError
from characters.files import read_lorebook_file
from personas import actions
from personas.actions.cards import import_lorebook
from personas.models import Persona


class Command(BaseCommand):
    help = (
        "Import a SillyTavern World Info file (or a card's character_book) as a lorebook every persona of the "
        "server reads, or with --persona only that persona. A file that is no lorebook exits 2 and writes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_file_and_server(parser, "the World Info .json")
        parser.add_argument("--persona", help="the persona's name (any case); omitted: every persona of the server")

    def handle(self, *args: Any, **options: Any) -> None:
        data = read_bounded(options["file"])
        try:
            book = read_lorebook_file(data, name=Path(options["file"]).stem)
        except CardError as exc:
            raise refuse(f"{options['file']}: {exc}") from exc
        server = server_for(options["server"])
        persona = None
        if options["persona"]:
            name = options["persona"].strip()
            persona = Persona.objects.filter(server=server, persona_nickname__iexact=name).first()
            if persona is None:
                raise refuse(f"{server} has no persona named {name}.")
        try:
            lorebook = import_lorebook(
                server, book, persona=persona, actor=actions.Actor.system("manage.py import_lorebook")
            )
        except actions.ActionError as exc:
            raise refuse(f"{options['file']}: {exc}") from exc
        readers = persona.persona_nickname if persona else "every persona"
        self.stdout.write(f"Imported lorebook {lorebook.pk} ({len(book.entries)} entries) of {server} for {readers}")
