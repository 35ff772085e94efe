"""`python manage.py minimise_snapshots [--dry-run]`: bring the snapshots of stored prompt records down
to what their turn could show (``chatcontext.snapshot.minimise``), as snapshots are stored since issue 13.

Records stored before kept everything their turn read: a privacy-FULL user's words and memories,
other lineages' memories, a blacklisted user's memories. Each record's snapshot is replaced only when
the minimised document replays to exactly the output of the stored one (the whole output document,
byte for byte, on the scratch database); otherwise, or when the stored snapshot no longer validates,
the record is left as it is and counted, so nothing a moderator can replay today is lost. Run it
once after upgrading; it is idempotent.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from chatcontext.core.config import StageConfig
from chatcontext.core.serialize import dumps_output, turn_output
from chatcontext.core.snapshot_parse import snapshot_stage
from chatcontext.core.types import JSONDict
from chatcontext.records.models import PromptRecord
from chatcontext.replay import replay_snapshot
from chatcontext.snapshot import SnapshotError, validate_snapshot
from chatcontext.snapshot.minimise import minimise_snapshot

MINIMISED, MINIMAL = "minimised", "already minimal"
DIFFERS, UNREPLAYABLE = "kept: the replay would differ", "kept: not replayable"


def _replayed(doc: JSONDict) -> str:
    # The turn's own tunables (format 4), else the defaults, and no speech-to-text: both documents are
    # assembled the same way, whatever the environment.
    config = snapshot_stage(doc) or StageConfig()
    return dumps_output(turn_output(replay_snapshot(doc, config=config, transcriber=None)))


def minimise_record(record: PromptRecord, *, write: bool) -> str:
    """The outcome for one record; with ``write`` its snapshot is replaced when that is safe."""
    try:
        stored = validate_snapshot(record.snapshot)
    except SnapshotError:
        return UNREPLAYABLE
    minimised = minimise_snapshot(stored)
    if minimised == stored:
        return MINIMAL
    try:
        same = _replayed(stored) == _replayed(validate_snapshot(minimised))
    except Exception:  # one record that cannot be replayed must not stop the others; it stays as stored
        return UNREPLAYABLE
    if not same:
        return DIFFERS
    if write:
        PromptRecord.objects.filter(pk=record.pk).update(snapshot=minimised)
    return MINIMISED


class Command(BaseCommand):
    help = (
        "Minimise the snapshots of stored prompt records to what their turn could show (no privacy-FULL "
        "user's words, no memory the persona cannot load), keeping every record whose replay would change."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="count what would change, write nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        write = not options["dry_run"]
        outcomes: Counter[str] = Counter()
        records = PromptRecord.objects.exclude(snapshot={}).only("id", "snapshot").order_by("id")
        for record in records.iterator(chunk_size=100):
            outcomes[minimise_record(record, write=write)] += 1
        verb = "" if write else " (dry run: nothing written)"
        summary = ", ".join(f"{outcomes[k]} {k}" for k in (MINIMISED, MINIMAL, DIFFERS, UNREPLAYABLE))
        self.stdout.write(f"{sum(outcomes.values())} records with a snapshot: {summary}{verb}")
