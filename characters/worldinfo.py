"""Lorebooks in SillyTavern's two shapes: a card's ``character_book`` (Character Card V2/V3 spec, with
SillyTavern's settings in each entry's ``extensions``) and a standalone World Info file (``entries``
keyed by uid, camelCase fields). Whatever an entry carries that is not mapped stays in its
``extensions``, so an exported book gives it back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from characters import fields
from characters.errors import CardError
from personas.character_data import (
    DEFAULT_SCAN_DEPTH,
    DEFAULT_TOKEN_BUDGET,
    LOGICS,
    JSONDict,
    LorebookData,
    LoreEntry,
    Position,
)

# SillyTavern's numbered positions: 0 ↑Char, 1 ↓Char, 4 @Depth. The author's-note and example-message
# positions (2, 3, 5, 6) and outlets (7) have no slot here: they go after the character, and the number
# is kept for the export.
_POSITION_NUMBERS: dict[int, Position] = {0: "before_char", 1: "after_char", 4: "at_depth"}
_CANONICAL_NUMBER = {position: number for number, position in _POSITION_NUMBERS.items()}
# Entry extensions SillyTavern writes that map to columns: dropped on import, written back on export.
_MAPPED_EXTENSIONS = frozenset(
    {"position", "depth", "selectiveLogic", "scan_depth", "case_sensitive", "match_whole_words"}
)
_WORLD_INFO_FIELDS = frozenset(
    {"uid", "key", "keysecondary", "comment", "content", "constant", "selective", "selectiveLogic", "order"}
    | {"position", "disable", "depth", "scanDepth", "caseSensitive", "matchWholeWords"}
)


def _position(number: int | None, default: Position) -> Position:
    if number is None:
        return default
    return _POSITION_NUMBERS.get(number, "after_char")


def _unmapped(raw: Mapping[str, Any], mapped: frozenset[str], position_key: str) -> JSONDict:
    """What an entry carries beyond its columns, with a position number that has no slot of its own."""
    kept = {k: v for k, v in raw.items() if k not in mapped}
    number = fields.integer(raw, position_key, None)
    if number is not None and number not in _POSITION_NUMBERS:
        kept["position"] = number
    return kept


def _logic(number: int | None) -> Any:
    return LOGICS[number] if number is not None and 0 <= number < len(LOGICS) else "and_any"


def _book_entry(raw: Mapping[str, Any], index: int) -> LoreEntry:
    ext = fields.mapping(raw, "extensions")
    named: Position = "after_char" if raw.get("position") == "after_char" else "before_char"
    case = fields.flag(raw, "case_sensitive")
    return LoreEntry(
        uid=fields.integer(raw, "id", index) or 0,
        content=fields.text(raw, "content"),
        keys=fields.texts(raw, "keys"),
        secondary_keys=fields.texts(raw, "secondary_keys"),
        comment=(fields.text(raw, "comment") or fields.text(raw, "name"))[:500],
        selective=bool(fields.flag(raw, "selective")),
        selective_logic=_logic(fields.integer(ext, "selectiveLogic", None)),
        constant=bool(fields.flag(raw, "constant")),
        enabled=fields.flag(raw, "enabled") is not False,
        insertion_order=fields.integer(raw, "insertion_order", 100) or 0,
        position=_position(fields.integer(ext, "position", None), named),
        depth=fields.natural(ext, "depth", 4),
        scan_depth=fields.optional_natural(ext, "scan_depth"),
        case_sensitive=case if case is not None else fields.flag(ext, "case_sensitive"),
        match_whole_words=fields.flag(ext, "match_whole_words"),
        extensions=_unmapped(ext, _MAPPED_EXTENSIONS, "position"),
    )


def _unique_uids(entries: list[LoreEntry]) -> tuple[LoreEntry, ...]:
    """A book's uids are unique in the database; a hostile book repeating one gets fresh ones."""
    seen: set[int] = set()
    out = []
    for entry in entries:
        uid = entry.uid
        while uid in seen:
            uid = max(seen) + 1
        seen.add(uid)
        out.append(entry if uid == entry.uid else LoreEntry(**{**entry.__dict__, "uid": uid}))
    return tuple(out)


