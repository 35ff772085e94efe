"""Reminder occurrences received over the Channels layer group "bot.reminders" (in-memory layer) run
as persona turns (issue 7; build-context.md BC7-01/BC7-02): the same path as a message turn,
through the reminders cog, the planner lock, the pipeline, the provider, delivery and the record."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from types import SimpleNamespace

import discord
import discord.ext.test as dpytest
import pytest
from discord.ext.test import factories
from django.utils import timezone

from bot.conversation.planner import wall_clock_ms
from bot.conversation.providers import GenerationResult, ProviderError
from bot.conversation.reminder_turn_rules import ensure_ping, reminder_lateness
from bot.discord.exts.reminders import RemindersCog
from bot.playground import store
from chatcontext.core.serialize import turn_output
from chatcontext.core.types import ContextItem
from chatcontext.models import PromptRecord
from chatcontext.replay import replay_snapshot
from chatcontext.snapshot import validate_snapshot
from personas import models as m
from personas.reminder_firing import (
    CLAIM_LEASE,
    ChannelLayerDispatcher,
    DueReminder,
    FireReport,
    ReminderKind,
    fire_due_reminders,
)
from tests.bot.due_reminders import create_fired, fire, one_record
from tests.bot.fakes import run_db, setup_server
from tests.waiting import due_now, until

pytestmark = pytest.mark.django_db(transaction=True)

SELF_TASK_LINE = (
    "[System: A task reminder you set for yourself has triggered. "
    'Task: "water the plants". Please execute this task now.]'
)


async def status_of(due: DueReminder) -> m.Reminder:
    return await m.Reminder.objects.aget(pk=due.reminder_id)


def sent_messages() -> list[discord.Message]:
    messages = []
    while not dpytest.sent_queue.empty():
        messages.append(dpytest.get_message())
    return messages


def prompt_text(items: Sequence[ContextItem]) -> str:
    return "\n".join(item.text for item in items)


@pytest.fixture
def replies(monkeypatch) -> list[int]:
    """Ids of the messages the bot replied to (dpytest drops message references on sends)."""
    replied_to: list[int] = []
    original = discord.Message.reply

    async def spy(self: discord.Message, *args, **kwargs):  # type: ignore[no-untyped-def]
        replied_to.append(self.id)
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(discord.Message, "reply", spy)
    return replied_to


class FixedProvider:
    name, model_name = "fixed", "fixed"

    def __init__(self, text: str) -> None:
        self.text = text

    async def generate(self, items: Sequence[ContextItem], *, stream: bool) -> GenerationResult:
        return GenerationResult(self.text)


class FailingProvider:
    name, model_name = "failing", "failing"

    async def generate(self, items: Sequence[ContextItem], *, stream: bool) -> GenerationResult:
        raise ProviderError("provider returned HTTP 500")


def http_error(cls: type[discord.HTTPException], status: int) -> discord.HTTPException:
    return cls(SimpleNamespace(status=status, reason="refused"), "refused")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Persona self-tasks
# ---------------------------------------------------------------------------------------------


async def test_bc7_01_a_due_self_task_runs_a_generated_persona_turn_in_its_channel(harness, replies):
    await run_db(setup_server, harness.guild)
    latest = await dpytest.message("the plants on the sill look dry", member=harness.member(0))
    bot_id = str(harness.bot.user.id)

    due = await fire(
        harness, target=bot_id, kind=ReminderKind.SELF_TASK, purpose="water the plants", late=timedelta(minutes=5)
    )
    record = await one_record()

    [reply] = sent_messages()
    assert reply.author.id == harness.bot.user.id and reply.channel.id == harness.channel.id
    assert reply.content.startswith("[echo] Tomori: I read")
    assert replies == []  # posted in the channel, not as a reply to the latest message
    [prompt] = harness.prompts
    tail = prompt_text(prompt[-3:])
    assert SELF_TASK_LINE in tail
    assert "[System: This task is 5 minutes overdue.]" in tail
    assert "the plants on the sill look dry" in prompt_text(prompt)  # the channel's history is read
    assert record.source == "bot" and record.error == "" and record.reply_text == reply.content
    assert record.persona_nickname == "Tomori"
    assert record.trigger_message_disc_id == str(latest.id)
    doc = validate_snapshot(record.snapshot)
    assert doc["turn"]["reminder"] == {"purpose": "water the plants", "user_disc_id": bot_id, "lateness": "5 minutes"}
    assert (await status_of(due)).status == m.Reminder.Status.FIRED


@pytest.mark.parametrize("harness", [{"presences": True}], indirect=True)
@pytest.mark.django_db(transaction=True, databases=["default", "replay"])
async def test_bc7_01_an_alters_self_task_in_an_empty_channel_speaks_through_the_webhook_and_replays(harness):
    await run_db(setup_server, harness.guild)
    bot_id = str(harness.bot.user.id)

    # Fired within a minute of its time: on time, so no lateness line (the snapshot cannot carry one).
    await fire(
        harness,
        target=bot_id,
        persona_nickname="Ellen",
        kind=ReminderKind.SELF_TASK,
        purpose="water the plants",
        late=timedelta(seconds=10),
    )
    record = await one_record()

    assert sent_messages() == []
    [send] = harness.webhooks.hooks[harness.channel.id].sends
    assert send.username == "Ellen" and send.content.startswith("[echo] Ellen: I read")
    [prompt] = harness.prompts
    assert SELF_TASK_LINE in prompt_text(prompt[-3:])
    assert "overdue" not in prompt_text(prompt)
    # No history to anchor on: the trigger is a synthetic bot-authored message in the channel.
    doc = validate_snapshot(record.snapshot)
    [trigger] = [msg for msg in doc["messages"] if msg["id"] == record.trigger_message_disc_id]
    assert trigger["author"]["id"] == bot_id and trigger["channel_id"] == str(harness.channel.id)
    assert record.persona_nickname == "Ellen" and record.reply_text == send.content

    replayed = turn_output(await run_db(replay_snapshot, doc))
    assert [i["text"] for i in replayed["context_items"]] == [i["text"] for i in record.context_items]


async def test_p01_a_self_task_anchored_on_a_privacy_full_users_message_never_shows_their_text(harness):
    rei = harness.member(2)
    await run_db(setup_server, harness.guild, full_privacy=[rei])
    await dpytest.message("my new address is 4 Harbor Lane", member=rei)

    await fire(harness, target=str(harness.bot.user.id), kind=ReminderKind.SELF_TASK, purpose="water the plants")
    record = await one_record()

    [prompt] = harness.prompts
    assert SELF_TASK_LINE in prompt_text(prompt)
    assert "Harbor Lane" not in prompt_text(prompt)
    assert "Harbor Lane" not in str(record.context_items) + str(record.simplified_messages) + record.reply_text


@pytest.mark.parametrize("kind", [ReminderKind.SELF_TASK, ReminderKind.HUMAN])
async def test_a_reminder_whose_channel_is_gone_is_reported_and_marked_failed(harness, kind):
    await run_db(setup_server, harness.guild)
    target = str(harness.bot.user.id if kind == ReminderKind.SELF_TASK else harness.member(0).id)

    due = await fire(harness, target=target, kind=kind, channel_id=factories.make_id())

    async def failed() -> bool:
        return (await status_of(due)).status == m.Reminder.Status.FAILED

    await until(failed)
    assert (await status_of(due)).last_error.startswith("channel gone")
    assert dpytest.sent_queue.empty() and harness.prompts == []
    assert not await PromptRecord.objects.aexists()


# ---------------------------------------------------------------------------------------------
# Human reminders
# ---------------------------------------------------------------------------------------------


async def test_bc7_01_a_human_reminder_is_a_persona_turn_whose_reply_mentions_the_user(harness, replies):
    await run_db(setup_server, harness.guild)
    ann = str(harness.member(0).id)
    await dpytest.message("back from lunch", member=harness.member(1))

    await fire(harness, target=ann, late=timedelta(minutes=3))
    record = await one_record()

    [reply] = sent_messages()
    assert reply.content.startswith(("[echo] Tomori: I read", f"<@{ann}> [echo] Tomori: I read"))
    assert f"<@{ann}>" in reply.content and replies == []
    [prompt] = harness.prompts
    tail = prompt_text(prompt[-3:])
    assert 'Reminder: "stretch your legs". Focus on reminding and pinging' in tail
    assert "[System: You are also 3 minutes late in reminding the user.]" in tail
    doc = validate_snapshot(record.snapshot)
    assert doc["turn"]["reminder"] == {"purpose": "stretch your legs", "user_disc_id": ann, "lateness": "3 minutes"}
    assert record.source == "bot" and record.error == ""


async def test_bc7_01_a_generated_reminder_without_a_mention_still_pings_the_user(harness):
    await run_db(setup_server, harness.guild)
    ann = str(harness.member(0).id)
    harness.bot.runner.provider_factory = lambda config, name: FixedProvider("Time to stretch those legs, Ann!")

    await fire(harness, target=ann)
    await one_record()

    [reply] = sent_messages()
    assert reply.content == f"<@{ann}> Time to stretch those legs, Ann!"


async def test_an_alters_human_reminder_goes_through_the_webhook(harness):
    await run_db(setup_server, harness.guild)
    ann = str(harness.member(0).id)

    await fire(harness, target=ann, persona_nickname="Ellen")
    record = await one_record()

    [send] = harness.webhooks.hooks[harness.channel.id].sends
    assert send.username == "Ellen" and f"<@{ann}>" in send.content
    assert send.content.removeprefix(f"<@{ann}> ").startswith("[echo] Ellen: I read")
    assert record.persona_nickname == "Ellen"


@pytest.mark.parametrize(
    ("kind", "notice"),
    [
        (ReminderKind.HUMAN, "⏰ <@{ann}> Reminder: stretch your legs"),
        (ReminderKind.SELF_TASK, "⏰ Task due: stretch your legs"),
    ],
)
async def test_when_generation_fails_the_plain_reminder_notice_is_posted(harness, kind, notice):
    await run_db(setup_server, harness.guild)
    ann = str(harness.member(0).id)
    harness.bot.runner.provider_factory = lambda config, name: FailingProvider()

    due = await fire(harness, target=ann if kind == ReminderKind.HUMAN else str(harness.bot.user.id), kind=kind)
    record = await one_record()

    [posted] = sent_messages()
    assert posted.content == notice.format(ann=ann)
    assert record.error == "provider returned HTTP 500" and record.reply_text == ""
    assert (await status_of(due)).status == m.Reminder.Status.FIRED


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (http_error(discord.Forbidden, 403), m.Reminder.Status.FAILED),
        (http_error(discord.HTTPException, 500), m.Reminder.Status.PENDING),
    ],
)
async def test_a_refused_post_is_reported_back_gone_channels_fail_others_retry(harness, monkeypatch, error, status):
    await run_db(setup_server, harness.guild)

    async def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise error

    monkeypatch.setattr("bot.discord.reminder_turns.send_as_persona", refuse)
    due = await fire(harness, target=str(harness.member(0).id))
    record = await one_record()

    async def settled() -> bool:
        return (await status_of(due)).status == status

    await until(settled)
    row = await status_of(due)
    assert record.error == f"delivery failed (HTTP {error.status})"
    assert (row.next_attempt_at is not None) == (status == m.Reminder.Status.PENDING)


async def test_a_channel_that_cannot_be_read_right_now_is_retried(harness, monkeypatch):
    await run_db(setup_server, harness.guild)

    async def unavailable(channel):  # type: ignore[no-untyped-def]
        raise http_error(discord.HTTPException, 503)

    monkeypatch.setattr("bot.discord.reminder_turns.latest_message", unavailable)
    due = await fire(harness, target=str(harness.bot.user.id), kind=ReminderKind.SELF_TASK)

    async def retried() -> bool:
        return (await status_of(due)).delivery_retry_count == 1

    await until(retried)
    row = await status_of(due)
    assert row.status == m.Reminder.Status.PENDING and row.last_error == "HTTP 503"
    assert harness.prompts == [] and dpytest.sent_queue.empty()


async def test_reminders_of_guilds_this_process_does_not_serve_are_left_alone(harness):
    await run_db(setup_server, harness.guild)
    due = await run_db(create_fired, harness.guild.id, harness.channel.id, str(harness.member(0).id))
    elsewhere = replace(due, server_disc_id=str(factories.make_id()))

    await harness.bot.get_cog("RemindersCog").fire(elsewhere)

    assert dpytest.sent_queue.empty() and harness.prompts == []
    assert (await status_of(due)).status == m.Reminder.Status.CLAIMED  # left for the process that serves it


async def test_a_playground_channels_reminder_on_a_served_guild_is_left_to_the_web_process(harness):
    """Not "channel gone": the channel is the playground's (bot.playground.reminder_listener posts it)."""
    server = await run_db(setup_server, harness.guild)
    playground = await run_db(store.create_channel, server, "lounge", now_ms=wall_clock_ms())
    due = await run_db(create_fired, harness.guild.id, int(playground.disc_id), str(harness.member(0).id))

    await harness.bot.get_cog("RemindersCog").fire(due)

    assert dpytest.sent_queue.empty() and harness.prompts == []
    assert (await status_of(due)).status == m.Reminder.Status.CLAIMED


