"""The turn-snapshot JSON Schema and the one-line errors of turn-snapshot.md §1 and §3."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from chatcontext.snapshot import (
    MAX_DEPTH,
    SnapshotError,
    check_values,
    load_snapshot_json,
    parse_json,
    schema,
    validate_snapshot,
)
from tests.paths import EXAMPLE, EXAMPLES

GOLDEN = Path(__file__).resolve().parent / "cases"


def example() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return doc


PRIYA = example()["users"][0]["disc_id"]
FIRST_MESSAGE = example()["messages"][0]["id"]


# A preset node and a lorebook entry as the capture writes them (chatcontext.snapshot.capture).
NODE = {"identifier": "main", "marker": True, "content": "", "role": "system", "enabled": True}
ENTRY = {
    "book_id": 3, "uid": 1, "content": "The lighthouse is dark.", "keys": ["lighthouse"], "secondary_keys": [],
    "comment": "", "selective": False, "selective_logic": "and_any", "constant": False, "insertion_order": 100,
    "position": "before_char", "depth": 4, "scan_depth": 2, "case_sensitive": False, "match_whole_words": True,
    "token_budget": 2048,
}  # fmt: skip


def error_of(doc: Any) -> str:
    with pytest.raises(SnapshotError) as info:
        validate_snapshot(doc)
    text = str(info.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize(
    "path", sorted(EXAMPLES.glob("*.snapshot.json")) + sorted(GOLDEN.glob("*.snapshot.json")), ids=str
)
def test_every_shipped_snapshot_is_valid(path: Path) -> None:
    doc = load_snapshot_json(path.read_bytes())
    assert doc["format"] == "tomori-turn-snapshot/1"


def test_missing_key_names_its_full_path() -> None:
    doc = example()
    del doc["messages"][3]["author"]["id"]
    assert error_of(doc) == "messages[3].author.id: required"


def test_missing_top_level_key() -> None:
    doc = example()
    del doc["turn"]
    assert error_of(doc) == "turn: required"


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d["messages"][3]["author"].update(nick="x"), "messages[3].author.nick: unknown key"),
        (lambda d: d.update(now="x"), "now: unknown key"),
        (lambda d: d["server"]["settings"].update(fetch_limit=5), "server.settings.fetch_limit: unknown key"),
        (
            lambda d: d["messages"][2]["reactions"][0]["emoji"].update(animated=True),
            "messages[2].reactions[0].emoji.animated: unknown key",
        ),
        (
            lambda d: d["turn"].update(reminder={"purpose": "x", "user_disc_id": PRIYA, "user": PRIYA}),
            "turn.reminder.user: unknown key",
        ),
        (
            lambda d: d["messages"][0].update(components=[{"type": 17, "colour": 1}]),
            "messages[0].components[0].colour: unknown key",
        ),
        (
            lambda d: d["messages"][0].update(
                components=[{"type": 17, "components": [{"type": 10, "content": "x", "markdown": True}]}]
            ),
            "messages[0].components[0].components[0].markdown: unknown key",
        ),
    ],
)
def test_unknown_keys_are_errors_everywhere(mutate: Any, expected: str) -> None:
    doc = example()
    mutate(doc)
    assert error_of(doc) == expected


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d.update(now_ms="soon"), "now_ms: expected integer"),
        (lambda d: d["users"][0].update(timezone_offset="9"), "users[0].timezone_offset: expected integer or null"),
        (lambda d: d["users"][1].update(privacy_level=3), "users[1].privacy_level: must be one of 0, 1, 2 or null"),
        (
            lambda d: d.update(format="tomori-turn-snapshot/5"),
            'format: must be one of "tomori-turn-snapshot/4", "tomori-turn-snapshot/3", "tomori-turn-snapshot/2", '
            '"tomori-turn-snapshot/1"',
        ),
        # Format 4's stage tunables are as strict as the rest: a misspelt tunable cannot pass for a default.
        (lambda d: d.update(stage={"history_window_steps": 20}), "stage.history_window_steps: unknown key"),
        (
            lambda d: d.update(stage={"reaction_max_reactions_per_message": 0}),
            "stage.reaction_max_reactions_per_message: must be at least 1",
        ),
        (lambda d: d.update(stage={"default_botname": ""}), "stage.default_botname: must not be empty"),
        (
            lambda d: d["messages"][0].update(id="msg-1"),
            "messages[0].id: must be a string of 1 to 20 ASCII digits (a Discord id)",
        ),
        (lambda d: d["messages"][0]["author"].update(id=11), "messages[0].author.id: expected string"),
        (lambda d: d.update(personas=[]), "personas: must not be empty"),
        (
            lambda d: d["personas"][0].update(persona_lineage_id=10),
            "personas[0].persona_lineage_id: must be at least 10000",
        ),
        (lambda d: d.update(messages={}), "messages: expected array"),
        (
            lambda d: d["personas"][0].update(preset=[NODE | {"role": "assistant"}]),
            'personas[0].preset[0].role: must be one of "system", "user", "model"',
        ),
        (
            lambda d: d["personas"][0].update(lorebook=[ENTRY | {"position": "everywhere"}]),
            'personas[0].lorebook[0].position: must be one of "before_char", "after_char", "at_depth"',
        ),
        (
            lambda d: d["personas"][0].update(lorebook=[ENTRY | {"scan_depth": -1}]),
            "personas[0].lorebook[0].scan_depth: must be at least 0",
        ),
        (
            lambda d: d["personas"][0].update(lorebook=[{k: v for k, v in ENTRY.items() if k != "keys"}]),
            "personas[0].lorebook[0].keys: required",
        ),
        (
            lambda d: d["personas"][0].update(lorebook=[ENTRY | {"probability": 50}]),
            "personas[0].lorebook[0].probability: unknown key",
        ),
    ],
)
def test_wrong_values_name_the_path_and_the_expectation(mutate: Any, expected: str) -> None:
    doc = example()
    mutate(doc)
    assert error_of(doc) == expected


def test_root_must_be_an_object() -> None:
    assert error_of([1, 2]) == "$: expected object"


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d["turn"].update(persona_key="ellen"), 'turn.persona_key: unknown persona key "ellen"'),
        (
            lambda d: d["turn"].update(trigger_message_id="7777"),
            'turn.trigger_message_id: no message with id "7777" in messages',
        ),
        (
            lambda d: d["turn"].update(co_responder_keys=["sprocket", "zed"]),
            'turn.co_responder_keys[1]: unknown persona key "zed"',
        ),
        (lambda d: d["reminders"][1].update(persona_key="zed"), 'reminders[1].persona_key: unknown persona key "zed"'),
        (
            lambda d: d["persona_user_blocks"].append(
                {"persona_key": "zed", "user_disc_id": PRIYA, "expires_at_ms": 1}
            ),
            'persona_user_blocks[0].persona_key: unknown persona key "zed"',
        ),
        (lambda d: d["personas"][1].update(key="tomori"), 'personas[1].key: duplicate persona key "tomori"'),
        (
            lambda d: d["personas"][1].update(persona_nickname=" TOMORI"),
            'personas[1].persona_nickname: duplicate persona nickname " TOMORI"',
        ),
        (
            lambda d: d["personas"][1].update(is_alter=False),
            "personas[1].is_alter: a server has exactly one main persona",
        ),
        (
            lambda d: d["messages"][4].update(id=FIRST_MESSAGE),
            f'messages[4].id: duplicate message id "{FIRST_MESSAGE}"',
        ),
        (lambda d: d["users"][2].update(disc_id=PRIYA), f'users[2].disc_id: duplicate user id "{PRIYA}"'),
        (
            lambda d: d["personal_memories"][0].update(user_disc_id="99"),
            "personal_memories[0].user_disc_id: no entry in users has this id",
        ),
        # D-16's known_users (format 4): a user of the document, never a member too (the replay writes
        # a bare member row for each, and one member row per user).
        (
            lambda d: d.update(known_users=[{"user_disc_id": "99"}]),
            "known_users[0].user_disc_id: no entry in users has this id",
        ),
        (
            lambda d: d.update(known_users=[{"user_disc_id": PRIYA}]),
            "known_users[0].user_disc_id: a member already has this id",
        ),
        (
            lambda d: [pm.update(id=7) for pm in d["personal_memories"][:2]],
            "personal_memories[1].id: duplicate memory id 7",
        ),
        (
            lambda d: d["voice_transcripts"][0].update(attachment_id="1"),
            "voice_transcripts[0].attachment_id: no message carries this attachment",
        ),
    ],
)
def test_references_that_do_not_resolve_name_the_path(mutate: Any, expected: str) -> None:
    doc = example()
    mutate(doc)
    assert error_of(doc) == expected


def test_malformed_json_names_line_and_column() -> None:
    text = EXAMPLE.read_text(encoding="utf-8").replace('"now_ms": 1773520800000,', '"now_ms": 1773520800000', 1)
    with pytest.raises(SnapshotError) as info:
        parse_json(text)
    assert str(info.value) == "$: malformed JSON at line 4, column 2: Expecting ',' delimiter"


def test_duplicate_keys_and_non_json_constants_are_rejected() -> None:
    with pytest.raises(SnapshotError, match=r'^\$: duplicate key "now_ms" in one object$'):
        parse_json('{"now_ms": 1, "now_ms": 2}')
    with pytest.raises(SnapshotError, match=r"^\$: NaN is not valid JSON$"):
        parse_json('{"now_ms": NaN}')
    with pytest.raises(SnapshotError, match=r"^\$: not UTF-8 text"):
        parse_json(b'{"a": "\xff"}')


def test_nulls_are_accepted_for_optional_keys() -> None:
    doc = example()
    for key in ("users", "members", "personal_memories", "server_memories", "reminders", "blacklist"):
        doc[key] = None
    doc["personal_memories"] = None
    doc["voice_transcripts"] = None
    doc["server"]["settings"] = None
    doc["messages"][0]["reactions"] = None
    assert validate_snapshot(copy.deepcopy(doc)) == doc


def _numbers(node: Any, path: str = "$") -> list[tuple[str, dict[str, Any]]]:
    if isinstance(node, list):
        return [found for i, item in enumerate(node) for found in _numbers(item, f"{path}/{i}")]
    if not isinstance(node, dict):
        return []
    kind = node.get("type")  # a dict where "type" is a property name
    types = kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []
    own = [(path, node)] if {"integer", "number"} & set(types) else []
    return own + [found for key, item in node.items() for found in _numbers(item, f"{path}/{key}")]


def test_every_number_of_the_schema_is_bounded() -> None:
    """An unbounded integer overflows a datetime (times), SQLite's 64 bits (lineages) or the host's
    int conversion; each number of the format has a range the pipeline can use (turn-snapshot.md §3:
    bad input is a one-line error, never an internal one)."""
    numbers = _numbers(schema())
    assert len(numbers) > 20
    unbounded = [path for path, node in numbers if not {"minimum", "maximum"} <= node.keys()]
    assert unbounded == []
    assert schema()["$defs"]["ms"]["maximum"] == 253370764800000  # 9999-01-01T00:00:00Z


@pytest.mark.parametrize("depth", [63, 64, 65])
def test_in_memory_documents_are_bounded_in_depth_too(depth: int) -> None:
    """A document that did not come from text (a stored record's snapshot) is checked before the
    recursive schema validation as well; the bound is the text parser's."""
    nested: Any = "x"
    for _ in range(depth):
        nested = [nested]
    if depth <= MAX_DEPTH:
        check_values(nested)
        parse_json(json.dumps(nested))
    else:
        with pytest.raises(SnapshotError, match=r"^\[0\]\[0\].*: nested deeper than 64 levels$"):
            check_values(nested)
        with pytest.raises(SnapshotError, match=r"^\$: nested deeper than 64 levels at line 1, column 65$"):
            parse_json(json.dumps(nested))
