"""Turn-snapshot validation (turn-snapshot.md §3): strict JSON, the schema, and the cross-references
the schema cannot express. Every failure is one ``SnapshotError`` line naming the offending path
(``messages[3].author.id: required``)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from chatcontext.core.storable import UNSTORABLE
from chatcontext.core.types import (
    JSONDict,
)

FORMAT = "tomori-turn-snapshot/4"
# Version 1 lacks the fields version 2 added (persona sample dialogue, naming, sprites, preset and
# lorebook, the server's emojis and stickers, naming preferences, sprite messages); it still loads,
# as a turn without them. Version 2 lacks the turn's short-term note, history anchor and context
# budget (version 3); it loads as a turn without a note, starting its window afresh, uncut. Version 3
# lacks the stage's tunables (version 4, ``stage``); it replays under the replaying process's settings.
FORMATS = (FORMAT, "tomori-turn-snapshot/3", "tomori-turn-snapshot/2", "tomori-turn-snapshot/1")
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "turn-snapshot.schema.json"
ROOT_PATH = "$"
# json.loads and the schema validator recurse once per level of nesting, so a deeper document is
# refused before either sees it (the deepest a real snapshot gets, a forwarded Components-V2 tree, is
# about a dozen levels).
MAX_DEPTH = 64
# More digits than any bounded integer of the schema has (ids are strings).
MAX_INTEGER_DIGITS = 20


class SnapshotError(ValueError):
    """A snapshot that cannot be replayed; ``str()`` is one line: ``{path}: {problem}``."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path or ROOT_PATH
        self.problem = " ".join(problem.split())
        super().__init__(f"{self.path}: {self.problem}")


# ---------------------------------------------------------------------------------------------
# JSON and schema validation
# ---------------------------------------------------------------------------------------------


@functools.cache
def schema() -> JSONDict:
    loaded: JSONDict = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


@functools.cache
def _validator() -> Draft202012Validator:
    Draft202012Validator.check_schema(schema())
    return Draft202012Validator(schema())


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> JSONDict:
    # json.loads keeps the last of two equal keys; a silent overwrite would change the turn (§1).
    seen: JSONDict = {}
    for key, value in pairs:
        if key in seen:
            raise SnapshotError(ROOT_PATH, f"duplicate key {json.dumps(key)} in one object")
        seen[key] = value
    return seen


def _reject_constant(name: str) -> None:
    raise SnapshotError(ROOT_PATH, f"{name} is not valid JSON")


def _parse_int(text: str) -> int | float:
    """An integer longer than any the schema allows becomes a float (infinite when huge), which the
    schema then reports at its path as out of range; Python refuses to convert integers of more than
    4,300 digits at all."""
    return float(text) if len(text.lstrip("-")) > MAX_INTEGER_DIGITS else int(text)


_NESTING_TOKENS = re.compile(r'"(?:[^"\\]|\\[\s\S])*"|[\[\]{}]')


def _line_column(text: str, position: int) -> str:
    line = text.count("\n", 0, position) + 1
    column = position - text.rfind("\n", 0, position)
    return f"line {line}, column {column}"


def check_nesting(text: str) -> None:
    """Refuse JSON text nested deeper than MAX_DEPTH before it is parsed (brackets inside strings do
    not count). Malformed text is left to the parser."""
    depth = 0
    for token in _NESTING_TOKENS.finditer(text):
        char = text[token.start()]
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                where = _line_column(text, token.start())
                raise SnapshotError(ROOT_PATH, f"nested deeper than {MAX_DEPTH} levels at {where}")
        elif char in "]}":
            depth -= 1


