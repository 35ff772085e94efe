"""``manage.py export_card PERSONA_ID OUT``: a persona as a SillyTavern card, .png or .json by OUT's name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from characters.commands import refuse
from characters.files import card_json_bytes, card_png
from characters.persona_card import persona_card
from personas.models import Persona


class Command(BaseCommand):
    help = "Export a persona as a character card: OUT ending in .png (V2 and V3 chunks) or .json (V3)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("persona_id", type=int)
        parser.add_argument("out", help="the file to write: NAME.png or NAME.json")

    def handle(self, *args: Any, **options: Any) -> None:
        out = Path(options["out"])
        if out.suffix.lower() not in (".png", ".json"):
            raise refuse(f"{out} must end in .png or .json.")
        persona = Persona.objects.filter(pk=options["persona_id"]).first()
        if persona is None:
            raise refuse(f"No persona has the id {options['persona_id']}.")
        card = persona_card(persona)
        data = card_png(card) if out.suffix.lower() == ".png" else card_json_bytes(card)
        try:
            out.write_bytes(data)
        except OSError as exc:
            raise refuse(f"Cannot write {out}: {exc.strerror or exc}") from exc
        self.stdout.write(f"Exported {persona.persona_nickname} to {out}")