# ---------------------------------------------------------------------------------------------
# Acknowledged delivery (issue 13 item 6): fired only once the bot posted it
# ---------------------------------------------------------------------------------------------


async def tick(at) -> FireReport:  # type: ignore[no-untyped-def]
    """One beat tick of the Celery task at ``at``, handing occurrences over the layer."""
    return await run_db(fire_due_reminders, ChannelLayerDispatcher(), now=at)


async def stop_listening(harness) -> None:  # type: ignore[no-untyped-def]
    await harness.bot.remove_cog("RemindersCog")


async def start_listening(harness) -> None:  # type: ignore[no-untyped-def]
    cog = RemindersCog(harness.bot)
    await harness.bot.add_cog(cog)
    await asyncio.wait_for(cog.listening.wait(), timeout=30)  # in the group before the next tick


async def test_fired_while_no_bot_listens_it_is_delivered_once_late_when_a_bot_starts(harness):
    await run_db(setup_server, harness.guild)
    reminder = await due_now(harness)
    await stop_listening(harness)  # a restart: nobody is in the group

    t0 = timezone.now()
    assert (await tick(t0)).dispatched == 1
    assert (await m.Reminder.objects.aget(pk=reminder.pk)).status == m.Reminder.Status.CLAIMED
    await tick(t0 + CLAIM_LEASE)  # nobody took it: back to pending, with backoff
    waiting = await m.Reminder.objects.aget(pk=reminder.pk)
    assert waiting.status == m.Reminder.Status.PENDING and "no bot process took it" in waiting.last_error

    await start_listening(harness)
    assert (await tick(waiting.next_attempt_at)).dispatched == 1
    await one_record()

    async def fired() -> bool:
        return (await m.Reminder.objects.aget(pk=reminder.pk)).status == m.Reminder.Status.FIRED

    await until(fired)
    for later in (timedelta(minutes=30), timedelta(hours=2)):
        await tick(waiting.next_attempt_at + later)
    [reply] = sent_messages()
    assert f"<@{harness.member(0).id}>" in reply.content
    assert await PromptRecord.objects.acount() == 1