def parse_json(text: str | bytes) -> Any:
    """The JSON value of ``text``; malformed or too deeply nested input → SnapshotError naming line
    and column."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SnapshotError(ROOT_PATH, f"not UTF-8 text (byte {exc.start})") from None
    check_nesting(text)
    try:
        return json.loads(
            text, object_pairs_hook=_reject_duplicate_keys, parse_constant=_reject_constant, parse_int=_parse_int
        )
    except json.JSONDecodeError as exc:
        raise SnapshotError(ROOT_PATH, f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None


def _unstorable(char: str) -> str:
    if char == "\x00":
        return "NUL character U+0000 (no database stores it in text)"
    return f"unpaired surrogate U+{ord(char):04X} (not Unicode text)"


def check_values(doc: Any) -> None:
    """What JSON allows but no replay can use, in any value (the schema cannot say it): nesting deeper
    than MAX_DEPTH (for a document that did not come through ``parse_json``), and strings holding an
    unpaired surrogate or a NUL. Keys count as strings; the first offender in document order is named
    by its path."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(doc, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict | list) and len(path) >= MAX_DEPTH:
            raise SnapshotError(format_path(path), f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, str):
            if (bad := UNSTORABLE.search(value)) is not None:
                raise SnapshotError(format_path(path), _unstorable(bad.group()))
        elif isinstance(value, dict):
            for key in value:
                if (bad := UNSTORABLE.search(key)) is not None:
                    raise SnapshotError(format_path(path), f"in a key: {_unstorable(bad.group())}")
            stack.extend((item, (*path, key)) for key, item in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((item, (*path, i)) for i, item in reversed(list(enumerate(value))))


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def format_path(parts: Iterable[str | int]) -> str:
    """``["messages", 3, "author", "id"]`` → ``messages[3].author.id``. A key that is not a plain name
    (an unknown key can be anything, a line break included) is written as a JSON string in brackets,
    ``server["a b\\n"]``, so the error stays one line and says exactly which key."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _PLAIN_KEY.fullmatch(part):
            out += f"[{json.dumps(part)}]"
        else:
            out += f".{part}" if out else part
    return out or ROOT_PATH


_PATTERN_PHRASES = {
    "^[0-9]{1,20}(?!\\n)$": "must be a string of 1 to 20 ASCII digits (a Discord id)",
    "^([0-9]{1,20}|@[^:\\s]+:\\S+)(?!\\n)$": "must be a Discord id (1 to 20 ASCII digits) or a Matrix id (@user:host)",
}


def _type_names(value: Any) -> str:
    names = value if isinstance(value, list) else [value]
    return " or ".join(str(n) for n in names)


def _describe(error: ValidationError, *, nullable: bool = False) -> tuple[list[str | int], str]:
    path: list[str | int] = list(error.absolute_path)
    kind = error.validator
    value = error.validator_value
    or_null = " or null" if nullable else ""
    if kind == "anyOf" and error.context:
        # Optional keys are `anyOf: [X, null]`: report what is wrong against X, not against null.
        branches = [c for c in error.context if not (c.validator == "type" and c.validator_value == "null")]
        if branches:
            return _describe(best_match(branches), nullable=True)
    if kind == "required":
        missing = sorted(set(value) - set(error.instance))
        return [*path, missing[0] if missing else "?"], "required"
    if kind == "additionalProperties":
        allowed = set(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - allowed)
        return [*path, extra[0] if extra else "?"], "unknown key"
    if kind == "type":
        return path, f"expected {_type_names(value)}{or_null}"
    if kind == "const":
        return path, f"must be {json.dumps(value)}"
    if kind == "enum":
        return path, "must be one of " + ", ".join(json.dumps(v) for v in value) + or_null
    if kind == "pattern":
        return path, _PATTERN_PHRASES.get(str(value), f"must match {value}")
    if kind == "minimum":
        return path, f"must be at least {value}"
    if kind == "maximum":
        return path, f"must be at most {value}"
    if kind in ("minItems", "minLength"):
        return path, "must not be empty"
    if kind == "multipleOf":
        return path, f"must be a multiple of {value}"
    return path, error.message


def validate_schema(doc: Any) -> None:
    """Raise SnapshotError for the most relevant schema violation of ``doc``, if any."""
    error = best_match(_validator().iter_errors(doc))
    if error is not None:
        path, problem = _describe(error)
        raise SnapshotError(format_path(path), problem)


def _check_unique(items: Sequence[JSONDict], field: str, where: str, what: str, *, fold: bool = False) -> None:
    seen: set[Any] = set()
    for i, item in enumerate(items):
        value = item.get(field)
        key = value.strip().lower() if fold and isinstance(value, str) else value
        if key in seen:
            raise SnapshotError(f"{where}[{i}].{field}", f"duplicate {what} {json.dumps(value)}")
        seen.add(key)


def doc_items(doc: Mapping[str, Any], key: str) -> list[JSONDict]:
    return list(doc.get(key) or [])


def check_references(doc: Mapping[str, Any]) -> None:
    """Cross-references the schema cannot express: persona keys, the trigger message, owners of
    memories and transcripts, and the uniqueness the database enforces (turn-snapshot.md §3)."""
    personas = doc_items(doc, "personas")
    _check_unique(personas, "key", "personas", "persona key")
    _check_unique(personas, "persona_nickname", "personas", "persona nickname", fold=True)
    mains = [i for i, p in enumerate(personas) if not p["is_alter"]]
    if len(mains) > 1:
        raise SnapshotError(f"personas[{mains[1]}].is_alter", "a server has exactly one main persona")
    keys = {p["key"] for p in personas}

    def known_key(path: str, key: str | None) -> None:
        if key is not None and key not in keys:
            raise SnapshotError(path, f"unknown persona key {json.dumps(key)}")

    turn = doc["turn"]
    known_key("turn.persona_key", turn["persona_key"])
    for i, key in enumerate(turn.get("co_responder_keys") or []):
        known_key(f"turn.co_responder_keys[{i}]", key)
    for i, reminder in enumerate(doc_items(doc, "reminders")):
        known_key(f"reminders[{i}].persona_key", reminder.get("persona_key"))
    for i, block in enumerate(doc_items(doc, "persona_user_blocks")):
        known_key(f"persona_user_blocks[{i}].persona_key", block.get("persona_key"))
    for i, sprite in enumerate(doc_items(doc, "sprite_messages")):
        known_key(f"sprite_messages[{i}].persona_key", sprite["persona_key"])
    _check_unique(doc_items(doc, "sprite_messages"), "message_id", "sprite_messages", "message id")
    server = doc["server"]
    _check_unique(server.get("emojis") or [], "id", "server.emojis", "emoji id")
    _check_unique(server.get("stickers") or [], "id", "server.stickers", "sticker id")

    messages = doc_items(doc, "messages")
    _check_unique(messages, "id", "messages", "message id")
    if turn["trigger_message_id"] not in {msg["id"] for msg in messages}:
        raise SnapshotError(
            "turn.trigger_message_id", f"no message with id {json.dumps(turn['trigger_message_id'])} in messages"
        )

    users = doc_items(doc, "users")
    _check_unique(users, "disc_id", "users", "user id")
    _check_unique(doc_items(doc, "members"), "user_disc_id", "members", "member id")
    _check_unique(doc_items(doc, "known_users"), "user_disc_id", "known_users", "user id")
    member_ids = {mem["user_disc_id"] for mem in doc_items(doc, "members")}
    _check_unique(doc_items(doc, "blacklist"), "user_disc_id", "blacklist", "user id")
    reminders_with_id = [r for r in doc_items(doc, "reminders") if r.get("id") is not None]
    _check_unique(reminders_with_id, "id", "reminders", "reminder id")
    memories_with_id = [pm for pm in doc_items(doc, "personal_memories") if pm.get("id") is not None]
    _check_unique(memories_with_id, "id", "personal_memories", "memory id")
    user_ids = {u["disc_id"] for u in users}
    for i, memory in enumerate(doc_items(doc, "personal_memories")):
        if memory["user_disc_id"] not in user_ids:
            raise SnapshotError(f"personal_memories[{i}].user_disc_id", "no entry in users has this id")
    preferences: set[tuple[str, int]] = set()
    for i, preference in enumerate(doc_items(doc, "naming_preferences")):
        pair = (preference["user_disc_id"], preference["persona_lineage_id"])
        if pair[0] not in user_ids:
            raise SnapshotError(f"naming_preferences[{i}].user_disc_id", "no entry in users has this id")
        if pair in preferences:
            raise SnapshotError(f"naming_preferences[{i}].persona_lineage_id", "duplicate preference of this user")
        preferences.add(pair)
    for i, known in enumerate(doc_items(doc, "known_users")):
        if known["user_disc_id"] not in user_ids:
            raise SnapshotError(f"known_users[{i}].user_disc_id", "no entry in users has this id")
        if known["user_disc_id"] in member_ids:
            raise SnapshotError(f"known_users[{i}].user_disc_id", "a member already has this id")
    for i, active in enumerate(doc_items(doc, "server_activity")):
        if active["user_disc_id"] not in user_ids:
            raise SnapshotError(f"server_activity[{i}].user_disc_id", "no entry in users has this id")
    attachment_ids = {a["id"] for msg in messages for a in msg.get("attachments") or []}
    for i, transcript in enumerate(doc_items(doc, "voice_transcripts")):
        if transcript["attachment_id"] not in attachment_ids:
            raise SnapshotError(f"voice_transcripts[{i}].attachment_id", "no message carries this attachment")


def validate_snapshot(doc: Any) -> JSONDict:
    """Values, schema and references; returns the document (a dict) when it is replayable."""
    check_values(doc)
    validate_schema(doc)
    check_references(doc)
    valid: JSONDict = doc
    return valid


def load_snapshot_json(text: str | bytes) -> JSONDict:
    """Parse and validate a snapshot file's text."""
    return validate_snapshot(parse_json(text))
