"""dpytest drives the real bot end to end (issue 6 acceptance): Discord message → admission →
planner → build_turn_context → provider → delivery → prompt record.

dpytest limits, worked around here: it refuses sharded clients (the tests run ``UnshardedTomoriBot``,
the same mixin as the production ``TomoriBot``), has no webhooks (alters deliver to ``FakeWebhook``),
returns history oldest first (reversed by the ``newest_first_history`` fixture) and drops
``message_reference`` on sends (native replies are checked by spying on ``Message.reply``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import timedelta

import discord
import discord.ext.test as dpytest
import pytest
from discord.ext.test import backend
from django.utils import timezone

from bot.conversation.providers import GenerationResult
from bot.conversation.texts import ERROR_MESSAGES
from bot.discord.delivery import REPLY_CONTEXT_TOKEN
from chatcontext.core.serialize import turn_output
from chatcontext.core.types import ContextItem
from chatcontext.models import PromptRecord
from chatcontext.replay import replay_snapshot
from chatcontext.snapshot import validate_snapshot
from personas import models as m
from tests.bot.fakes import ELLEN_AVATAR, post_reply, run_db, setup_server

pytestmark = pytest.mark.django_db(transaction=True)


def prompt_text(items: Sequence[ContextItem]) -> str:
    return "\n".join(item.text for item in items)


def sent_messages() -> list[discord.Message]:
    messages = []
    while not dpytest.sent_queue.empty():
        messages.append(dpytest.get_message())
    return messages


async def records() -> list[PromptRecord]:
    return [r async for r in PromptRecord.objects.order_by("created_at", "id")]


class FixedProvider:
    name, model_name = "fixed", "fixed"

    def __init__(self, text: str) -> None:
        self.text = text

    async def generate(self, items: Sequence[ContextItem], *, stream: bool, **_: object) -> GenerationResult:
        return GenerationResult(self.text)


async def test_a_mention_gets_a_native_reply_built_from_the_assembled_prompt(harness, monkeypatch):
    await run_db(setup_server, harness.guild)
    replied_to: list[int] = []
    original_reply = discord.Message.reply

    async def spy_reply(self: discord.Message, *args, **kwargs):  # type: ignore[no-untyped-def]
        replied_to.append(self.id)
        return await original_reply(self, *args, **kwargs)

    monkeypatch.setattr(discord.Message, "reply", spy_reply)
    await dpytest.message("good evening everyone", member=harness.member(1))
    trigger = await dpytest.message(f"<@{harness.bot.user.id}> how is the night shift?", member=harness.member(0))

    [reply] = sent_messages()  # the echo reply names "Tomori" yet triggers nothing: no reply loop
    [prompt] = harness.prompts
    assert reply.content.startswith(f"[echo] Tomori: I read {len(prompt)} prompt items; you said:")
    assert "how is the night shift?" in reply.content
    assert "good evening everyone" in prompt_text(prompt)
    assert replied_to == [trigger.id]
    [record] = await records()
    assert record.source == "bot" and record.provider == "echo" and record.error == ""
    assert record.trigger_message_disc_id == str(trigger.id)
    assert record.reply_text == reply.content
    assert record.persona_nickname == "Tomori"
    assert len(record.context_items) == len(prompt)


def _always_reply(guild: discord.Guild) -> None:
    setup_server(guild)
    m.ServerSettings.objects.filter(server__server_disc_id=str(guild.id)).update(always_reply_enabled=True)


async def test_always_reply_the_main_persona_answers_a_message_without_any_trigger(harness):
    await run_db(_always_reply, harness.guild)

    untriggered = await dpytest.message("is the workshop open tonight?", member=harness.member(0))

    [reply] = sent_messages()
    assert reply.content.startswith("[echo] Tomori:") and "is the workshop open tonight?" in reply.content
    [record] = await records()
    assert record.persona_nickname == "Tomori" and record.trigger_message_disc_id == str(untriggered.id)
    assert harness.webhooks.hooks == {}  # the alter was not addressed


async def test_without_always_reply_a_message_without_a_trigger_gets_no_answer(harness):
    await run_db(setup_server, harness.guild)

    await dpytest.message("is the workshop open tonight?", member=harness.member(0))

    assert sent_messages() == [] and harness.prompts == [] and await records() == []


async def test_an_alters_trigger_word_produces_a_webhook_message(harness):
    await run_db(setup_server, harness.guild)

    await dpytest.message("ellen, what do you think of the rain?", member=harness.member(0))

    assert sent_messages() == []  # nothing native: the alter speaks through the channel webhook
    [send] = harness.webhooks.hooks[harness.channel.id].sends
    assert send.username == "Ellen" and send.avatar_url == ELLEN_AVATAR
    assert send.content.startswith("[echo] Ellen: I read")
    assert "what do you think of the rain?" in send.content
    assert send.embed is discord.utils.MISSING  # not queued: no reply notice
    [record] = await records()
    assert record.persona_nickname == "Ellen" and record.reply_text == send.content


async def test_p01_a_privacy_full_users_messages_never_reach_the_provider(harness):
    rei = harness.member(2)
    await run_db(setup_server, harness.guild, full_privacy=[rei])

    await dpytest.message("my new address is 4 Harbor Lane, send snacks", member=rei)
    await dpytest.message("tomori, did anyone post an address?", member=harness.member(0))

    [prompt] = harness.prompts
    text = prompt_text(prompt)
    assert "did anyone post an address?" in text
    assert "Harbor Lane" not in text
    [record] = await records()
    assert "Harbor Lane" not in str(record.context_items) + str(record.simplified_messages)


async def test_p01_a_privacy_full_user_cannot_trigger(harness):
    rei = harness.member(2)
    await run_db(setup_server, harness.guild, full_privacy=[rei])

    await dpytest.message("tomori, are you there?", member=rei)

    assert sent_messages() == [] and harness.prompts == []
    assert await records() == []


async def test_bot_authored_triggers_are_ignored(harness):
    await run_db(setup_server, harness.guild)
    other_bot = backend.make_user("helperbot", 9)
    other_bot.bot = True
    bot_member = backend.make_member(other_bot, harness.guild)

    await dpytest.message(f"<@{harness.bot.user.id}> tomori ellen hello", member=bot_member)
    backend.make_message("tomori, talk to yourself", harness.bot.user, harness.channel)
    await dpytest.run_all_events()

    assert sent_messages() == [] and harness.prompts == []
    assert harness.webhooks.hooks == {}


async def test_two_triggers_in_one_channel_are_answered_in_order_the_second_from_the_queue(harness):
    await run_db(setup_server, harness.guild)
    ann, bob = harness.member(0), harness.member(1)
    bot = harness.bot
    channel_id = str(harness.channel.id)
    inner = bot.runner.provider_factory

    class SecondTriggerArrivesMidTurn:
        """During the first generation, Bob's trigger arrives and must wait in the channel queue."""

        def __init__(self, wrapped) -> None:  # type: ignore[no-untyped-def]
            self.wrapped, self.name, self.model_name = wrapped, wrapped.name, wrapped.model_name

        async def generate(self, items, *, stream, on_delta=None):  # type: ignore[no-untyped-def]
            if len(harness.prompts) == 0:
                backend.make_message("tomori, second question please", bob, harness.channel)
                for _ in range(3000):  # wait (bounded) for the chat cog to queue it
                    if bot.planner.queued(channel_id):
                        break
                    await asyncio.sleep(0.01)
                assert bot.planner.queued(channel_id) == 1
            return await self.wrapped.generate(items, stream=stream, on_delta=on_delta)

    bot.runner.provider_factory = lambda config, name: SecondTriggerArrivesMidTurn(inner(config, name))

    await dpytest.message("tomori, first question", member=ann)

    first, second = sent_messages()
    assert "first question" in first.content
    assert "second question please" in second.content
    r1, r2 = await records()
    assert r1.streaming_context["reply_notice_state"] is None
    # BC9-04: the queued turn carries a fresh reply-notice state (inert for a native reply) ...
    assert r2.streaming_context["reply_notice_state"] == {"attempted": False, "sent": False}
    # ... and BC8-08's queued-reply directive points the persona at Bob's earlier message.
    assert "Create a reply as Tomori to " in prompt_text(harness.prompts[1])
    assert "message from earlier" in prompt_text(harness.prompts[1])
    assert not bot.planner.is_busy(channel_id)


