"""The inspector's pure view models: prompt blocks, history ids, exclusion rows and the prompt diff."""

from __future__ import annotations

from dataclasses import astuple
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chatcontext.records.inspector import (
    exclusion_entries,
    history_entries,
    prompt_blocks,
    prompt_diff,
    prompt_lines,
    refs_by_message,
)
from chatcontext.records.store import estimate_tokens

TAGS = ["system_instruction_block", "dialogue_history", "knowledge_server_memories", None]
texts = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=60)
items = st.lists(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["system", "user", "assistant"]),
            "tag": st.sampled_from(TAGS),
            "text": texts,
            "message_id": st.one_of(st.none(), st.sampled_from(["6001", "6002", "6003"])),
        }
    ),
    max_size=8,
)


@given(items)
def test_a_prompt_does_not_differ_from_itself(prompt: list[dict[str, Any]]) -> None:
    assert prompt_diff(prompt, prompt, before_label="a", after_label="b") == []


@given(items, items)
def test_diff_adds_only_lines_of_the_new_prompt_and_removes_only_lines_of_the_old(
    before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> None:
    diff = prompt_diff(before, after, before_label="before", after_label="after")
    assert bool(diff) == (prompt_lines(before) != prompt_lines(after))
    added = [line.text[1:] for line in diff if line.kind == "add"]
    removed = [line.text[1:] for line in diff if line.kind == "del"]
    assert set(added) <= set(prompt_lines(after))
    assert set(removed) <= set(prompt_lines(before))


@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "reason": st.sampled_from(["privacy_full", "blocked", "blacklisted", "something_new"]),
                "message_id": st.sampled_from(["", "6002"]),
                "user_id": st.sampled_from(["", "13"]),
                "text": texts.map(lambda t: "SECRET-" + t),
                "content": texts.map(lambda t: "SECRET-" + t),
            }
        ),
        max_size=5,
    )
)
def test_exclusion_rows_never_carry_text_even_if_an_entry_does(entries: list[dict[str, str]]) -> None:
    for row in exclusion_entries(entries):
        assert not any("SECRET-" in str(value) for value in astuple(row))
        assert row.explanation


def test_blocks_use_the_stored_estimate_and_estimate_when_missing() -> None:
    blocks = prompt_blocks(
        [
            {"role": "system", "tag": "system_personality", "text": "calm", "token_estimate": 7},
            {"role": "user", "tag": "dialogue_history", "text": "Okabe: Pip, please", "message_id": "6007"},
        ],
        {"ref_1": "6007", "ref_2": "6006"},
    )
    assert [b.tokens for b in blocks] == [7, estimate_tokens("Okabe: Pip, please")]
    assert blocks[1].message_refs == ("ref_1",)
    assert blocks[0].message_refs == ()


def test_history_lists_every_id_of_a_merged_entry() -> None:
    id_map = {"ref_1": "6004", "media_1": "6004", "ref_2": "6001"}
    assert refs_by_message(id_map) == {"6004": ("ref_1", "media_1"), "6001": ("ref_2",)}
    [merged, single] = history_entries(
        [
            {"id": "6003", "combined_message_ids": ["6003", "6004"], "author_name": "Jun", "created_at": 0},
            {"id": "6001", "author_name": "Mina", "content": "hi"},
        ],
        id_map,
    )
    assert merged.message_ids == ("6003", "6004")
    assert merged.refs == ("ref_1", "media_1")
    assert single.refs == ("ref_2",)
    assert single.sent_at is None