def book_from_card(raw: Any) -> LorebookData | None:
    """A card's ``character_book``, or None when it has none."""
    if not isinstance(raw, dict) or not isinstance(raw.get("entries"), list):
        return None
    entries = [_book_entry(e, i) for i, e in enumerate(raw["entries"]) if isinstance(e, dict)]
    return LorebookData(
        entries=_unique_uids(entries),
        name=fields.text(raw, "name")[:200],
        description=fields.text(raw, "description"),
        scan_depth=fields.natural(raw, "scan_depth", DEFAULT_SCAN_DEPTH),
        token_budget=fields.natural(raw, "token_budget", DEFAULT_TOKEN_BUDGET),
        recursive_scanning=bool(fields.flag(raw, "recursive_scanning")),
        extensions=fields.mapping(raw, "extensions"),
    )


def _export_number(entry: LoreEntry) -> int:
    kept = fields.integer(entry.extensions, "position", None)
    if kept is not None and _position(kept, entry.position) == entry.position:
        return kept
    return _CANONICAL_NUMBER[entry.position]


def book_to_card(book: LorebookData) -> JSONDict:
    """The ``character_book`` of an exported card, with SillyTavern's settings in each entry's extensions."""
    entries = []
    for e in book.entries:
        ext: JSONDict = {
            **e.extensions,
            "position": _export_number(e),
            "depth": e.depth,
            "selectiveLogic": LOGICS.index(e.selective_logic),
            "scan_depth": e.scan_depth,
            "case_sensitive": e.case_sensitive,
            "match_whole_words": e.match_whole_words,
        }
        entries.append(
            {
                "id": e.uid,
                "keys": list(e.keys),
                "secondary_keys": list(e.secondary_keys),
                "comment": e.comment,
                "content": e.content,
                "constant": e.constant,
                "selective": e.selective,
                "insertion_order": e.insertion_order,
                "enabled": e.enabled,
                "position": "before_char" if e.position == "before_char" else "after_char",
                "case_sensitive": e.case_sensitive,
                "extensions": ext,
            }
        )
    return {
        "name": book.name,
        "description": book.description,
        "scan_depth": book.scan_depth,
        "token_budget": book.token_budget,
        "recursive_scanning": book.recursive_scanning,
        "extensions": book.extensions,
        "entries": entries,
    }


def _world_info_entry(raw: Mapping[str, Any], index: int) -> LoreEntry:
    return LoreEntry(
        uid=fields.integer(raw, "uid", index) or 0,
        content=fields.text(raw, "content"),
        keys=fields.texts(raw, "key"),
        secondary_keys=fields.texts(raw, "keysecondary"),
        comment=fields.text(raw, "comment")[:500],
        selective=bool(fields.flag(raw, "selective")),
        selective_logic=_logic(fields.integer(raw, "selectiveLogic", None)),
        constant=bool(fields.flag(raw, "constant")),
        enabled=not fields.flag(raw, "disable"),
        insertion_order=fields.integer(raw, "order", 100) or 0,
        position=_position(fields.integer(raw, "position", None), "before_char"),
        depth=fields.natural(raw, "depth", 4),
        scan_depth=fields.optional_natural(raw, "scanDepth"),
        case_sensitive=fields.flag(raw, "caseSensitive"),
        match_whole_words=fields.flag(raw, "matchWholeWords"),
        extensions=_unmapped(raw, _WORLD_INFO_FIELDS, "position"),
    )


def read_lorebook(doc: Any, *, name: str = "") -> LorebookData:
    """A standalone World Info file, or a ``character_book`` on its own; ``CardError`` otherwise."""
    if not isinstance(doc, dict):
        raise CardError("This JSON is not a lorebook: it has no entries.")
    raw = doc.get("entries")
    if isinstance(raw, dict):
        items = [e for e in raw.values() if isinstance(e, dict)]
        entries = [_world_info_entry(e, i) for i, e in enumerate(items)]
        return LorebookData(
            entries=_unique_uids(entries),
            name=(fields.text(doc, "name") or name)[:200],
            description=fields.text(doc, "description"),
        )
    book = book_from_card(doc)
    if book is None:
        raise CardError("This JSON is not a lorebook: it has no entries.")
    return book if book.name else LorebookData(**{**book.__dict__, "name": name[:200]})