async def test_a_reminder_fired_with_no_bot_listening_is_not_lost_and_is_posted_once_later(harness):
    """Issue 13 item 6 in the terms of the code before it: a tick while no cog listens must not
    leave the reminder fired; ticks after a bot starts post it exactly once."""
    await run_db(setup_server, harness.guild)
    reminder = await due_now(harness)
    await stop_listening(harness)

    async def status() -> str:
        return (await m.Reminder.objects.aget(pk=reminder.pk)).status

    async def settled() -> bool:  # the listener is done with what the last tick handed over
        return await status() in (m.Reminder.Status.PENDING, m.Reminder.Status.FIRED, m.Reminder.Status.FAILED)

    t0 = timezone.now()
    await tick(t0)
    assert await status() != m.Reminder.Status.FIRED
    assert sent_messages() == [] and not await PromptRecord.objects.aexists()

    await start_listening(harness)
    posted = []
    for later in (timedelta(minutes=5), timedelta(minutes=30), timedelta(hours=2)):
        await tick(t0 + later)
        await until(settled)
        posted += sent_messages()
    assert [f"<@{harness.member(0).id}>" in message.content for message in posted] == [True]
    assert await status() == m.Reminder.Status.FIRED


async def test_a_bot_that_posted_but_died_before_confirming_posts_it_at_most_once_more(harness, monkeypatch):
    await run_db(setup_server, harness.guild)
    reminder = await due_now(harness)

    async def dies(due: DueReminder) -> None:  # the process stops right after Discord took the post
        return None

    monkeypatch.setattr("bot.discord.reminder_turns.confirm_posted", dies)
    t0 = timezone.now()
    await tick(t0)
    await one_record()
    row = await m.Reminder.objects.aget(pk=reminder.pk)
    assert row.status == m.Reminder.Status.DELIVERING  # taken and posted, never confirmed
    monkeypatch.undo()

    await tick(row.next_attempt_at)  # the lease ran out
    again = await m.Reminder.objects.aget(pk=reminder.pk)
    assert again.status == m.Reminder.Status.PENDING and "did not confirm" in again.last_error
    await tick(again.next_attempt_at)

    async def fired() -> bool:
        return (await m.Reminder.objects.aget(pk=reminder.pk)).status == m.Reminder.Status.FIRED

    await until(fired)
    await tick(again.next_attempt_at + timedelta(hours=1))
    assert len(sent_messages()) == 2  # the post the dead process made, and one more
    assert await PromptRecord.objects.acount() == 2


