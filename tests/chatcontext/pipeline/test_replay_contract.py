"""Every malformed snapshot is refused with one line naming its path, or it replays (issue 26 item 13).

A ``reference`` without ``"type"`` passed validation and crashed the replay with ``internal error
(KeyError)``, exit 1: the schema did not require a key the parser reads. The checks here are pure
(validation, then the parse the replay starts with), so they run every key of every shipped
snapshot and a property over mutated ones; the command's exit status is checked on one case."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chatcontext.core.snapshot_format import ROOT_PATH, format_path, validate_schema
from chatcontext.snapshot import SnapshotError, parse_members, parse_messages, transcript_cache, validate_snapshot
from tests.chatcontext.pipeline.replay_cli import run, write
from tests.markers import BOTH
from tests.paths import EXAMPLE, EXAMPLES

GOLDEN = Path(__file__).resolve().parents[1] / "snapshot" / "cases"
SHIPPED = sorted(EXAMPLES.glob("*.snapshot.json")) + sorted(GOLDEN.glob("*.snapshot.json"))
DOCS = [json.loads(path.read_text(encoding="utf-8")) for path in SHIPPED]
Path_ = tuple[str | int, ...]


def key_paths(value: Any, path: Path_ = ()) -> Iterator[Path_]:
    """The path of every object key in ``value``, depth first."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key)
            yield from key_paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from key_paths(item, (*path, i))


def value_paths(value: Any, path: Path_ = ()) -> Iterator[Path_]:
    """The path of every value below the root (object members and list items)."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield (*path, key)
        yield from value_paths(item, (*path, key))


def parent_of(doc: Any, path: Path_) -> Any:
    for part in path[:-1]:
        doc = doc[part]
    return doc


def outcome(doc: Any) -> str | None:
    """None when ``doc`` validates and parses; else the one error line (anything else raised fails)."""
    try:
        valid = validate_snapshot(doc)
    except SnapshotError as exc:
        line = str(exc)
        # The document is an object: only a bad key of the root itself is reported at the root.
        assert "\n" not in line and (exc.path != ROOT_PATH or exc.problem.startswith("in a key")), line
        return line
    parse_messages(valid)
    parse_members(valid)
    transcript_cache(valid)
    return None


def distinct_deletions() -> Iterator[tuple[dict[str, Any], Path_]]:
    """Each key of the shipped snapshots deleted once (a key of a list item counts once per list)."""
    seen: set[tuple[str | int, ...]] = set()
    for doc in DOCS:
        for path in key_paths(doc):
            shape = tuple("[]" if isinstance(p, int) else p for p in path)
            if shape not in seen:
                seen.add(shape)
                yield doc, path


def test_deleting_any_key_names_that_key_or_still_replays() -> None:
    checked = 0
    for doc, path in distinct_deletions():
        mutated = copy.deepcopy(doc)
        del parent_of(mutated, path)[path[-1]]
        line = outcome(mutated)
        if line is not None and line != f"{format_path(path)}: required":
            validate_schema(mutated)  # an optional key whose absence breaks a cross-reference (check_references)
        checked += 1
    assert checked > 100


def test_a_reference_needs_its_type() -> None:
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc["messages"][1]["reference"] = {"message_id": doc["messages"][0]["id"]}
    assert outcome(doc) == "messages[1].reference.type: required"


def test_an_unknown_key_with_a_line_break_is_named_on_one_line() -> None:
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc["server"]["a\nb"] = 1
    assert outcome(doc) == 'server["a\\nb"]: unknown key'


@BOTH
def test_replay_turn_exits_2_naming_the_reference_type(tmp_path: Path) -> None:
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc["messages"][1]["reference"] = {"message_id": doc["messages"][0]["id"]}
    assert run(write(tmp_path, doc)) == (2, "", "messages[1].reference.type: required\n")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def mutated_snapshots(draw: st.DrawFn) -> dict[str, Any]:
    """A shipped snapshot with one to three values replaced, deleted or given a sibling key."""
    doc = copy.deepcopy(draw(st.sampled_from(DOCS)))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(list(value_paths(doc))))
        parent = parent_of(doc, path)
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(JSON_VALUES)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(JSON_VALUES)
    return doc


@given(mutated_snapshots())
def test_a_mutated_snapshot_is_refused_with_a_path_line_or_replays(doc: dict[str, Any]) -> None:
    outcome(doc)