async def test_a_queued_alter_reply_carries_the_replying_to_notice(harness):
    await run_db(setup_server, harness.guild)
    bob = harness.member(1)
    bot = harness.bot
    channel_id = str(harness.channel.id)
    inner = bot.runner.provider_factory

    class QueueEllen:
        def __init__(self, wrapped) -> None:  # type: ignore[no-untyped-def]
            self.wrapped, self.name, self.model_name = wrapped, wrapped.name, wrapped.model_name

        async def generate(self, items, *, stream, on_delta=None):  # type: ignore[no-untyped-def]
            if len(harness.prompts) == 0:
                backend.make_message("ellen, your turn", bob, harness.channel)
                for _ in range(3000):
                    if bot.planner.queued(channel_id):
                        break
                    await asyncio.sleep(0.01)
            return await self.wrapped.generate(items, stream=stream, on_delta=on_delta)

    bot.runner.provider_factory = lambda config, name: QueueEllen(inner(config, name))

    await dpytest.message("tomori, hello", member=harness.member(0))

    [send] = harness.webhooks.hooks[harness.channel.id].sends
    assert send.username == "Ellen"
    assert send.embed.footer.text == REPLY_CONTEXT_TOKEN
    assert "Replying to" in send.embed.description
    _, ellen_record = await records()
    assert ellen_record.streaming_context["reply_notice_state"] == {"attempted": True, "sent": True}


