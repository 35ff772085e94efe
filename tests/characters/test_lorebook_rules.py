"""chatcontext.core.lorebook: when an entry fires (keys, case, whole words, secondary logic, scan depth,
constant, budget) and where its text goes (before/after the character, at depth)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcontext.core.lorebook import key_matches, place_world_info, scan_lorebook
from chatcontext.core.types import ContextItem, ContextItemTag, LoreEntryInfo, SimplifiedMessage, TextPart

Tag = ContextItemTag


def entry(**fields: object) -> LoreEntryInfo:
    return dataclasses.replace(LoreEntryInfo(book_id=1, uid=1, content="LORE", keys=("dragon",)), **fields)


def history(*texts: str) -> list[SimplifiedMessage]:
    return [SimplifiedMessage(id=str(i), author_id="5", author_name="Mina", content=t) for i, t in enumerate(texts)]


def fired_keys(entries: list[LoreEntryInfo], *texts: str) -> list[tuple[int, str | None]]:
    return [(f.entry.uid, f.key) for f in scan_lorebook(entries, history(*texts))]


@pytest.mark.parametrize(
    ("key", "text", "case_sensitive", "whole_words", "expected"),
    [
        ("dragon", "A DRAGON appears", False, True, True),
        ("dragon", "A DRAGON appears", True, True, False),
        ("Dragon", "a Dragon!", True, True, True),
        ("cat", "the catalog", False, True, False),
        ("cat", "the catalog", False, False, True),
        ("cat", "a cat, then", False, True, True),
        ("cat", "cat", False, True, True),
        ("red dragon", "the red dragon sleeps", False, True, True),
        ("red dragon", "the reddragon", False, True, False),
        ("a.b", "see axb here", False, True, False),  # keys are text, never patterns
        ("(", "an ( alone", False, True, True),
        ("  ", "anything", False, True, False),
    ],
)
def test_keys_match_by_sillytaverns_case_and_whole_word_rules(
    key: str, text: str, case_sensitive: bool, whole_words: bool, expected: bool
) -> None:
    assert key_matches(key, text, case_sensitive=case_sensitive, whole_words=whole_words) is expected


def test_an_entry_fires_on_its_first_matching_key_within_the_scan_depth() -> None:
    book = [entry(keys=("wyrm", "dragon"), scan_depth=2)]
    assert fired_keys(book, "a dragon", "hello", "hi") == []
    assert fired_keys(book, "hello", "a dragon and a wyrm", "hi") == [(1, "wyrm")]
    assert fired_keys([entry(scan_depth=0)], "dragon") == []


@pytest.mark.parametrize(
    ("logic", "text", "fires"),
    [
        ("and_any", "dragon in the red cave", True),
        ("and_any", "dragon alone", False),
        ("and_all", "dragon in the red cave", True),
        ("and_all", "dragon in the cave", False),
        ("not_any", "dragon in the cave", False),
        ("not_any", "dragon alone", True),
        ("not_all", "dragon in the cave", True),
        ("not_all", "dragon in the red cave", False),
    ],
)
def test_secondary_keys_follow_the_selective_logic(logic: str, text: str, fires: bool) -> None:
    book = [entry(selective=True, secondary_keys=("red", "cave"), selective_logic=logic)]
    assert bool(fired_keys(book, text)) is fires


def test_secondary_keys_apply_only_to_selective_entries() -> None:
    assert fired_keys([entry(selective=False, secondary_keys=("red",))], "dragon") == [(1, "dragon")]


def test_constant_entries_fire_without_keys_and_empty_ones_never() -> None:
    book = [entry(uid=1, constant=True, keys=()), entry(uid=2, content="  ", keys=("hi",))]
    assert fired_keys(book, "hi there") == [(1, None)]


def test_the_budget_keeps_constants_then_higher_order_and_stops_at_the_first_that_does_not_fit() -> None:
    ten_tokens = "x" * 40
    book = [
        entry(uid=1, content=ten_tokens, insertion_order=1, constant=True, token_budget=25),
        entry(uid=2, content=ten_tokens, insertion_order=50, token_budget=25),
        entry(uid=3, content=ten_tokens, insertion_order=40, token_budget=25),
        entry(uid=4, content="tiny", insertion_order=10, token_budget=25),
        entry(book_id=2, uid=5, content=ten_tokens, token_budget=10),  # another book, its own budget
    ]
    assert sorted(fired_keys(book, "dragon")) == [(1, None), (2, "dragon"), (5, "dragon")]


def _prompt() -> list[ContextItem]:
    def item(tag: Tag | None, text: str, role: str = "system", placement: str = "inline") -> ContextItem:
        return ContextItem(role=role, parts=[TextPart(text)], metadata_tag=tag, placement=placement)  # type: ignore[arg-type]

    return [
        item(Tag.SYSTEM_INSTRUCTION_BLOCK, "instruction"),
        item(Tag.SYSTEM_PERSONALITY, "persona"),
        item(Tag.KNOWLEDGE_SERVER_INFO, "server"),
        *(item(Tag.DIALOGUE_HISTORY, f"m{n}", role="user") for n in range(1, 5)),
        item(Tag.KNOWLEDGE_CURRENT_CONTEXT, "now", placement="tail"),
    ]


def test_entries_go_before_and_after_the_character_and_at_depth_in_order() -> None:
    book = [
        entry(uid=1, content="B2 {{char}}", insertion_order=20),
        entry(uid=2, content="B1", insertion_order=10),
        entry(uid=3, content="A", position="after_char"),
        entry(uid=4, content="D1", position="at_depth", depth=1),
        entry(uid=5, content="D0", position="at_depth", depth=0),
        entry(uid=6, content="D9", position="at_depth", depth=9),
    ]
    fired = scan_lorebook(book, history("dragon"))
    texts = [i.text for i in place_world_info(_prompt(), fired, lambda t: t.replace("{{char}}", "Iris"))]
    assert texts == [
        "instruction",
        "B1\nB2 Iris",
        "persona",
        "A",
        "server",
        "D9",
        "m1",
        "m2",
        "m3",
        "D1",
        "m4",
        "D0",
        "now",
    ]
    [before] = [i for i in place_world_info(_prompt(), fired, str) if i.metadata_tag == Tag.WORLD_INFO_BEFORE]
    assert before.world_info == [
        {"book": 1, "entry": 2, "comment": "", "key": "dragon"},
        {"book": 1, "entry": 1, "comment": "", "key": "dragon"},
    ]


def test_without_a_persona_item_the_character_slot_is_after_the_system_instruction() -> None:
    prompt = [i for i in _prompt() if i.metadata_tag != Tag.SYSTEM_PERSONALITY]
    fired = scan_lorebook(
        [entry(uid=1, content="B"), entry(uid=2, content="A", position="after_char")], history("dragon")
    )
    assert [i.text for i in place_world_info(prompt, fired, str)][:4] == ["instruction", "B", "A", "server"]


@given(
    st.lists(st.text(min_size=0, max_size=30), max_size=6),
    st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=4),
    st.sampled_from(("before_char", "after_char", "at_depth")),
    st.integers(0, 6),
)
def test_placing_entries_keeps_every_item_and_adds_one_per_slot(
    texts: list[str], keys: list[str], position: str, depth: int
) -> None:
    book = [entry(uid=n, keys=(k,), content=f"LORE{n}", position=position, depth=depth) for n, k in enumerate(keys)]
    fired = scan_lorebook(book, history(*texts))
    placed = place_world_info(_prompt(), fired, str)
    assert [i for i in placed if i.world_info is None] == _prompt()
    assert len(placed) == len(_prompt()) + (1 if fired else 0)
    for f in fired:
        assert f.key is not None and any(key_matches(f.key, t, case_sensitive=False, whole_words=True) for t in texts)
