"""The playground's turn path (issue 8): a stored message goes through the bot's admission, turn
planning, Build Context over ``PlaygroundTransport``, generation and the prompt-record writer, on
the demo server (tests/bot/playground/conftest.py)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.core.files.uploadedfile import SimpleUploadedFile

from bot.conversation.admission import Skip
from bot.conversation.jobs import TurnJob, build_chat_turn, message_turn
from bot.conversation.providers import GenerationResult
from bot.conversation.texts import ERROR_MESSAGES
from bot.playground import store
from bot.playground.models import PlaygroundMessage
from bot.playground.outlet import PlaygroundOutlet
from bot.playground.service import (
    PLANNER,
    PlaygroundOutcome,
    playground_bot,
    playground_runner,
    post_playground_message,
    send_playground_message,
    server_state,
)
from bot.playground.transport import PlaygroundTransport
from chatcontext.core.serialize import turn_output
from chatcontext.core.types import ContextItem
from chatcontext.models import PromptRecord
from chatcontext.replay import replay_snapshot
from chatcontext.snapshot import validate_snapshot
from personas import actions
from personas.models import DiscordUser, Persona, PrivacyLevel, Reminder, ServerEmoji
from tests.actors import TEST_ACTOR
from tests.bot.image_server import png_bytes
from tests.bot.playground.conftest import BOT, JUN, MINA, NOW_MS, OKABE, REI, SORA, Demo
from tests.bot.playground.turns import FailingProvider, post, prompt_text

SECRET = "my new address is 4 Harbor Lane"
QUEUE_WAIT_S = 30


def row_ids(text: str) -> str:
    """Memory ids (``ID:N``) are database row ids: the snapshot format has none, so a replay numbers
    its scratch rows afresh, and on PostgreSQL the live sequence has moved on."""
    return re.sub(r"\bID:\d+", "ID:n", text)


def profile_block(record: PromptRecord) -> str:
    [block] = [i["text"] for i in record.context_items if i["tag"] == "knowledge_users_in_conversation"]
    return block


def test_p04_a_minimal_users_mention_gets_a_reply_whose_prompt_holds_their_profile_block(demo):
    records = send_playground_message(demo.channel, MINA, f"{demo.mention()} still up? I'm studying tonight")

    [record] = records
    assert record.source == PromptRecord.Source.PLAYGROUND
    assert record.persona == demo.tomori and record.provider == "echo" and record.error == ""
    assert record.channel_disc_id == demo.channel.disc_id and record.channel_name == "lounge"
    profile = profile_block(record)
    assert "Minnie (Mention: @{Mina-chan}" in profile  # her saved nickname and member name
    assert "Pronouns: she/her" in profile
    assert "studying for a chemistry exam" in profile  # a memory of Tomori's lineage
    trigger, reply = PlaygroundMessage.objects.filter(channel=demo.channel)
    assert record.trigger_message_disc_id == trigger.disc_id and trigger.author_disc_id == MINA
    assert reply.reply_to == trigger and reply.persona == demo.tomori and reply.is_bot
    assert reply.author_disc_id == BOT and reply.webhook_disc_id == ""  # the main persona speaks as the bot
    assert reply.content == record.reply_text
    assert reply.content.startswith("[echo] Tomori: I read") and "I'm studying tonight" in reply.content
    assert trigger.disc_id.isdigit() and int(reply.disc_id) > int(trigger.disc_id)


def test_p01_a_full_users_message_is_absent_from_the_next_prompt_and_the_exclusion_log_says_why(demo):
    post(demo, MINA, f"{demo.mention()} good evening")
    rei_said = post(demo, REI, f"{demo.mention()} {SECRET}")
    [record] = post(demo, MINA, "tomori, did anyone post an address?").records

    assert rei_said.skip == Skip.PRIVACY_FULL and rei_said.records == []
    text = prompt_text(record)
    assert "did anyone post an address?" in text and "good evening" in text
    assert "Harbor Lane" not in text + str(record.simplified_messages) + str(record.exclusions)
    assert {"message_id": rei_said.message.disc_id, "author_id": REI, "reason": "privacy_full"} in record.exclusions


def test_p01_switching_an_identity_to_full_removes_their_earlier_message_from_the_next_prompt(demo):
    post(demo, JUN, "the vending machine on floor 3 eats coins")
    [before] = post(demo, MINA, f"{demo.mention()} any news?").records
    actions.set_privacy_level(DiscordUser.objects.get(user_disc_id=JUN), PrivacyLevel.FULL, actor=TEST_ACTOR)
    [after] = post(demo, MINA, f"{demo.mention()} and now?").records

    assert "vending machine" in prompt_text(before)
    assert "vending machine" not in prompt_text(after)
    assert any(e.get("author_id") == JUN and e["reason"] == "privacy_full" for e in after.exclusions)


def test_p01_a_full_user_cannot_trigger(demo):
    outcome = post(demo, REI, f"{demo.mention()} tomori, pip, anyone?")

    assert outcome.skip == Skip.PRIVACY_FULL
    assert outcome.records == [] and not PromptRecord.objects.exists()
    assert list(PlaygroundMessage.objects.values_list("author_disc_id", flat=True)) == [REI]


def test_a_persona_block_stops_that_persona_only(demo):
    blocked = post(demo, SORA, "pip, want a shiny button?")
    answered = post(demo, SORA, "tomori, want a detective novel?")

    assert blocked.skip == Skip.BLOCKED and blocked.records == []
    assert [r.persona for r in answered.records] == [demo.tomori]


def test_a_message_that_addresses_nobody_is_not_a_trigger(demo):
    outcome = post(demo, MINA, "good evening everyone")

    assert outcome.skip == Skip.NOT_TRIGGERED and outcome.records == []


def test_the_personalization_blacklist_does_not_stop_triggering(demo):
    [record] = post(demo, OKABE, "tomori, game night this Friday?").records

    assert "runs the Friday game night" not in prompt_text(record)  # P-02: no memories of Okabe
    assert {"user_id": OKABE, "reason": "blacklisted", "scope": "profile"} in record.exclusions


def test_an_alters_trigger_word_is_answered_through_the_channel_webhook(demo):
    [result] = post(demo, MINA, "pip, what's your favourite button?").results

    reply = result.reply
    assert reply is not None and reply.persona == demo.pip
    assert reply.webhook_disc_id == demo.channel.webhook_disc_id == reply.author_disc_id
    assert reply.author_name == "Pip" and reply.content.startswith("[echo] Pip:")
    assert result.record.persona_nickname == "Pip"


def test_a_reply_to_a_personas_message_addresses_that_persona(demo):
    [first] = post(demo, MINA, "pip, hello").results
    assert first.reply is not None

    [second] = post(demo, MINA, "what do you collect?", reply_to=first.reply).records

    assert second.persona == demo.pip
    assert "what do you collect?" in second.reply_text


def test_a_mention_and_an_alters_trigger_word_plan_both_personas_in_catalog_order(demo):
    outcome = post(demo, MINA, f"{demo.mention()} and pip, good night")

    assert [r.persona for r in outcome.records] == [demo.tomori, demo.pip]
    # BC1-02: the second persona reads the channel again and sees the first one's reply.
    assert "[echo] Tomori:" in prompt_text(outcome.records[1])


class GatedProvider:
    """Holds the first generation until released, so a second trigger arrives mid-turn."""

    name = model_name = "gated"

    def __init__(self, started: asyncio.Event, release: asyncio.Event) -> None:
        self.started, self.release = started, release

    async def generate(self, items: Sequence[ContextItem], *, stream: bool, on_delta: Any = None) -> GenerationResult:
        self.started.set()
        await self.release.wait()
        return GenerationResult(text=f"answered after {len(items)} items")


def test_bc9_04_a_trigger_arriving_during_a_turn_is_queued_and_carries_is_from_queue(demo):
    async def scenario() -> tuple[PlaygroundOutcome, PlaygroundOutcome]:
        started, release = asyncio.Event(), asyncio.Event()
        runner = playground_runner(provider_factory=lambda config, name: GatedProvider(started, release))
        first = asyncio.create_task(post_playground_message(demo.channel, MINA, "tomori, first", runner=runner))
        async with asyncio.timeout(QUEUE_WAIT_S):
            await started.wait()
            second = asyncio.create_task(post_playground_message(demo.channel, JUN, "tomori, second", runner=runner))
            while PLANNER.queued(demo.channel.disc_id) == 0:
                await asyncio.sleep(0.01)
            release.set()
            return await first, await second

    first, second = async_to_sync(scenario)()

    [one], [two] = first.records, second.records
    assert one.snapshot["turn"]["is_from_queue"] is False and one.streaming_context["reply_notice_state"] is None
    assert two.snapshot["turn"]["is_from_queue"] is True
    assert two.streaming_context["reply_notice_state"] == {"attempted": False, "sent": False}
    # The queued turn ran after the first one's reply was posted, and saw it.
    assert "answered after" in prompt_text(two)
    replies = list(PlaygroundMessage.objects.filter(is_bot=True).values_list("reply_to__content", flat=True))
    assert replies == ["tomori, first", "tomori, second"]


def test_a_failed_generation_posts_the_bots_short_notice_and_the_record_keeps_the_error(demo):
    runner = playground_runner(provider_factory=lambda config, name: FailingProvider())

    [result] = post(demo, MINA, "tomori, are you there?", runner=runner).results

    assert result.reply is None
    assert result.record.error == "provider returned HTTP 500" and result.record.reply_text == ""
    notice = PlaygroundMessage.objects.get(is_bot=True)
    assert notice.content == ERROR_MESSAGES["en-US"] and notice.persona is None
    assert notice.reply_to is not None and notice.reply_to.content == "tomori, are you there?"


@pytest.mark.django_db(databases=["default", "replay"])
def test_the_records_snapshot_replays_to_the_same_prompt(demo):
    # The snapshot format (turn-snapshot.md §1) carries no emojis, sample dialogue or reminder
    # channels, so a replay cannot show them: the demo server is reduced to what the format holds.
    ServerEmoji.objects.filter(server=demo.server).delete()
    Persona.objects.filter(server=demo.server).update(sample_dialogue=[])
    Reminder.objects.filter(server=demo.server).delete()
    jun_said = post(
        demo, JUN, "look what I found", attachments=[SimpleUploadedFile("owl.png", png_bytes(), "image/png")]
    )
    store.toggle_reaction(jun_said.message, "🦉", SORA)
    store.toggle_reaction(jun_said.message, "🦉", MINA)
    post(demo, MINA, "pip, a button for you")
    [record] = post(demo, MINA, f"{demo.mention()} what did <@{JUN}> find?", reply_to=jun_said.message).records

    text = prompt_text(record)
    # The reply's reference, the attachment and the reactors reached the prompt.
    assert "by Jun saying: look what I found (with 1 image)" in text and "🦉 x2 by" in text
    assert "[echo] Pip:" in text
    replayed = turn_output(replay_snapshot(validate_snapshot(record.snapshot), transcriber=None))
    assert [row_ids(i["text"]) for i in replayed["context_items"]] == [row_ids(i["text"]) for i in record.context_items]
    assert record.snapshot["channel"] == {
        "id": demo.channel.disc_id,
        "name": "lounge",
        "topic": "Late-night chat",
        "parent_id": None,
    }


def test_a_playground_turn_is_built_like_a_discord_turn_a_bot_authored_anchor_is_a_self_message(demo):
    """One ``build_chat_turn`` for every surface: the playground's turns once set no
    ``is_self_message`` (nor ``thread_parent_id``), which a turn anchored on the bot's own post (a
    reminder turn's) needs; the channel facts and the bot account now come from the outlet."""
    state = server_state(demo.server)
    bot_user = playground_bot(demo.channel, state)
    posted = store.store_bot_message(
        demo.channel, "⏰ Task due: water the plants", persona=None, bot_user=bot_user, reply_to=None, now_ms=NOW_MS
    )
    anchor = PlaygroundTransport(demo.channel, bot_user=bot_user).fetch_message(posted.disc_id)
    outlet = PlaygroundOutlet(demo.channel, posted, bot_user, clock=lambda: NOW_MS)
    tomori = state.main_persona
    job = TurnJob(message_turn(anchor, (tomori,)), outlet, (tomori,), state, author=None)

    turn = build_chat_turn(job, tomori, 0, now_ms=NOW_MS)

    assert turn.is_self_message and turn.bot_user.id == BOT and turn.thread_parent_id is None
    assert (turn.channel_name, turn.channel_description) == ("lounge", "Late-night chat")


@pytest.mark.parametrize(
    "failing",
    ["bot.conversation.runner.resolve_images", "bot.playground.service.admit_message"],
    ids=["run", "admission"],
)
def test_a_turn_that_failed_is_over_not_left_for_the_next_start_to_call_interrupted(
    demo: Demo, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    async def bug(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in the turn")

    monkeypatch.setattr(failing, bug)
    with pytest.raises(RuntimeError, match="a bug in the turn"):
        post(demo, MINA, "tomori, look at this")
    assert not PlaygroundMessage.objects.get(author_disc_id=MINA, content="tomori, look at this").turn_pending
    assert store.note_interrupted_turns() == 0
