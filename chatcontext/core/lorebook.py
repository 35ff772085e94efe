"""Lorebooks (world info): which entries of a persona's books fire on the scanned history, and where
their text enters the prompt (README "Bringing characters", "Lorebooks").

Rules as SillyTavern documents them: an entry fires when one of its keys appears in one of the newest
``scan_depth`` history messages, case-insensitively unless the entry says otherwise, and as a whole
word (a single-word key must not be part of a longer word; a key of several words matches as written)
unless ``match_whole_words`` is off. A selective entry also needs its secondary keys per its logic
(AND ANY, AND ALL, NOT ANY, NOT ALL). Constant entries always fire. Per book, fired entries are kept
by the token budget, constant ones first, then higher ``insertion_order``; once one does not fit, no
further one is added. Keys are text, never regular expressions (a hostile book's pattern could hang
a turn).

Privacy: only the history that enters the prompt is scanned, and the history has already left out
privacy-FULL authors' messages (BC2-09), so a FULL user's words can neither enter the prompt nor fire
an entry (whose firing would tell the model what they wrote). Pure: no Django, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import groupby

from chatcontext.core.tokens import estimate_tokens
from chatcontext.core.types import ContextItem, ContextItemTag, JSONDict, LoreEntryInfo, SimplifiedMessage, TextPart

Tag = ContextItemTag


@dataclass(frozen=True)
class FiredEntry:
    entry: LoreEntryInfo
    key: str | None  # None: a constant entry, which fires without a key


def key_matches(key: str, text: str, *, case_sensitive: bool, whole_words: bool) -> bool:
    needle, haystack = (key, text) if case_sensitive else (key.lower(), text.lower())
    needle = needle.strip()
    if not needle:
        return False
    if not whole_words or len(needle.split()) > 1:
        return needle in haystack
    return re.search(rf"(?:^|\W){re.escape(needle)}(?:$|\W)", haystack) is not None


def _first_key(entry: LoreEntryInfo, keys: Sequence[str], texts: Sequence[str]) -> str | None:
    for key in keys:
        flags = {"case_sensitive": entry.case_sensitive, "whole_words": entry.match_whole_words}
        if any(key_matches(key, text, **flags) for text in texts):
            return key
    return None


def _secondary_holds(entry: LoreEntryInfo, texts: Sequence[str]) -> bool:
    if not entry.selective or not entry.secondary_keys:
        return True
    found = [_first_key(entry, (key,), texts) is not None for key in entry.secondary_keys]
    return {
        "and_any": any(found),
        "and_all": all(found),
        "not_any": not any(found),
        "not_all": not all(found),
    }[entry.selective_logic]


def _fires(entry: LoreEntryInfo, history: Sequence[str]) -> FiredEntry | None:
    if entry.constant:
        return FiredEntry(entry, None)
    texts = history[-entry.scan_depth :] if entry.scan_depth > 0 else []
    key = _first_key(entry, entry.keys, texts)
    if key is None or not _secondary_holds(entry, texts):
        return None
    return FiredEntry(entry, key)


def _within_budget(fired: list[FiredEntry]) -> list[FiredEntry]:
    kept, used = [], 0
    for item in sorted(fired, key=lambda f: (not f.entry.constant, -f.entry.insertion_order, f.entry.uid)):
        used += estimate_tokens(item.entry.content)
        if used > item.entry.token_budget:
            break
        kept.append(item)
    return kept


def scan_lorebook(entries: Sequence[LoreEntryInfo], history: Sequence[SimplifiedMessage]) -> list[FiredEntry]:
    """The entries that fire on ``history`` (oldest first, as the prompt has it), within their books' budgets."""
    texts = [entry.content for entry in history if entry.content]
    fired = [f for entry in entries if entry.content.strip() and (f := _fires(entry, texts)) is not None]
    by_book = groupby(sorted(fired, key=lambda f: f.entry.book_id), key=lambda f: f.entry.book_id)
    return [kept for _, group in by_book for kept in _within_budget(list(group))]


def _item(tag: ContextItemTag, group: Sequence[FiredEntry], render: Callable[[str], str]) -> ContextItem:
    ordered = sorted(group, key=lambda f: (f.entry.insertion_order, f.entry.uid))
    hits: list[JSONDict] = [
        {"book": f.entry.book_id, "entry": f.entry.uid, "comment": f.entry.comment, "key": f.key} for f in ordered
    ]
    text = "\n".join(render(f.entry.content.strip()) for f in ordered)
    return ContextItem(role="system", parts=[TextPart(text)], metadata_tag=tag, world_info=hits)


def place_world_info(
    items: Sequence[ContextItem], fired: Sequence[FiredEntry], render: Callable[[str], str]
) -> list[ContextItem]:
    """The prompt with the fired entries in place: before and after the persona's own item (where it
    would be when it has none: after the system instruction), and at depth N before the N-th newest
    history item (0: after the newest; deeper than the history: before the oldest)."""
    if not fired:
        return list(items)
    out = list(items)
    tags = [item.metadata_tag for item in out]
    anchor = tags.index(Tag.SYSTEM_PERSONALITY) if Tag.SYSTEM_PERSONALITY in tags else None
    history = [i for i, tag in enumerate(tags) if tag == Tag.DIALOGUE_HISTORY]
    inserts: list[tuple[float, ContextItem]] = []
    before = [f for f in fired if f.entry.position == "before_char"]
    after = [f for f in fired if f.entry.position == "after_char"]
    # Positions between the items' indices: the persona's item, or the gap after the system instruction.
    character = anchor if anchor is not None else min(1, len(out))
    if before:
        inserts.append((character - 0.5, _item(Tag.WORLD_INFO_BEFORE, before, render)))
    if after:
        spot = character + 0.5 if anchor is not None else character - 0.25
        inserts.append((spot, _item(Tag.WORLD_INFO_AFTER, after, render)))
    depths = sorted({f.entry.depth for f in fired if f.entry.position == "at_depth"}, reverse=True)
    for depth in depths:
        group = [f for f in fired if f.entry.position == "at_depth" and f.entry.depth == depth]
        if not history:
            spot = character + 0.75
        elif depth == 0:
            spot = history[-1] + 0.5
        else:
            spot = history[-min(depth, len(history))] - 0.5
        inserts.append((spot, _item(Tag.WORLD_INFO_AT_DEPTH, group, render)))
    # A stable sort: groups clamped to the same spot stay deepest first.
    keyed = [(float(i), item) for i, item in enumerate(out)] + inserts
    return [item for _, item in sorted(keyed, key=lambda pair: pair[0])]
