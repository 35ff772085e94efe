"""Consecutive same-author merge (build-context.md §4; scenarios 40–44)."""

from __future__ import annotations

from dataclasses import replace

from chatcontext.core.merge import HistoryMerger, can_merge
from chatcontext.core.types import SimplifiedMessage
from tests.chatcontext.builders import ANN, SERVER, at, bot_embed, msg, png, run_history, webhook_msg


def test_s40_bc4_01_02_merge_keeps_parallel_lists() -> None:
    times = [at(10, 0), at(10, 1), at(10, 2)]
    run = run_history([msg(f"m{i + 1}", ANN, text, ts=t) for i, (text, t) in enumerate(zip("abc", times, strict=True))])
    (entry,) = run.entries
    assert entry.id == "m1"
    assert entry.content == "a\nb\nc"
    assert entry.combined_message_ids == ["m1", "m2", "m3"]
    assert entry.individual_contents == ["a", "b", "c"]
    assert entry.combined_created_ats == times
    assert entry.created_at == times[0]


def test_s41_bc4_01_day_boundary() -> None:
    messages = [msg("m1", ANN, "late", ts=at(23, 59)), msg("m2", ANN, "early", ts=at(0, 1, day=2))]
    assert len(run_history(messages).entries) == 2
    assert len(run_history(messages, server=replace(SERVER, timezone_offset=9)).entries) == 1
    assert len(run_history(messages, server=replace(SERVER, time_awareness_enabled=False)).entries) == 1


def test_s42_bc4_01_media_blocks_merge() -> None:
    run = run_history([msg("m1", ANN, "hi"), msg("m2", ANN, "lol <:kek:123456789012345678>")])
    assert [e.id for e in run.entries] == ["m1", "m2"]
    run = run_history([msg("m1", ANN, "see", attachments=(png(),)), msg("m2", ANN, "this")])
    assert [e.id for e in run.entries] == ["m1", "m2"]


def test_s43_bc4_01_different_names_do_not_merge() -> None:
    run = run_history([webhook_msg("m1", "Ellen (shy)", "um"), webhook_msg("m2", "Ellen (smug)", "heh")])
    assert [(e.author_id, e.author_name) for e in run.entries] == [("2", "Ellen (shy)"), ("2", "Ellen (smug)")]
    run = run_history(
        [webhook_msg("m1", "Ellen", "um"), webhook_msg("m2", "Ellen", "heh")],
        sprite_labels={"m1": (2, "shy"), "m2": (2, "smug")},
    )
    assert [e.author_name for e in run.entries] == ["Ellen (shy)", "Ellen (smug)"]


def test_s44_bc4_03_consecutive_system_notices_merge() -> None:
    run = run_history(
        [
            bot_embed("m1", "📝 Tomori Learned Something!", "Ann likes tea"),
            bot_embed("m2", "🗑️ Tomori Deleted a Memory!", "old fact"),
        ]
    )
    (entry,) = run.entries
    assert entry.author_id == "system-embed"
    assert entry.content == (
        "[System: 📝 Tomori Learned Something!\nAnn likes tea]\n[System: 🗑️ Tomori Deleted a Memory!\nold fact]"
    )
    assert entry.combined_message_ids == ["m1", "m2"]


def _entry(entry_id: str, content: str | None = "x", **changes: object) -> SimplifiedMessage:
    return replace(SimplifiedMessage(id=entry_id, author_id="1", author_name="A", content=content), **changes)


def _merges(previous: SimplifiedMessage, new: SimplifiedMessage) -> bool:
    return can_merge(
        previous,
        new,
        previous_is_debug=False,
        new_is_debug=False,
        time_awareness_enabled=True,
        timezone_offset_hours=0,
    )


def test_bc4_01_content_name_and_media_conditions() -> None:
    assert _merges(_entry("a"), _entry("b"))
    assert not _merges(_entry("a", None), _entry("b"))
    assert not _merges(_entry("a"), _entry("b", ""))
    assert not _merges(_entry("a"), _entry("b", author_name="B"))
    assert not _merges(_entry("a"), _entry("b", author_id="2"))
    assert not _merges(_entry("a"), _entry("b", media_source_message_ids=["z"]))


def test_bc4_03_block_notices_are_appended_and_reset_the_debug_flag() -> None:
    merger = HistoryMerger()
    merger.add(_entry("a"), is_debug=True)
    merger.add_notice(_entry("n"))
    assert merger.previous_is_debug is False
    assert [e.id for e in merger.entries] == ["a", "n"]
    assert merger.entries[0].combined_message_ids is None