async def test_a_5000_character_reply_arrives_as_three_messages_with_code_fences_intact(harness):
    await run_db(setup_server, harness.guild)
    code = "\n".join(f"    value_{i:04d} = compute({i}) + offset  # step {i}" for i in range(101))
    long_reply = "Here is the script:\n```python\n" + code + "\n```\nThat should do it."
    assert 4950 <= len(long_reply) <= 5050
    harness.bot.runner.provider_factory = lambda config, name: FixedProvider(long_reply)

    await dpytest.message("tomori, write me a script", member=harness.member(0))

    pieces = sent_messages()
    assert len(pieces) == 3
    for piece in pieces:
        assert len(piece.content) <= 2000
        fences = [line for line in piece.content.split("\n") if line.strip().startswith("```")]
        assert len(fences) % 2 == 0
    assert pieces[1].content.startswith("```python\n") and pieces[2].content.startswith("```python\n")
    [record] = await records()
    assert record.reply_text == long_reply


@pytest.mark.parametrize(
    ("model", "error"),
    [("fail", "provider returned HTTP 500: llama_decode failed: out of memory"), ("slow", "provider timed out")],
)
async def test_provider_failure_over_http_shows_one_short_error_and_the_bot_keeps_running(
    harness, llm_server, settings, model, error
):
    settings.LLM_TIMEOUT_SECONDS = 0.3

    def configure(model_name: str) -> None:
        m.ServerSettings.objects.filter(server__server_disc_id=str(harness.guild.id)).update(
            llm_provider="openai", llm_base_url=llm_server.base_url, llm_model=model_name
        )

    await run_db(setup_server, harness.guild)
    await run_db(configure, model)

    await dpytest.message("tomori, are you awake?", member=harness.member(0))

    [notice] = sent_messages()
    assert notice.content == ERROR_MESSAGES["en-US"]
    assert len(llm_server.requests) == 2  # the first attempt and one retry
    [failed] = await records()
    assert failed.error == error and failed.reply_text == "" and failed.provider == "openai"
    assert failed.model_name == model and failed.context_items

    await run_db(configure, "ok")
    harness.bot.get_cog("ChatCog").forget_server(str(harness.guild.id))
    await dpytest.message("tomori, how about now?", member=harness.member(0))

    [reply] = sent_messages()
    assert reply.content == llm_server.reply_text
    _, succeeded = await records()
    assert succeeded.error == "" and succeeded.reply_text == llm_server.reply_text
    assert succeeded.usage["total_tokens"] == 18
    assert "how about now?" in str(llm_server.requests[-1]["messages"])


