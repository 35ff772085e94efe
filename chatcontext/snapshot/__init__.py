"""Turn snapshots (turn-snapshot.md): validation, parsing into value objects, loading rows, capture.

A snapshot is one JSON document holding everything one persona turn needs. This package

- validates it against ``schemas/turn-snapshot.schema.json`` and the cross-references the schema
  cannot express, raising ``SnapshotError`` whose text is ONE line naming the offending path
  (``messages[3].author.id: required``; turn-snapshot.md §3; ``validation``);
- parses its Discord-shaped parts into ``chatcontext.core.types`` (messages, members; ``parse``) and its
  ``stage`` into the ``StageConfig`` the turn was built with (format 4);
- writes its database-shaped parts (server, settings, personas, users, memories, reminders,
  blacklist, blocks) with ``load_snapshot_rows`` (``load``) so the ordinary batched loaders read them. Callers
  run that inside ``transaction.atomic()`` and roll back (``chatcontext.replay`` does it on a
  private scratch database);
- builds the ``ChatTurn``, the in-memory transport and the preloaded transcript cache of a turn
  (``turn``);
- captures the snapshot a turn is stored with (``capture``, right after the context is built:
  ``chatcontext.captured``), minimised to what the turn could show (``minimise``).

Reading is deterministic by construction: no clock (``now_ms`` comes from the document), no randomness, and
rows are written in document order.

The reading side is importable from the package itself (``from chatcontext.snapshot import FORMAT``).
"""

from chatcontext.core.snapshot_format import (
    FORMAT,
    MAX_DEPTH,
    SnapshotError,
    check_nesting,
    check_references,
    check_values,
    load_snapshot_json,
    parse_json,
    schema,
    validate_schema,
    validate_snapshot,
)
from chatcontext.core.snapshot_parse import (
    parse_member,
    parse_members,
    parse_message,
    parse_messages,
    snapshot_stage,
    transcript_cache,
)
from chatcontext.snapshot.load import LoadedSnapshot, load_snapshot_rows
from chatcontext.snapshot.turn import (
    SnapshotTurn,
    bot_author,
    snapshot_chat_turn,
    snapshot_personas,
    snapshot_transport,
    snapshot_turn,
)

__all__ = [
    "FORMAT",
    "MAX_DEPTH",
    "LoadedSnapshot",
    "SnapshotError",
    "SnapshotTurn",
    "bot_author",
    "check_nesting",
    "check_references",
    "check_values",
    "load_snapshot_json",
    "load_snapshot_rows",
    "parse_json",
    "parse_member",
    "parse_members",
    "parse_message",
    "parse_messages",
    "schema",
    "snapshot_chat_turn",
    "snapshot_personas",
    "snapshot_stage",
    "snapshot_transport",
    "snapshot_turn",
    "transcript_cache",
    "validate_schema",
    "validate_snapshot",
]
