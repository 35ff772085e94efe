"""§9: StreamingContext (BC9-01..04), LTM intent (BC9-05), tool gating (BC9-07..09), effective
persona (BC9-11); §12 scenarios 56 (reply notice part), 61, 62, 63."""

from __future__ import annotations

import pytest

from chatcontext.core.idmap import MessageIdMap
from chatcontext.core.streaming_context import (
    DeliberateToolConfig,
    ToolGating,
    ToolIntentTexts,
    context_turns,
    deliberate_mode_active,
    effective_persona,
    explicit_long_term_memory_intent,
    gate_deliberate_tools,
    init_streaming_context,
)
from chatcontext.core.types import ChatIncoming, ReplyNoticeState
from tests.chatcontext.turn_factory import cafe, ellen, message, tomori, turn


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Please REMEMBER my birthday", True),
        ("my notebook", True),
        ("don\u2019t forget", False),
        ("don't forget", True),
        ("ＲＥＭＥＭＢＥＲ", True),
        ("これ覚えて", True),
        ("   ", False),
        (None, False),
        ("remembered", True),
        ("denote", True),
        ("for   future\nreference", True),
        ("see you tomorrow", False),
    ],
)
def test_s61_bc9_05_ltm_intent(text: str | None, expected: bool) -> None:
    assert explicit_long_term_memory_intent(text) is expected


def test_bc9_01_initial_values() -> None:
    id_map = MessageIdMap()
    incoming = ChatIncoming(
        message=message(content="please remember this"),
        force_reason=True,
        is_manually_triggered=True,
        retry_count=2,
        nai_continuation_prefill="Once",
    )
    ctx = init_streaming_context(
        turn(incoming), message_id_map=id_map, forced_mentions=[{"handle": "a", "user_id": "1"}]
    )
    assert ctx.explicit_long_term_memory_intent is True
    assert (ctx.force_reason, ctx.is_manually_triggered, ctx.empty_response_retry_count) == (True, True, 2)
    assert ctx.nai_continuation_prefill == "Once"
    assert ctx.message_id_map is id_map
    assert ctx.triggerer_user_id == 41
    assert ctx.suppress_user_errors is False
    assert ctx.disable_all_tools is False
    assert ctx.forced_mentions == [{"handle": "a", "user_id": "1"}]
    assert ctx.reply_notice_state is None
    flags = (
        ctx.disable_youtube_processing,
        ctx.disable_profile_picture_processing,
        ctx.disable_gif_processing,
        ctx.disable_short_term_memory_update,
        ctx.disable_cross_channel_message,
        ctx.disable_message_metadata_context,
    )
    assert flags == (False,) * 6


def test_s62_bc9_02_03_overrides() -> None:
    def suppress(surface: bool, override: bool) -> bool:
        incoming = ChatIncoming(
            message=message(), manual_streaming_context_overrides={"suppress_user_errors": override}
        )
        return init_streaming_context(
            turn(incoming, should_surface_user_errors=surface), message_id_map=None, forced_mentions=None
        ).suppress_user_errors

    assert suppress(True, False) is False
    assert suppress(False, False) is True
    assert suppress(True, True) is True

    queued = ChatIncoming(
        message=message(),
        is_from_queue=True,
        manual_streaming_context_overrides={"reply_notice_state": None, "disable_gif_processing": True},
    )
    ctx = init_streaming_context(turn(queued), message_id_map=None, forced_mentions=None)
    assert ctx.reply_notice_state == ReplyNoticeState(attempted=False, sent=False)
    assert ctx.disable_gif_processing is True


@pytest.mark.parametrize("persona", [tomori(), ellen()], ids=["main", "alter"])
def test_s56_bc9_04_reply_notice_state_for_every_queued_turn(persona: object) -> None:
    stopped = ChatIncoming(message=message(), is_from_queue=True, is_stop_response=True)
    ctx = init_streaming_context(turn(stopped, persona=persona), message_id_map=None, forced_mentions=None)  # type: ignore[arg-type]
    assert ctx.reply_notice_state == ReplyNoticeState(attempted=False, sent=False)
    not_queued = init_streaming_context(turn(persona=persona), message_id_map=None, forced_mentions=None)  # type: ignore[arg-type]
    assert not_queued.reply_notice_state is None


