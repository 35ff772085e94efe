"""A turn's context and its snapshot, taken together (turn-snapshot.md §1, issue 28 item 1).

The snapshot a prompt record is stored with is captured in the same database call as the context,
right after ``build_turn_context`` returns: before the model is asked, before any tool call or
delivery can write a row the snapshot would then hold and the prompt never showed. The runner makes
this one call per persona turn.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from django.db import transaction

from chatcontext.core.budget import ContextBudget
from chatcontext.core.transcripts import TranscriptCache
from chatcontext.core.transport import ChatTransport
from chatcontext.core.types import ChatTurn, ChatTurnContext, JSONDict
from chatcontext.personalization import PersonalizationCache
from chatcontext.pipeline import build_turn_context
from chatcontext.snapshot.capture import RecordingTransport, capture_snapshot
from chatcontext.stage_settings import stage_config

logger = logging.getLogger(__name__)


class TurnTransport(ChatTransport, RecordingTransport, Protocol):
    """One persona turn's view of a channel, which remembers what it read for the turn snapshot."""


@dataclass(frozen=True)
class CapturedTurn:
    """The turn's context and its snapshot (``{}`` when it could not be captured)."""

    ctx: ChatTurnContext
    snapshot: JSONDict


def build_captured_turn(
    turn: ChatTurn,
    transport: TurnTransport,
    *,
    transcripts: TranscriptCache,
    personalization: PersonalizationCache | None = None,
) -> CapturedTurn:
    """``build_turn_context`` and the snapshot of what it read. A failure to capture the snapshot
    never costs the turn (its record keeps ``{}``); the savepoint keeps a failed read from spoiling a
    caller's transaction (the playground's).

    The settings are read once: the snapshot keeps the very tunables the context was built with, not
    a second reading an operator's change could fall between (turn-snapshot.md §1, ``stage``)."""
    config = stage_config()
    ctx = build_turn_context(turn, transport, transcripts=transcripts, personalization=personalization, config=config)
    try:
        with transaction.atomic():
            snapshot = capture_snapshot(ctx, transport, config=config)
    except Exception:
        logger.exception("turn snapshot not captured")
        snapshot = {}
    return CapturedTurn(ctx, snapshot)


def with_budget(snapshot: JSONDict, budget: ContextBudget) -> JSONDict:
    """``snapshot`` with the context budget the turn was fitted to (``turn.budget``), which is known
    only once the offered tools are (their descriptions are reserved), after the capture. A snapshot
    that was not captured stays ``{}``."""
    if not snapshot:
        return snapshot
    return {**snapshot, "turn": {**snapshot["turn"], "budget": budget.as_json()}}
