"""`python manage.py replay_turn SNAPSHOT.json [--format json|text] [--record]` (turn-snapshot.md §2–§3)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandParser

from chatcontext.core.serialize import dumps_output, render_text, turn_output
from chatcontext.records.models import PromptRecord
from chatcontext.records.store import TurnRecord, record_turn
from chatcontext.replay import replay_snapshot
from chatcontext.snapshot import SnapshotError, load_snapshot_json
from chatcontext.snapshot.minimise import minimise_snapshot
from personas.models import Server

EPILOG = """\
output (--format json, the default): one JSON object with the keys
  context_items             the prompt in order: {role, tag, text, message_id, parts}
  simplified_messages       the history digest (build-context.md §1.5)
  message_id_map            ref_N / media_N -> Discord message id
  streaming_context         per-turn flags (build-context.md §9)
  participant_target_index  who the persona can name or ping (participants.md §6)
  diagnostics               counts only: no ids, names or message text
--format text prints the same prompt as one block per context item, headed by role and tag.

The snapshot's rows are loaded into a private scratch database and rolled back: nothing outlives
the command, and the live database neither shapes nor sees the replay. The same snapshot gives
byte-identical output on every run (with the same environment tunables).

exit status: 0 success; 2 bad input (unreadable file, malformed JSON or JSON nested deeper than 64
levels, schema violation such as a number out of range, a string with an unpaired surrogate or a
NUL, unknown persona_key or trigger_message_id) with one line on stderr naming the offending path, e.g.
  messages[3].author.id: required
1 internal error.

examples:
  python manage.py replay_turn examples/tidepool-workbench.snapshot.json
  python manage.py replay_turn turn.json --format text
  python manage.py replay_turn turn.json --record
"""


class Command(BaseCommand):
    help = (
        "Assemble the prompt of one persona turn from a turn snapshot (tomori-turn-snapshot/1 to /4) and print it. "
        "Nothing is written to the database unless --record is given."
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        parser.epilog = EPILOG
        return parser

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("snapshot", metavar="SNAPSHOT.json", help="the turn snapshot file to replay")
        parser.add_argument(
            "--format",
            choices=("json", "text"),
            default="json",
            help="json: the output document (default); text: the prompt as readable blocks",
        )
        parser.add_argument(
            "--record",
            action="store_true",
            help="also store the assembled turn as a prompt record (source 'replay') of the server with the "
            "snapshot's server.disc_id, which must exist in the database, with the snapshot minimised as "
            "every stored snapshot is (no privacy-FULL user's words, no memory the turn cannot load); nothing "
            "else is stored",
        )

    def fail(self, line: str, status: int = 2) -> NoReturn:
        self.stderr.write(" ".join(line.split()))
        sys.exit(status)

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["snapshot"])
        try:
            data = path.read_bytes()
        except OSError as exc:
            self.fail(f"{path}: cannot read ({exc.strerror or exc.__class__.__name__})")
        try:
            doc = load_snapshot_json(data)
        except SnapshotError as exc:
            self.fail(str(exc))
        if options["record"] and not Server.objects.filter(server_disc_id=doc["server"]["disc_id"]).exists():
            self.fail(
                "server.disc_id: no server with this id in the database; --record stores against a registered server"
            )
        try:
            ctx = replay_snapshot(doc)  # the snapshot's tunables (format 4), else the settings'
            output = turn_output(ctx)
            record = (
                record_turn(TurnRecord(ctx, snapshot=minimise_snapshot(doc), source=PromptRecord.Source.REPLAY))
                if options["record"]
                else None
            )
        except SnapshotError as exc:
            self.fail(str(exc))
        except Exception as exc:  # no traceback ever: one line naming the failure kind, never data
            self.fail(f"replay failed: internal error ({exc.__class__.__name__})", status=1)
        self.stdout.write(render_text(output) if options["format"] == "text" else dumps_output(output), ending="")
        if record is not None:
            self.stderr.write(f"stored prompt record {record.pk}")
