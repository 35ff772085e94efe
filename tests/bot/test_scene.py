"""``/scene personas rounds [topic]`` through the real bot (issue 30 item 6; BC8-08 scene turns): a
scene-directive notice with a Stop button, then one recorded turn per persona per round, each reading
what the others said; Stop ends it after the running turn; only members with Manage Messages may
start one."""

from __future__ import annotations

import discord
import discord.ext.test as dpytest
import pytest

from bot.conversation.impersonation import FULL_ASKER
from bot.discord.exts.scene import ENDED, STOPPING, WHO_MAY, WHO_MAY_STOP, StopSceneButton
from chatcontext.models import PromptRecord
from personas import actions
from personas import models as m
from tests.actors import TEST_ACTOR
from tests.bot.fakes import FakeInteraction, run_db
from tests.bot.tool_turns import records, sent_messages, setup

pytestmark = pytest.mark.django_db(transaction=True)


def interaction(harness, member_index: int) -> FakeInteraction:
    return FakeInteraction(user=harness.member(member_index), guild=harness.guild, channel_id=harness.channel.id)


async def start(harness, member_index: int, personas: str, rounds: int, topic: str = "") -> FakeInteraction:
    inter = interaction(harness, member_index)
    cog = harness.bot.get_cog("SceneCog")
    await type(cog).scene.callback(cog, inter, personas, rounds, topic)
    return inter


async def stop(harness, member_index: int, scene_id: int) -> FakeInteraction:
    inter = interaction(harness, member_index)
    inter.client = harness.bot  # type: ignore[attr-defined]
    await StopSceneButton(scene_id).callback(inter)
    return inter


async def make_director(harness, member_index: int) -> None:
    role = dpytest.backend.make_role(
        "Directors", harness.guild, permissions=discord.Permissions(manage_messages=True).value
    )
    await dpytest.add_role(harness.member(member_index), role)


def prompt_of(request: dict) -> str:
    return str(request["messages"])


async def test_a_scene_runs_each_persona_once_a_round_and_records_every_turn(harness, llm_server):
    await setup(harness, llm_server)
    await make_director(harness, 0)
    llm_server.script = ["Tomori opens", "Ellen answers", "Tomori again", "Ellen closes"]

    started = await start(harness, 0, "Tomori, ellen", 2, "the best tea for a rainy night")

    assert started.reply == "The scene starts: Tomori, Ellen, 2 rounds."
    notice_message, tomori_1, tomori_2 = sent_messages()  # the bot's own posts; Ellen speaks by webhook
    [embed] = notice_message.embeds
    assert embed.title == "🎬 Scene Directive" and embed.footer.text == "[tomori:v1:scene_directive]"
    assert "the best tea for a rainy night" in embed.description
    assert [tomori_1.content, tomori_2.content] == ["Tomori opens", "Tomori again"]
    hook = harness.webhooks.hooks[harness.channel.id]
    assert [(s.username, s.content) for s in hook.sends] == [("Ellen", "Ellen answers"), ("Ellen", "Ellen closes")]

    rows = await records()
    assert [r.persona_nickname for r in rows] == ["Tomori", "Ellen", "Tomori", "Ellen"]
    assert all(r.command["name"] == "scene" and r.command["by"] == str(harness.member(0).id) for r in rows)
    assert rows[1].command["summary"].startswith(f"/scene by {harness.member(0).name}: turn 2 of 4, Ellen")
    # Every turn sees the directive as a system line (BC6-01), and each reads what the others said.
    assert all("[System: Scene: Tomori, Ellen talk with each other" in prompt_of(r) for r in llm_server.requests)
    assert "Tomori opens" in prompt_of(llm_server.requests[1])
    assert "Ellen answers" in prompt_of(llm_server.requests[2])
    # BC8-08: a scene turn answers nobody's message: no queued-reply directive, no reply.
    assert not any("message from earlier" in prompt_of(r) for r in llm_server.requests)
    # The scene is over: its Stop button says so.
    assert (await stop(harness, 0, notice_message.id)).reply == ENDED


async def test_stop_ends_the_scene_after_the_running_turn(harness, llm_server):
    await setup(harness, llm_server)
    await make_director(harness, 0)
    scene_ids: list[int] = []
    clicks: list[str] = []

    async def click_stop_once() -> None:
        if not clicks:
            cog = harness.bot.get_cog("SceneCog")
            [scene_id] = cog.running
            scene_ids.append(scene_id)
            clicks.append((await stop(harness, 2, scene_id)).reply)  # Rei may not
            clicks.append((await stop(harness, 0, scene_id)).reply)  # the director may

    llm_server.on_request = click_stop_once

    await start(harness, 0, "Tomori, Ellen", 3)

    assert clicks == [WHO_MAY_STOP.format(name=harness.member(0).name), STOPPING]
    assert await PromptRecord.objects.acount() == 1  # the turn that was running, and no other
    assert len(llm_server.requests) == 1


async def test_members_without_manage_messages_and_bad_casts_are_refused(harness, llm_server):
    await setup(harness, llm_server)

    assert (await start(harness, 1, "Tomori, Ellen", 2)).reply == WHO_MAY
    await make_director(harness, 1)
    assert "Not a persona here: Zed" in (await start(harness, 1, "Tomori, Zed", 2)).reply
    assert "You named 1." in (await start(harness, 1, "Tomori, tomori", 2)).reply
    member = harness.member(1)

    def full() -> None:
        user = actions.register_user(str(member.id), username=member.name, global_name=None, actor=TEST_ACTOR)
        actions.set_privacy_level(user, m.PrivacyLevel.FULL, actor=TEST_ACTOR)

    await run_db(full)
    assert (await start(harness, 1, "Tomori, Ellen", 2)).reply == FULL_ASKER

    assert sent_messages() == [] and llm_server.requests == []
    assert await PromptRecord.objects.acount() == 0
