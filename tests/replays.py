"""Whether a stored turn replays, from its snapshot alone, to the prompt its record holds (issue 28
item 1): the snapshot is validated and replayed on the empty scratch database (``replay_snapshot``),
which reads nothing of the live one, so a row the pipeline read and the snapshot lacks shows as a
difference."""

from __future__ import annotations

from typing import Any

from chatcontext.core.serialize import turn_output
from chatcontext.models import PromptRecord
from chatcontext.replay import replay_snapshot
from chatcontext.snapshot import validate_snapshot


def recorded_items(record: PromptRecord) -> list[dict[str, Any]]:
    """The record's context items as ``turn_output`` writes them (without the token estimates)."""
    return [{k: v for k, v in item.items() if k != "token_estimate"} for item in record.context_items]


def history_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """History entries without the persona's database id, which the scratch database numbers anew
    (a live database's sequence has moved on after other turns); the author's names stay compared."""
    return [{k: v for k, v in entry.items() if k != "author_persona_id"} for entry in entries]


def replayed_output(snapshot: dict[str, Any]) -> dict[str, Any]:
    output: dict[str, Any] = turn_output(replay_snapshot(validate_snapshot(snapshot), transcriber=None))
    return output


def assert_replays_to_its_record(record: PromptRecord) -> None:
    """The record's snapshot replays to its context items and its history entries."""
    replayed = replayed_output(record.snapshot)
    assert replayed["context_items"] == recorded_items(record)
    assert history_entries(replayed["simplified_messages"]) == history_entries(record.simplified_messages)
