"""``/impersonate`` and ``/scene`` typed in the playground's message box (issue 30 items 5–6), through
the real runner and the test LLM server: the same rules as on Discord (``bot.conversation.impersonation``,
``bot.conversation.scenes``), refusals as the private answer under the box, each turn a prompt record
with what the command did."""

from __future__ import annotations

import asyncio

import pytest

from bot.conversation.impersonation import FULL_ASKER
from bot.conversation.scenes import ENDED, STOPPING, WHO_MAY, WHO_MAY_STOP
from bot.playground import store
from bot.playground.models import PlaygroundMessage
from bot.playground.service import PlaygroundOutcome, post_playground_message
from chatcontext.models import PromptRecord
from personas import models as m
from tests.bot.fake_llm import FakeLLMServer
from tests.bot.playground.conftest import JUN, MINA, REI, Demo
from tests.bot.playground.turns import use_llm

pytestmark = pytest.mark.django_db(transaction=True)


def let_jun_manage(demo: Demo) -> None:
    m.ServerMember.objects.filter(server=demo.server, user_disc_id=JUN).update(can_manage_server=True)


def allow_impersonation(disc_id: str) -> None:
    m.DiscordUser.objects.filter(user_disc_id=disc_id).update(allow_impersonation=True)


def display_name(demo: Demo, disc_id: str) -> str:
    return next(i.name for i in store.identities(demo.server) if i.disc_id == disc_id)


def username(demo: Demo, disc_id: str) -> str:
    return next(i.username for i in store.identities(demo.server) if i.disc_id == disc_id)


async def say(demo: Demo, author: str, content: str) -> PlaygroundOutcome:
    return await post_playground_message(demo.channel, author, content)


async def chat_before(demo: Demo) -> None:
    await say(demo, MINA, "anyone up for the beach tomorrow")
    await say(demo, JUN, "only if it does not rain")


async def counts() -> tuple[int, int]:
    return await PlaygroundMessage.objects.acount(), await PromptRecord.objects.acount()


async def test_impersonate_posts_the_message_under_the_members_name(tdemo: Demo, llm_server: FakeLLMServer) -> None:
    await asyncio.to_thread(use_llm, tdemo, llm_server)
    await asyncio.to_thread(allow_impersonation, MINA)
    mina = await asyncio.to_thread(display_name, tdemo, MINA)
    await chat_before(tdemo)
    llm_server.script = [f"{mina}: it will be sunny, I checked!"]

    outcome = await say(tdemo, JUN, f"/impersonate {mina} reassure Jun about the weather")

    assert outcome.message is None and outcome.command is not None and not outcome.command.refused
    assert outcome.command.text == f"Tomori wrote a message as {mina}."
    [record] = outcome.records
    assert record.command["name"] == "impersonate" and record.command["by"] == JUN
    assert "reassure Jun about the weather" in record.command["summary"]
    assert record.source == PromptRecord.Source.PLAYGROUND and record.tool_calls.get("offered", []) == []
    assert not llm_server.requests[-1].get("tools")  # BC9-01: no tools for an impersonation
    posted = await PlaygroundMessage.objects.filter(channel=tdemo.channel).order_by("-id").afirst()
    assert posted.author_name == mina and posted.webhook_disc_id == tdemo.channel.webhook_disc_id
    assert posted.content == "it will be sunny, I checked!" and posted.persona_id is None
    assert not await PlaygroundMessage.objects.filter(content__startswith="/impersonate").aexists()


async def test_impersonate_is_refused_for_a_member_who_did_not_opt_in_or_is_privacy_full(
    tdemo: Demo, llm_server: FakeLLMServer
) -> None:
    await asyncio.to_thread(use_llm, tdemo, llm_server)
    await chat_before(tdemo)
    mina, rei = [await asyncio.to_thread(display_name, tdemo, who) for who in (MINA, REI)]
    before = await counts()

    not_opted_in = await say(tdemo, JUN, f"/impersonate {mina} say hi")
    await asyncio.to_thread(allow_impersonation, REI)
    full_target = await say(tdemo, JUN, f"/impersonate {rei} say hi")
    full_asker = await say(tdemo, REI, f"/impersonate {mina}")
    nobody = await say(tdemo, JUN, "/impersonate nobody-here say hi")

    assert not_opted_in.command.refused and f"{mina} has not allowed impersonation" in not_opted_in.command.text
    assert full_target.command.refused and f"{rei}'s privacy level is Full" in full_target.command.text
    assert full_asker.command.refused and full_asker.command.text == FULL_ASKER
    assert nobody.command.refused and nobody.command.text.startswith("Name a member of this server")
    assert await counts() == before and llm_server.requests == []


