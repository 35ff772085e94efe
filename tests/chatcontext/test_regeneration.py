"""Fast regeneration (build-context.md BC9-06, BC9-10; issue 30 item 4)."""

from __future__ import annotations

import dataclasses

import pytest

from chatcontext.core.participants.target_index import TurnTargets
from chatcontext.core.regeneration import (
    REGENERATE,
    ChannelRecorders,
    fast_regeneration_offered,
    record_turn_output_message,
)
from chatcontext.core.types import ChatIncoming, ChatTurnContext, ReminderData, StreamingContext
from tests.chatcontext.turn_factory import CHANNEL, cafe, message, tomori, turn

OFFERING = {"fast_regeneration_actions": (REGENERATE,)}


def test_bc9_10_offered_for_a_guild_message_turn_with_an_action():
    assert fast_regeneration_offered(turn(**OFFERING), StreamingContext())
    assert not fast_regeneration_offered(turn(), StreamingContext())  # no action enabled (a replay)


@pytest.mark.parametrize(
    "change",
    [
        {"server": cafe(is_dm=True)},
        {"incoming": {"is_persona_job": True}},
        {"incoming": {"is_user_impersonation": True, "impersonated_user_id": "1"}},
        {"incoming": {"is_stop_response": True}},
        {"incoming": {"reminder_recipient_id": "1"}},
        {"incoming": {"reminder_data": ReminderData("water the plants")}},
        {"streaming": {"disable_cross_channel_message": True}},
    ],
)
def test_bc9_10_never_offered_for_dms_persona_jobs_impersonation_stop_reminders_or_overrides(change):
    incoming = ChatIncoming(message=message(), **change.get("incoming", {}))
    streaming = StreamingContext(**change.get("streaming", {}))
    chat_turn = turn(incoming, **OFFERING, **({"server": change["server"]} if "server" in change else {}))
    assert not fast_regeneration_offered(chat_turn, streaming)
    assert ChannelRecorders().start(chat_turn, streaming) is None


def test_bc9_10_a_new_turn_clears_the_channels_entries_the_personas_of_one_turn_share_them():
    recorders = ChannelRecorders()
    first = turn(**OFFERING)
    recorder = recorders.start(first, StreamingContext())
    assert recorder is not None and recorders.latest(CHANNEL) is recorder
    recorder.record("1001", 1)
    alter_turn = dataclasses.replace(first, persona=tomori(persona_id=2))  # same locked-turn object
    assert recorders.start(alter_turn, StreamingContext()) is recorder

    later = turn(**OFFERING)
    assert later.locked_turn is not first.locked_turn
    fresh = recorders.start(later, StreamingContext())
    assert fresh is not recorder and recorders.latest(CHANNEL) is fresh
    assert not fresh.holds("1001")


def test_bc9_06_recording_an_output_message_delegates_to_the_recorder_when_present():
    chat_turn = turn(**OFFERING)
    recorder = ChannelRecorders().start(chat_turn, StreamingContext())
    ctx = ChatTurnContext(
        turn=chat_turn,
        current_persona=tomori(),
        context_items=[],
        simplified_messages=[],
        streaming_context=StreamingContext(),
        message_id_map=None,
        targets=TurnTargets({"targets": [], "persona_catalog_complete": False}),
        fast_regeneration_recorder=recorder,
    )
    record_turn_output_message(ctx, "2001", 1)
    assert recorder is not None and recorder.outputs == [("2001", 1)] and recorder.holds("2001")

    without = dataclasses.replace(ctx, fast_regeneration_recorder=None)
    record_turn_output_message(without, "2002", 1)  # nowhere to delegate: nothing happens
    assert recorder.outputs == [("2001", 1)]