def test_s63_bc9_01_11_impersonation_disables_tools_and_has_tools() -> None:
    incoming = ChatIncoming(message=message(), is_user_impersonation=True, impersonated_user_id="2")
    ctx = init_streaming_context(turn(incoming), message_id_map=None, forced_mentions=None)
    assert ctx.disable_all_tools is True
    effective = effective_persona(tomori(has_tools=True), cafe(), is_rp_channel=False, disable_all_tools=True)
    assert effective.persona.has_tools is False


def test_s63_bc9_09_deliberate_mode_without_intent_disables_tools() -> None:
    gating = gate_deliberate_tools(
        config=DeliberateToolConfig(server_mode=True),
        personal_mode="follow",
        texts=ToolIntentTexts("good morning everyone"),
        disable_all_tools=False,
    )
    assert gating.active and gating.disable_all_tools and gating.allowed_names is None


def test_s63_bc9_09_web_search_intent_twice_is_allowed_once() -> None:
    gating = gate_deliberate_tools(
        config=DeliberateToolConfig(server_mode=True, triggers={"web_search": ["look it up"]}),
        personal_mode=None,
        texts=ToolIntentTexts("can you look it up? search the news"),
        disable_all_tools=False,
    )
    assert gating.disable_all_tools is False
    assert gating.allowed_names == ["web_search"]
    assert gating.match_by_tool_name["web_search"].source == "built-in"


def test_bc9_07_personal_mode_wins() -> None:
    assert deliberate_mode_active("on", False) is True
    assert deliberate_mode_active("off", True) is False
    assert deliberate_mode_active("follow", True) is True
    assert deliberate_mode_active(None, False) is False


def test_bc9_08_context_turns_clamped() -> None:
    assert (context_turns(None), context_turns(-3), context_turns(99), context_turns(2)) == (4, 0, 10, 2)


def test_bc9_08_recent_turns_only_when_active_and_reminder_rules() -> None:
    def gate(config: DeliberateToolConfig, personal_mode: str) -> ToolGating:
        return gate_deliberate_tools(
            config=config,
            personal_mode=personal_mode,
            texts=ToolIntentTexts("ok", None, ["please draw an image of a cat", "hi"]),
            disable_all_tools=False,
        )

    inactive = gate(DeliberateToolConfig(), "off")
    assert inactive.allowed_names is None and "generate_image" not in inactive.match_by_tool_name
    active = gate(DeliberateToolConfig(context_turns=2), "on")
    assert active.allowed_names == ["generate_image"]
    assert active.match_by_tool_name["generate_image"].source == "recent"

    reminder = gate_deliberate_tools(
        config=DeliberateToolConfig(server_mode=True),
        personal_mode=None,
        texts=ToolIntentTexts("", "remind Bob with a voice note"),
        disable_all_tools=False,
    )
    assert reminder.allowed_names == ["generate_voice_message"]  # the self-scheduling create_task is removed


def test_bc9_08_url_fetch_adds_fetcher_tools_and_end_turn_counts_as_intent() -> None:
    gating = gate_deliberate_tools(
        config=DeliberateToolConfig(server_mode=True),
        personal_mode=None,
        texts=ToolIntentTexts("summarize https://example.org/post"),
        disable_all_tools=False,
        url_fetch_tool_names=["mcp_fetch"],
    )
    assert gating.allowed_names == ["fetch_url", "mcp_fetch"]
    end_only = gate_deliberate_tools(
        config=DeliberateToolConfig(server_mode=True),
        personal_mode=None,
        texts=ToolIntentTexts("hi"),
        disable_all_tools=False,
        end_turn_after_tools=["update_short_term_memory"],
    )
    assert end_only.disable_all_tools is False
    assert end_only.allowed_names == ["update_short_term_memory"]


def test_bc9_11_rp_channel_disables_emojis_and_stickers_on_a_copy() -> None:
    server = cafe()
    effective = effective_persona(tomori(has_tools=True), server, is_rp_channel=True, disable_all_tools=False)
    assert (effective.server.emoji_usage_enabled, effective.server.sticker_usage_enabled) == (False, False)
    assert effective.persona.has_tools is True
    assert server.emoji_usage_enabled is True
