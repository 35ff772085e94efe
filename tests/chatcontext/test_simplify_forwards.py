"""Forwarded messages (BC3-12..14; scenarios 29–30)."""

from __future__ import annotations

from dataclasses import replace

from chatcontext.core.config import StageConfig
from chatcontext.core.types import DiscordMessage, Embed, ForwardSnapshot, MessageReference
from tests.chatcontext.builders import ANN, BOB, BOT, CARL, at, msg, png, run_history


def forward(message_id: str, *snapshots: ForwardSnapshot, origin: str = "o1", content: str = "") -> DiscordMessage:
    return msg(
        message_id,
        ANN,
        content,
        reference=MessageReference(type="forward", message_id=origin),
        message_snapshots=snapshots,
    )


def test_s29_bc3_14_image_only_forward() -> None:
    run = run_history([forward("w1", ForwardSnapshot(attachments=(png(),)))])
    entry = run.entries[0]
    assert entry.content == (
        "[System: Ann forwarded a message by Unknown user from another channel saying: "
        "[System: No text content was included] (with 1 image)]"
    )
    assert entry.media_source_message_ids == ["w1"]
    assert entry.remote_media_source_kind == "forwarded"
    assert [i.source_message_id for i in entry.image_attachments] == ["w1"]
    assert run.id_map.as_dict() == {"media_1": "w1"}


def test_s30_bc3_12_13_nested_forward_unresolved() -> None:
    run = run_history(
        [forward("w1", ForwardSnapshot(), origin="mid")],
        failing_message_ids=("mid",),
    )
    entry = run.entries[0]
    assert (entry.content or "").startswith("[System: Ann forwarded a message that was itself a forward.")
    assert entry.content == (
        "[System: Ann forwarded a message that was itself a forward. Discord does not include the original "
        "message's contents in a nested forward, so its text and any attached media cannot be seen.]"
    )
    assert entry.image_attachments == [] and entry.media_source_message_ids is None
    assert run.id_map.as_dict() == {}


def test_bc3_12_nested_forward_resolved_by_refetching_the_intermediate_message() -> None:
    intermediate = forward("mid", ForwardSnapshot(content="deep  text", author=BOB, channel_id="123"), origin="o0")
    run = run_history(
        [forward("w1", ForwardSnapshot(), origin="mid", content="look")],
        extra_messages=(intermediate,),
    )
    assert run.entries[0].content == "[System: Ann forwarded a message by Bobby from <#123> saying: deep text]\nlook"


def test_bc3_12_chain_depth_is_bounded() -> None:
    hops = [forward(f"h{i}", ForwardSnapshot(), origin=f"h{i + 1}") for i in range(4)]
    config = replace(StageConfig(), forward_chain_max_depth=3)
    run = run_history(
        [forward("w1", ForwardSnapshot(), origin="h0")],
        extra_messages=tuple(hops),
        config=config,
    )
    assert "itself a forward" in (run.entries[0].content or "")
    assert run.transport.calls["fetch_message"] == 3


def test_bc3_14_bot_snapshot_notice_replaces_the_text() -> None:
    notice = Embed(title="📝 Tomori Learned Something!", description="Ann likes tea")
    run = run_history([forward("w1", ForwardSnapshot(content="", embeds=(notice,), author=BOT))])
    assert run.entries[0].content == (
        "[System: Ann forwarded a message by Tomori from another channel saying: "
        "[System: 📝 Tomori Learned Something! Ann likes tea]]"
    )
    assert run.entries[0].author_id != "system-embed"


def test_bc3_12_hardening_a_chain_is_judged_by_the_author_of_the_message_it_shows() -> None:
    """Bob forwards Carl's words and Ann forwards Bob's forward (Discord sends it empty): the chain
    shows Carl's words, so Carl's privacy decides, not Bob's. With Carl FULL nothing of his is shown."""
    carls = msg("z", CARL, "carl's secret", ts=at(9))
    bobs = forward("mid", ForwardSnapshot(content="carl's secret"), origin="z")
    bobs = replace(bobs, author=BOB, created_timestamp=at(9, 30))
    anns = forward("w1", ForwardSnapshot(), origin="mid", content="look")
    visible = run_history([carls, bobs, anns])
    assert "carl's secret" in (visible.entries[-1].content or "")
    hidden = run_history([carls, bobs, anns], privacy={CARL.id: 2})
    assert all("carl's secret" not in (e.content or "") for e in hidden.entries)
