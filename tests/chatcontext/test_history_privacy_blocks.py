"""Privacy-FULL exclusion, persona blocks and visible user ids (build-context.md §2, scenarios 10–15)."""

from __future__ import annotations

from chatcontext.core.types import Attachment, ForwardSnapshot, MessageReference, PrivacyLevel, Reaction, ReactionEmoji
from tests.chatcontext.builders import (
    ANN,
    BOB,
    BOT,
    BOT_ID,
    CARL,
    U1,
    U2,
    U3,
    WEBHOOK,
    block,
    msg,
    png,
    run_history,
    webhook_msg,
)

FULL = {U2: PrivacyLevel.FULL}


def test_s10_bc2_10_privacy_full_is_skipped_and_neighbours_merge() -> None:
    run = run_history([msg("m1", ANN, "a"), msg("m2", BOB, "secret of bob"), msg("m3", ANN, "b")], privacy=FULL)
    assert [e.id for e in run.entries] == ["m1"]
    assert run.entries[0].content == "a\nb"
    assert run.entries[0].combined_message_ids == ["m1", "m3"]
    assert {"message_id": "m2", "author_id": U2, "reason": "privacy_full"} in run.result.exclusions
    assert U2 not in run.result.user_ids
    assert all(m.id != "m2" for m in run.result.raw_messages)
    assert run.id_map.get_opaque("m2", "ref") is None


def test_s11_bc2_10_11_blocked_run_collapses_to_one_notice() -> None:
    messages = [msg("m2", BOB, "x"), msg("m3", BOB, "y"), msg("m4", BOB, "z")]
    run = run_history(messages, blocks=[block(U2, 90)])
    assert [e.id for e in run.entries] == ["synthetic-user-block-m2"]
    notice = run.entries[0]
    assert notice.content == (
        "[System: Bob sent a message but is currently blocked by you for 2 more hours. "
        "Use `unblock_user` to unblock if needed]"
    )
    assert (notice.author_id, notice.author_name, notice.author_type) == (U2, "System", "user")
    assert run.result.block_notice_count == 1
    assert [x["reason"] for x in run.result.exclusions] == ["blocked"] * 3
    assert U2 not in run.result.user_ids
    assert run.result.raw_messages == []


def test_s12_bc2_11_one_hour_floor() -> None:
    run = run_history([msg("m1", BOB, "x")], blocks=[block(U2, 10)])
    assert "blocked by you for 1 more hour. Use" in (run.entries[0].content or "")


def test_s13_bc2_12_a_normal_entry_breaks_the_run() -> None:
    run = run_history([msg("m1", BOB, "x"), msg("m2", ANN, "hi"), msg("m3", BOB, "y")], blocks=[block(U2, 90)])
    assert [e.id for e in run.entries] == ["synthetic-user-block-m1", "m2", "synthetic-user-block-m3"]


def test_bc2_12_privacy_skipped_or_dropped_messages_do_not_break_the_run() -> None:
    messages = [msg("m1", BOB, "x"), msg("m2", CARL, "full"), msg("m3", ANN, ""), msg("m4", BOB, "y")]
    run = run_history(messages, blocks=[block(U2, 90)], privacy={U3: PrivacyLevel.FULL})
    assert [e.id for e in run.entries] == ["synthetic-user-block-m1"]
    assert [x["reason"] for x in run.result.exclusions] == ["blocked", "privacy_full", "dropped_empty", "blocked"]


def test_s14_bc2_10_full_and_blocked_yields_no_notice() -> None:
    run = run_history([msg("m1", BOB, "x")], blocks=[block(U2, 90)], privacy=FULL)
    assert run.entries == []
    assert run.result.block_notice_count == 0


def test_s15_bc2_07_mute_rows_do_not_hide_messages() -> None:
    mute = block(U2, 90, "mute")
    run = run_history([msg("m1", BOB, "hello")], blocks=[mute])
    assert run.entries[0].content == "hello"
    assert run.result.active_blocks == [mute]


def test_bc2_08_relayed_webhook_compares_as_the_impersonated_user() -> None:
    relayed = webhook_msg("m1", "Bobby", "as bob")
    run = run_history([relayed], blocks=[block(U2, 90)], relays={WEBHOOK: U2})
    assert run.entries[0].id == "synthetic-user-block-m1"
    assert run.entries[0].content is not None and run.entries[0].content.startswith("[System: Bob sent a message")


def test_bc2_11_webhook_label_without_nickname_is_a_mention() -> None:
    run = run_history([webhook_msg("m1", "Carl", "x")], blocks=[block(U3, 90)], relays={WEBHOOK: U3})
    assert (run.entries[0].content or "").startswith(f"[System: <@{U3}> sent a message")


