"""Replaying a turn snapshot (turn-snapshot.md §3): ``replay_turn``, the inspector and the
playground assemble a snapshot's turn with ``replay_snapshot`` on the scratch database of
``chatcontext.replay_database``. Only the ``--record`` prompt record is written, afterwards, to the live
database (``chatcontext.records.store``).
"""

from __future__ import annotations

from chatcontext.core.budget import fit_context
from chatcontext.core.config import StageConfig
from chatcontext.core.snapshot_parse import snapshot_stage
from chatcontext.core.types import Attachment, ChatTurnContext, DiscordMessage, JSONDict
from chatcontext.core.voice_prehydration import Transcriber
from chatcontext.pipeline import build_turn_context
from chatcontext.replay_database import replay_database
from chatcontext.snapshot import (
    load_snapshot_rows,
    snapshot_turn,
)


def local_file_transcriber(attachment: Attachment, message: DiscordMessage) -> str | None:
    """turn-snapshot.md §1: audio without a known transcript is transcribed by the real
    speech-to-text path when its url is a local `file://` path, and gets none otherwise."""
    if not attachment.url.startswith("file://"):
        return None
    from chatcontext.voice.engine.fetch import fetch_audio
    from chatcontext.voice.engine.transcribe import default_transcriber

    return default_transcriber().transcribe(fetch_audio(attachment.url)).text


def _constant_clock() -> float:
    return 0.0


def replay_snapshot(
    doc: JSONDict, *, config: StageConfig | None = None, transcriber: Transcriber | None = local_file_transcriber
) -> ChatTurnContext:
    """Assemble the turn a validated snapshot describes, on the scratch database, and roll back.

    The stage's tunables are ``config`` when a caller gives one, else the snapshot's own (``stage``,
    format 4), else (versions 1 to 3) the process's settings. Durations in the diagnostics read a
    constant clock, so the same snapshot (and environment) always gives the same output. The
    returned context is plain data that outlives the rollback.
    """
    with replay_database():
        loaded = load_snapshot_rows(doc)
        inputs = snapshot_turn(doc, loaded)
        ctx = build_turn_context(
            inputs.turn,
            inputs.transport,
            transcripts=inputs.transcripts,
            transcriber=transcriber,
            config=config or snapshot_stage(doc),
            clock=_constant_clock,
        )
    if inputs.budget is not None:  # the turn's prompt was fitted to its endpoint's budget (BC13)
        fit_context(ctx, inputs.budget)
    return ctx
