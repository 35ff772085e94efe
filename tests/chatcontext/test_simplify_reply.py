"""Reply context (BC3-02..07, BC5-04; scenarios 18–22)."""

from __future__ import annotations

from chatcontext.core.types import Attachment, Embed, MessageReference
from tests.chatcontext.builders import ANN, BOB, BOT, CHANNEL, ELLEN, U2, block, msg, png, run_history, webhook_msg


def test_s18_bc3_05_bc5_04_reply_annotation() -> None:
    run = run_history([msg("m1", BOB, "want  tea?"), msg("m2", ANN, "sure", reply_to="m1")])
    assert run.entry("m2").content == (
        "[System: This message (ID: ref_1) by Ann is referring to a previous message (ID: ref_2) by Bob "
        "saying: want tea?]\nsure"
    )
    assert run.id_map.as_dict() == {"ref_1": "m2", "ref_2": "m1"}


def test_s19_bc3_05_07_reply_copies_the_referenced_media() -> None:
    target = msg("m1", BOB, "look", attachments=(png(),))
    run = run_history([target, msg("m2", ANN, "nice", reply_to="m1")])
    reply = run.entry("m2")
    assert (reply.content or "").startswith("[System: This message (ID: ref_1)")
    assert "saying: look (with 1 image)]" in (reply.content or "")
    assert [(i.filename, i.source_message_id) for i in reply.image_attachments] == [("a.png", "m1")]
    assert reply.media_source_message_ids == ["m1"]
    # [QUIRK] BC3-14a decision: the reply kind survives (no forward media on a reply).
    assert reply.remote_media_source_kind == "reply"


def test_bc3_05_summary_counts_declared_videos_and_notes_empty_text() -> None:
    video = Attachment(id="v", name="v.mp4", url="https://cdn.example/v.mp4", content_type="video/mp4")
    run = run_history([msg("m1", BOB, "", attachments=(video, video)), msg("m2", ANN, "ok", reply_to="m1")])
    assert "saying: [System: No text content was included] (with 2 videos)]" in (run.entry("m2").content or "")


def test_s20_bc3_04_reply_to_blocked_author_has_no_annotation_and_no_media() -> None:
    target = msg("m1", BOB, "look", attachments=(png(),))
    run = run_history([target, msg("m2", ANN, "nice", reply_to="m1")], blocks=[block(U2, 90)])
    reply = run.entry("m2")
    assert reply.content == "nice"
    assert reply.image_attachments == []
    assert reply.media_source_message_ids is None


def test_s21_bc3_05_pin_message() -> None:
    pin = msg("p1", ANN, "", type="channel_pinned_message", reply_to="m1")
    run = run_history([msg("m1", BOB, "rules  here"), pin])
    assert run.entry("p1").content == "[System: Ann pinned a previous message (ID: ref_2) by Bob saying: rules here]"
    assert run.id_map.resolve("ref_1") == "p1"


def _reply_notice(channel: str) -> Embed:
    return Embed(
        author_name="↪️ Replying to Bob",
        description=f"[Jump to message](https://discord.com/channels/5/{channel}/777)",
    )


def test_s22_bc3_03_reply_notice_embed_links_the_target() -> None:
    target = msg("777", BOB, "tea time")
    persona_reply = webhook_msg("m2", "Ellen", "coming!", embeds=(_reply_notice(CHANNEL),))
    run = run_history([persona_reply], extra_messages=(target,))
    assert run.entry("m2").content == (
        "[System: This message (ID: ref_1) by Ellen is referring to a previous message (ID: ref_2) by Bob "
        "saying: tea time]\ncoming!"
    )


def test_s22_bc3_03_reply_notice_into_another_channel_gives_no_context() -> None:
    target = msg("777", BOB, "tea time")
    persona_reply = webhook_msg("m2", "Ellen", "coming!", embeds=(_reply_notice("999"),))
    run = run_history([persona_reply], extra_messages=(target,))
    assert run.entry("m2").content == "coming!"


def test_bc3_02_forwards_and_channels_without_history_have_no_reply_context() -> None:
    reply = msg("m2", ANN, "sure", reply_to="m1")
    run = run_history([msg("m1", BOB, "q"), reply], trigger=reply, supports_history=False)
    assert run.entry("m2").content == "sure"


def test_bc3_06_bot_author_in_annotation_is_the_main_persona_even_for_an_alter_turn() -> None:
    """[QUIRK] BC3-06: the reference names the responding persona; the bot user is the main persona."""
    run = run_history([msg("m1", BOT, "hello"), msg("m2", ANN, "hi", reply_to="m1")], persona=ELLEN)
    assert "by Tomori saying: hello]" in (run.entry("m2").content or "")


def test_bc3_06_blacklisted_user_is_named_by_live_name_not_saved_nickname() -> None:
    run = run_history([msg("m1", BOB, "q"), msg("m2", ANN, "a", reply_to="m1")], blacklisted={U2})
    assert "by Bobby saying: q]" in (run.entry("m2").content or "")


def test_bc3_04_cross_reference_fetch_outside_window() -> None:
    run = run_history(
        [msg("m2", ANN, "sure", reference=MessageReference(message_id="m0", channel_id=CHANNEL))],
        extra_messages=(msg("m0", BOB, "old question"),),
    )
    assert "saying: old question]" in (run.entry("m2").content or "")
    assert run.transport.calls["fetch_message"] == 1
