"""Reaction annotations (BC3-08/09; scenarios 23–24)."""

from __future__ import annotations

from dataclasses import replace

from chatcontext.core.config import StageConfig
from chatcontext.core.types import Author, Reaction, ReactionEmoji
from tests.chatcontext.builders import ANN, BOB, msg, run_history

A = Author(id="1001", username="a_user", global_name="A")
B = Author(id="1002", username="B")
C = Author(id="1003", username="c_user", global_name="C")


def test_s23_bc3_08_reactions_sorted_capped_and_named() -> None:
    reactions = (
        Reaction(ReactionEmoji(name="👍"), 3, users=("1001", "1002")),
        Reaction(ReactionEmoji(name="🔥"), 1, users=("1003",)),
        Reaction(ReactionEmoji(id="42", name="pog"), 2, users=("1001", "1002")),
        Reaction(ReactionEmoji(name="😂"), 1, users=("1002",)),
        Reaction(ReactionEmoji(name="😭"), 1, users=("1001",)),
    )
    run = run_history([msg("m1", ANN, "gg", reactions=reactions)], users=(A, B, C))
    assert run.entries[0].content == (
        "gg\n[System: Reactions on this message: 👍 x3 by A, B (+1 more); :pog: x2 by A, B; 🔥 x1 by C; "
        "😂 x1 by B; +1 more reaction type]"
    )
    assert run.result.reaction_api_calls == 4


def test_s24_bc3_09_call_budget_is_shared_by_the_turn() -> None:
    config = replace(StageConfig(), reaction_max_api_calls_per_turn=1)
    thumbs = Reaction(ReactionEmoji(name="👍"), 1, users=("1001",))
    run = run_history(
        [msg("m1", ANN, "one", reactions=(thumbs,)), msg("m2", BOB, "two", reactions=(thumbs,))],
        users=(A,),
        config=config,
    )
    assert run.entry("m1").content == "one\n[System: Reactions on this message: 👍 x1 by A]"
    assert run.entry("m2").content == "two\n[System: Reactions on this message: 👍 x1]"
    assert run.result.reaction_api_calls == 1


def test_bc3_08_fetch_error_spends_the_call_and_shows_counts() -> None:
    thumbs = Reaction(ReactionEmoji(name="👍"), 2, users=("1001",))
    run = run_history([msg("m1", ANN, "x", reactions=(thumbs,))], users=(A,), failing_reaction_message_ids=("m1",))
    assert run.entries[0].content == "x\n[System: Reactions on this message: 👍 x2]"
    assert run.result.reaction_api_calls == 1


def test_bc3_08_emoji_labels_zero_users_and_plural_hidden_types() -> None:
    config = replace(StageConfig(), reaction_max_reactions_per_message=1, reaction_max_users_per_reaction=0)
    reactions = (
        Reaction(ReactionEmoji(id="77"), 5),
        Reaction(ReactionEmoji(), 2),
        Reaction(ReactionEmoji(name="x"), 1),
        Reaction(ReactionEmoji(name="gone"), 0),
    )
    run = run_history([msg("m1", ANN, "x", reactions=reactions)], config=config)
    assert run.entries[0].content == "x\n[System: Reactions on this message: <emoji:77> x5; +2 more reaction types]"
    assert run.result.reaction_api_calls == 0


def test_reaction_context_disabled() -> None:
    config = replace(StageConfig(), reaction_context_enabled=False)
    thumbs = Reaction(ReactionEmoji(name="👍"), 1, users=("1001",))
    run = run_history([msg("m1", ANN, "x", reactions=(thumbs,))], config=config)
    assert run.entries[0].content == "x"