# ---------------------------------------------------------------------------------------------
# Pure parts
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("late_ms", "expected"),
    [
        (0, None),
        (59_999, None),
        (-5_000, None),
        (5 * 60_000 + 12_345, "5 minutes"),
        (60_000, "1 minute"),
        ((2 * 60 + 5) * 60_000 + 59_000, "2 hours, 5 minutes"),
        (26 * 3_600_000, "1 day, 2 hours"),
    ],
)
def test_bc7_01_lateness_is_whole_minutes_and_nothing_under_a_minute(late_ms, expected):
    assert reminder_lateness(1_000_000, 1_000_000 + late_ms) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hey <@42>, stretch!", "hey <@42>, stretch!"),
        ("hey <@!42>, stretch!", "hey <@!42>, stretch!"),
        ("hey @{<@42>}, stretch!", "hey <@42>, stretch!"),
        ("hey @{42}, stretch!", "hey <@42>, stretch!"),
        ("time to stretch!", "<@42> time to stretch!"),
        ("hey <@420>, stretch!", "<@42> hey <@420>, stretch!"),
    ],
)
def test_bc7_01_a_human_reminders_reply_pings_its_recipient(text, expected):
    assert ensure_ping(text, "42") == expected


def test_bc7_01_matrix_recipients_are_left_as_written():
    assert ensure_ping("hey @al, stretch!", "@al:mx.org") == "hey @al, stretch!"


# ---------------------------------------------------------------------------------------------
# Without Redis (issue 15 item 7): the bot process fires its own reminders
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("harness", [{"embedded_reminders": True}], indirect=True)
async def test_an_embedded_bot_fires_its_due_reminders_itself_once(harness):
    cog = harness.bot.get_cog("RemindersCog")
    assert cog.scheduler.running
    await cog.scheduler.stop()  # ticked by hand below, at a time the test chooses
    await run_db(setup_server, harness.guild)
    reminder = await due_now(harness)

    assert (await cog.scheduler.tick()).dispatched == 1

    async def fired() -> bool:
        return (await m.Reminder.objects.aget(pk=reminder.pk)).status == m.Reminder.Status.FIRED

    await until(fired)
    [ping] = sent_messages()
    assert f"<@{harness.member(0).id}>" in ping.content
    assert (await cog.scheduler.tick()).dispatched == 0


async def test_a_bot_created_without_embedded_reminders_runs_no_scheduler(harness):
    assert not harness.bot.get_cog("RemindersCog").scheduler.running
