"""``manage.py import_preset FILE --server ID --persona NAME``: a SillyTavern chat-completion preset
for one persona (issue 31 item 4, README "Bringing characters").

The preset orders the persona's prompt (``chatcontext.core.preset``) and its sampling settings become the
persona's (``personas.actions.import_preset``). Prints one line naming what was imported. A file that
cannot be read or is no usable preset, an unknown server or persona: one line on stderr, exit status
2, nothing written.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser

from personas import actions
from personas.management.commands.add_moderator import find_server
from personas.models import Persona
from personas.presets import MAX_PRESET_BYTES, PresetError, parse_preset


class Command(BaseCommand):
    help = (
        "Import a SillyTavern chat-completion preset (JSON) for one persona: its prompt order and its sampling "
        "settings (temperature, top p, penalties, reply length, seed). Keys this platform does not use are kept "
        "and ignored. Exit status 2 with one line on stderr when the file or the names are unusable."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", metavar="FILE", help="the preset's JSON file, as SillyTavern exports it")
        parser.add_argument("--server", required=True, help="the server: its Discord id, its id or its name")
        parser.add_argument("--persona", required=True, help="the persona's name in that server (any case)")

    def fail(self, line: str) -> NoReturn:
        self.stderr.write(" ".join(line.split()))
        sys.exit(2)

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_PRESET_BYTES + 1)
        except OSError as exc:
            self.fail(f"{path}: cannot read ({exc.strerror or type(exc).__name__})")
        try:
            preset = parse_preset(data, name=path.name)
        except PresetError as exc:
            self.fail(f"{path}: {exc}")
        try:
            server = find_server(options["server"])
        except CommandError as exc:
            self.fail(str(exc))
        name = options["persona"].strip()
        persona = Persona.objects.filter(server=server, persona_nickname__iexact=name).first()
        if persona is None:
            self.fail(f"{server} has no persona named '{name}'.")
        actions.import_preset(persona, preset, actor=actions.Actor.system("manage.py import_preset"))
        sampling = ", ".join(f"{k} {v}" for k, v in preset.sampling.items() if v is not None) or "unchanged"
        notes = f" ({'; '.join(preset.notes)})" if preset.notes else ""
        self.stdout.write(
            f"Imported preset '{preset.name}' for {persona} in {server}: {len(preset.nodes)} prompt nodes, "
            f"sampling {sampling}{notes}."
        )
