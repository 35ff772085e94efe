"""BC13: a prompt never exceeds its endpoint's window minus the reply budget; what was cut is in the
exclusion log, in the documented order (oldest history first, then the lower-priority blocks), and
the tokenizer works without a network (its encoding ships in the repository)."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcontext.core.budget import BUDGET_REASON, CUT_ORDER, TRUNCATED_REASON, ContextBudget, fit_to_budget
from chatcontext.core.tokens import ENCODING_FILE, ENCODING_SHA256, count_items, count_text
from chatcontext.core.types import ContextItem, ContextItemTag, TextPart

_words = st.text(alphabet="abcdefghij klmnop,.!?éü日本\n", min_size=0, max_size=400)
_blocks = st.sampled_from([*CUT_ORDER, ContextItemTag.SYSTEM_INSTRUCTION_BLOCK, ContextItemTag.SYSTEM_PERSONALITY])


def item(tag: ContextItemTag, text: str, message_id: str | None = None) -> ContextItem:
    role = "system" if tag.value.startswith("system") else "user"
    return ContextItem(role=role, parts=[TextPart(text)], metadata_tag=tag, message_id=message_id)


@st.composite
def prompts(draw: st.DrawFn) -> list[ContextItem]:
    """System and knowledge blocks, a history of up to 60 entries (the last one being answered) and
    a tail: the shape the builder gives, with texts of any length."""
    head = [item(tag, draw(_words) * draw(st.integers(1, 8))) for tag in draw(st.lists(_blocks, max_size=8))]
    history = [
        item(ContextItemTag.DIALOGUE_HISTORY, draw(_words), message_id=str(900 + i))
        for i in range(draw(st.integers(1, 60)))
    ]
    tail = [item(ContextItemTag.KNOWLEDGE_CURRENT_CONTEXT, draw(_words))]
    return [*head, *history, *tail]


@st.composite
def budgets(draw: st.DrawFn) -> ContextBudget:
    window = draw(st.integers(1024, 16_384))
    return ContextBudget(
        window=window,
        reply_tokens=draw(st.integers(1, window // 2)),
        scale=draw(st.floats(0.5, 4.0)),
        margin_percent=draw(st.integers(0, 30)),
    )


@given(prompts(), budgets())
def test_bc13_a_prompt_never_exceeds_the_window_minus_the_reply_budget(items, budget) -> None:
    fitted = fit_to_budget(items, budget)

    assert fitted.counted_tokens == count_items(fitted.items)
    assert budget.estimate(count_items(fitted.items)) <= budget.prompt_limit
    cut = [e for e in fitted.exclusions if e["reason"] == BUDGET_REASON]
    kept_ids = {i.message_id for i in fitted.items}
    # Every entry that left is in the log, and nothing in the log is still there.
    gone = [i for i in items if i.message_id and i.message_id not in kept_ids]
    assert [e["message_id"] for e in cut if "message_id" in e] == [i.message_id for i in gone]
    # Oldest history first: what is left of the history is its newest part, the answered entry included.
    history = [i.message_id for i in items if i.metadata_tag == ContextItemTag.DIALOGUE_HISTORY]
    kept_history = [m for m in history if m in kept_ids]
    assert kept_history == history[len(history) - len(kept_history) :] and history[-1] in kept_ids
    # Blocks go only once the history is down to the answered entry, and in CUT_ORDER.
    blocks = [e["block"] for e in cut if e["scope"] == "block"]
    if blocks:
        assert kept_history == history[-1:]
        assert blocks == sorted(blocks, key=lambda b: CUT_ORDER.index(ContextItemTag(b)))
    # Nothing of a message's text is in the log.
    assert all(set(e) <= {"reason", "block", "scope", "message_id", "author_id"} for e in fitted.exclusions)


@given(prompts())
def test_bc13_a_prompt_that_fits_is_sent_whole(items) -> None:
    budget = ContextBudget(window=1_000_000, reply_tokens=1024)
    fitted = fit_to_budget(items, budget)
    assert fitted.items == items and fitted.exclusions == []


def test_bc13_an_instruction_block_larger_than_the_window_is_shortened_and_logged() -> None:
    items = [
        item(ContextItemTag.SYSTEM_PERSONALITY, "word " * 5000),
        item(ContextItemTag.DIALOGUE_HISTORY, "hello", message_id="901"),
    ]
    budget = ContextBudget(window=2048, reply_tokens=1024)
    fitted = fit_to_budget(items, budget)
    assert budget.estimate(fitted.counted_tokens) <= 1024
    assert fitted.items[-1].text == "hello"
    assert fitted.exclusions == [{"reason": TRUNCATED_REASON, "block": "system_personality", "scope": "block"}]


def test_bc13_a_window_no_larger_than_its_reply_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="larger than its reply budget"):
        ContextBudget(window=1024, reply_tokens=1024)


def test_the_encoding_ships_in_the_repository_byte_for_byte_as_tiktoken_publishes_it() -> None:
    assert hashlib.sha256(ENCODING_FILE.read_bytes()).hexdigest() == ENCODING_SHA256
    # cl100k_base's own figures, counted from the shipped file alone.
    assert count_text("hello world") == 2
    assert count_text("tiktoken is great!") == 6


def test_bc13_the_inspector_names_a_cut_block_and_why() -> None:
    from chatcontext.records.inspector import exclusion_entries

    [row] = exclusion_entries([{"reason": BUDGET_REASON, "block": "knowledge_emojis", "scope": "block"}])
    assert row.scope == "block knowledge_emojis"
    assert row.explanation.startswith("cut to fit the model's context window")