def test_bc2_13_user_ids_first_insertion_order_bot_appended_system_ids_omitted() -> None:
    join = msg("m3", CARL, type="user_join")
    messages = [msg("m1", BOB, "b"), msg("m2", ANN, "a"), join, msg("m4", BOB, "again")]
    run = run_history(messages)
    assert run.result.user_ids == [U2, U1, BOT_ID]


def test_bc2_13_impersonation_turn_does_not_add_the_bot() -> None:
    run = run_history([msg("m1", ANN, "a")], is_user_impersonation=True)
    assert run.result.user_ids == [U1]


def test_u6_matrix_relay_webhook_ids_are_not_visible_users() -> None:
    run = run_history([webhook_msg("m1", "[Matrix|@al:mx.org] Al", "hi")])
    assert run.result.user_ids == [BOT_ID]
    assert run.result.matrix_users == {"@al:mx.org": "Al"}


# --- hardening: nothing of a FULL author reaches another entry ------------------------------------


def test_hardening_reply_to_full_author_has_no_annotation_and_no_media() -> None:
    target = msg("m1", BOB, "bob secret words", attachments=(png(),))
    reply = msg("m2", ANN, "sure", reply_to="m1")
    run = run_history([target, reply], privacy=FULL)
    assert run.entry("m2").content == "sure"
    assert run.entry("m2").image_attachments == []
    assert run.id_map.as_dict() == {}


def test_hardening_reply_to_full_author_outside_window_is_also_hidden() -> None:
    target = msg("m0", BOB, "bob secret words")
    run = run_history([msg("m2", ANN, "sure", reply_to="m0")], extra_messages=(target,), privacy=FULL)
    assert run.entry("m2").content == "sure"


def test_hardening_forward_of_full_author_snapshot_is_left_out() -> None:
    snapshot = ForwardSnapshot(content="bob secret words", author=BOB)
    wrapper = msg(
        "m2",
        ANN,
        "",
        reference=MessageReference(type="forward", message_id="m0"),
        message_snapshots=(snapshot,),
    )
    run = run_history([wrapper, msg("m3", ANN, "after")], privacy=FULL)
    assert all("secret" not in (c or "") for c in run.contents)
    assert [x["reason"] for x in run.result.exclusions] == ["dropped_empty"]


def test_hardening_forward_hidden_through_the_cached_origin_author() -> None:
    origin = msg("m1", BOB, "bob secret words")
    wrapper = msg(
        "m2",
        ANN,
        "",
        reference=MessageReference(type="forward", message_id="m1"),
        message_snapshots=(ForwardSnapshot(content="bob secret words"),),
    )
    run = run_history([origin, wrapper, msg("m3", ANN, "after")], blocks=[block(U2, 90)])
    assert all("secret" not in (c or "") for c in run.contents)


def test_hardening_full_reactor_is_not_named() -> None:
    reaction = Reaction(ReactionEmoji(name="👍"), 2, users=(U1, U2))
    run = run_history(
        [msg("m1", CARL, "hi", reactions=(reaction,))],
        users=(ANN, BOB),
        privacy=FULL,
    )
    assert run.entries[0].content == "hi\n[System: Reactions on this message: 👍 x2 by Annie (+1 more)]"


def test_hardening_full_author_audio_is_not_transcribed() -> None:
    calls: list[str] = []

    def transcriber(attachment: Attachment, message: object) -> str:
        calls.append("x")
        return "spoken secret"

    audio = Attachment(id="a1", name="v.ogg", url="https://cdn.example/v.ogg", content_type="audio/ogg")
    run = run_history([msg("m1", BOB, "", attachments=(audio,))], privacy=FULL, transcriber=transcriber)
    assert calls == []
    assert run.cache.entries == {}


def test_bot_reactor_is_named_as_the_main_persona() -> None:
    reaction = Reaction(ReactionEmoji(name="👍"), 1, users=(BOT_ID,))
    run = run_history([msg("m1", ANN, "hi", reactions=(reaction,))], users=(BOT,))
    assert run.entries[0].content == "hi\n[System: Reactions on this message: 👍 x1 by Tomori]"


def test_bc3_04_unreadable_reply_target_gives_no_annotation() -> None:
    """A reply whose target cannot be read keeps its text and gets no annotation (BC3-04)."""
    run = run_history([msg("m2", ANN, "sure", reply_to="gone")], failing_message_ids=("gone",))
    assert run.entry("m2").content == "sure"
    assert run.transport.calls["fetch_message"] == 1