# The snapshot format has no "presence intent" flag and replays as if presence were known, so the
# live bot runs with the presences intent here for both prompts to agree.
@pytest.mark.parametrize("harness", [{"presences": True}], indirect=True)
@pytest.mark.django_db(transaction=True, databases=["default", "replay"])
async def test_the_record_keeps_a_turn_snapshot_that_replays_to_the_same_prompt(harness):
    rei = harness.member(2)
    await run_db(setup_server, harness.guild, full_privacy=[rei])
    await dpytest.message("my new address is 4 Harbor Lane", member=rei)
    await dpytest.message("evening! anyone up for a round later?", member=harness.member(1))
    trigger = await dpytest.message(f"<@{harness.bot.user.id}> what did Bob ask?", member=harness.member(0))

    [record] = await records()
    doc = validate_snapshot(record.snapshot)
    assert doc["turn"]["trigger_message_id"] == str(trigger.id)
    assert [p["persona_nickname"] for p in doc["personas"]] == ["Tomori", "Ellen"]
    # The snapshot keeps the whole window (replays re-apply privacy); forget-me finds Rei through it.
    assert any(msg["author"]["id"] == str(rei.id) for msg in doc["messages"])
    assert str(rei.id) in record.subject_user_ids

    replayed = turn_output(await run_db(replay_snapshot, doc))
    assert [i["text"] for i in replayed["context_items"]] == [i["text"] for i in record.context_items]


async def test_a_reply_to_a_persona_message_addresses_that_persona(harness):
    await run_db(setup_server, harness.guild)
    ann = harness.member(0)
    await dpytest.message("tomori, hi", member=ann)
    [tomori_said] = sent_messages()
    await dpytest.message("ellen, hi", member=ann)
    ellen_hook = harness.webhooks.hooks[harness.channel.id]
    [ellen_said] = ellen_hook.messages

    # No mention and no trigger word: only the reply says who is addressed.
    await post_reply(harness.channel, ann, tomori_said.id, "and how was your day?")
    [answer] = sent_messages()
    assert answer.content.startswith("[echo] Tomori:") and "how was your day?" in answer.content
    assert len(ellen_hook.sends) == 1

    await post_reply(harness.channel, ann, ellen_said.id, "and yours?")
    assert sent_messages() == []
    assert ellen_hook.sends[-1].username == "Ellen" and "and yours?" in ellen_hook.sends[-1].content


async def test_a_muted_user_cannot_trigger_that_persona_but_can_trigger_others(harness):
    ann = harness.member(0)

    def mute_ann_for_tomori() -> None:
        server = setup_server(harness.guild)
        tomori = m.Persona.objects.get(server=server, is_alter=False)
        m.PersonaUserBlock.objects.create(
            server=server,
            persona=tomori,
            user_disc_id=str(ann.id),
            block_type=m.PersonaUserBlock.BlockType.MUTE,
            reason="spam",
            expires_at=timezone.now() + timedelta(hours=1),
        )

    await run_db(mute_ann_for_tomori)

    await dpytest.message("tomori, hello?", member=ann)
    assert sent_messages() == [] and harness.prompts == []

    await dpytest.message("tomori and ellen, hello?", member=ann)
    assert sent_messages() == []
    assert [s.username for s in harness.webhooks.hooks[harness.channel.id].sends] == ["Ellen"]


@pytest.mark.parametrize("eager", [False, True])
async def test_voice_messages_are_queued_for_transcription_except_from_privacy_full_users(
    harness, settings, monkeypatch, tmp_path, eager
):
    queued: list[tuple[str, str]] = []
    monkeypatch.setattr("bot.conversation.state.enqueue_transcription", lambda mid, aid, url: queued.append((mid, aid)))
    settings.CELERY_TASK_ALWAYS_EAGER = eager
    rei = harness.member(2)
    await run_db(setup_server, harness.guild, full_privacy=[rei])
    voice = tmp_path / "voice.ogg"
    voice.write_bytes(b"OggS")

    ann_voice = await dpytest.message("", member=harness.member(0), attachments=[voice])
    await dpytest.message("", member=rei, attachments=[voice])
    await dpytest.message("notes", member=harness.member(1), attachments=[tmp_path / "notes.pdf"])

    # Queued with a broker and without one (issue 27 item 7: then on the in-process speech-to-text thread).
    assert queued == [(str(ann_voice.id), str(ann_voice.attachments[0].id))]