async def test_scene_runs_its_rounds_and_records_each_persona_turn(tdemo: Demo, llm_server: FakeLLMServer) -> None:
    await asyncio.to_thread(use_llm, tdemo, llm_server)
    await asyncio.to_thread(let_jun_manage, tdemo)
    await chat_before(tdemo)
    llm_server.script = ["Sand castles!", "Shells first.", "Then castles.", "Deal."]

    outcome = await say(tdemo, JUN, "/scene Tomori, Pip 2 planning the beach day")

    assert outcome.command is not None and not outcome.command.refused
    assert outcome.command.text == "The scene starts: Tomori, Pip, 2 rounds. It ended after 4 turns."
    records = outcome.records
    jun = await asyncio.to_thread(username, tdemo, JUN)
    assert [r.command["summary"] for r in records] == [
        f"/scene by {jun}: turn {n} of 4, {who}, topic: planning the beach day."
        for n, who in enumerate(["Tomori", "Pip", "Tomori", "Pip"], start=1)
    ]
    assert all(r.command["name"] == "scene" and r.command["by"] == JUN for r in records)
    assert [r.persona_id for r in records] == [tdemo.tomori.pk, tdemo.pip.pk] * 2
    assert [r.reply_text for r in records] == ["Sand castles!", "Shells first.", "Then castles.", "Deal."]
    rows = [r async for r in PlaygroundMessage.objects.filter(channel=tdemo.channel, is_bot=True).order_by("id")]
    opening, *replies = rows
    assert (
        opening.embeds[0]["title"].endswith("Scene Directive")
        and "planning the beach day" in opening.embeds[0]["description"]
    )
    assert [r.content for r in replies] == ["Sand castles!", "Shells first.", "Then castles.", "Deal."]
    assert all(r.reply_to_id is None for r in replies)  # a scene turn answers nobody's message
    # Each persona read what the other just said (BC1-02), and the scene's directive.
    last_prompt = "\n".join(item["text"] for item in records[-1].context_items)
    assert "Then castles." in last_prompt and "planning the beach day" in last_prompt


async def test_scene_is_refused_to_a_member_who_may_not_and_for_bad_arguments(
    tdemo: Demo, llm_server: FakeLLMServer
) -> None:
    await asyncio.to_thread(use_llm, tdemo, llm_server)
    await asyncio.to_thread(let_jun_manage, tdemo)
    before = await counts()

    not_moderator = await say(tdemo, MINA, "/scene Tomori, Pip 2")
    too_many_rounds = await say(tdemo, JUN, "/scene Tomori, Pip 6")
    one_persona = await say(tdemo, JUN, "/scene Tomori 2")

    assert not_moderator.command.refused and not_moderator.command.text == WHO_MAY
    assert too_many_rounds.command.refused and too_many_rounds.command.text.startswith("Use /scene")
    assert one_persona.command.refused and "You named 1." in one_persona.command.text
    assert await counts() == before and llm_server.requests == []


async def test_scene_stop_ends_the_scene_after_the_running_turn(tdemo: Demo, llm_server: FakeLLMServer) -> None:
    await asyncio.to_thread(use_llm, tdemo, llm_server)
    await asyncio.to_thread(let_jun_manage, tdemo)
    await chat_before(tdemo)
    answers: list[PlaygroundOutcome] = []

    async def stop_during_the_first_turn() -> None:
        if not answers:  # while the first persona's turn waits for the model
            answers.append(await say(tdemo, MINA, "/scene stop"))
            answers.append(await say(tdemo, JUN, "/scene stop"))

    llm_server.on_request = stop_during_the_first_turn
    assert (await say(tdemo, JUN, "/scene stop")).command.text == ENDED

    outcome = await say(tdemo, JUN, "/scene Tomori, Pip 3")

    by_mina, by_jun = (a.command for a in answers)
    jun = await asyncio.to_thread(username, tdemo, JUN)
    assert by_mina.refused and by_mina.text == WHO_MAY_STOP.format(name=jun)
    assert not by_jun.refused and by_jun.text == STOPPING
    [record] = outcome.records  # the turn that was running, and no other
    assert record.command["summary"].endswith("turn 1 of 6, Tomori.")
    assert len(llm_server.requests) == 1
