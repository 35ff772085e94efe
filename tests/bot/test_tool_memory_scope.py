"""A tool changes only memories its turn could show (issue 26 item 8): with global memories on, a
lineage-0 memory is read in every server, and a persona of this server once rewrote and deleted one
about someone who is a member of another server only."""

from __future__ import annotations

import json

import discord.ext.test as dpytest
import pytest

from personas import actions
from personas import models as m
from tests.actors import TEST_ACTOR
from tests.bot.fake_llm import tool_round
from tests.bot.fakes import run_db
from tests.bot.tool_turns import records, sent_messages, setup

pytestmark = pytest.mark.django_db(transaction=True)

STRANGER = "880000000000000001"  # a member of another server, never of the harness's guild


def global_memory(user_disc_id: str, content: str) -> m.PersonalMemory:
    user = actions.register_user(user_disc_id, username="u", global_name=None, actor=TEST_ACTOR)
    return actions.add_personal_memory(user, m.GLOBAL_LINEAGE_ID, content, [], actor=TEST_ACTOR)


def strangers_server() -> None:
    other = actions.register_server(
        "880000000000000099", name="Elsewhere", is_dm=False, locale=None, main_persona_nickname="Kai", actor=TEST_ACTOR
    )
    m.ServerMember.objects.create(server=other, user_disc_id=STRANGER, username="stranger")


async def test_a_tool_changes_a_global_memory_of_someone_in_its_turn_and_none_of_someone_elsewhere(harness, llm_server):  # type: ignore[no-untyped-def]
    await setup(harness, llm_server, global_memories_enabled=True)
    ann = harness.member(0)
    await run_db(strangers_server)
    theirs = await run_db(global_memory, STRANGER, "Likes the night shift")
    anns = await run_db(global_memory, str(ann.id), "Ann has a cat")

    for name, args in (
        ("update_memory", {"id": f"p{theirs.pk}", "content": "Rewritten from another server"}),
        ("forget_memory", {"id": f"p{theirs.pk}"}),
    ):
        llm_server.script = [tool_round((name, json.dumps(args))), "Done."]
        await dpytest.message("tomori, tidy up your memories", member=ann)
        [*_, record] = await records()
        [call] = record.tool_calls["calls"]
        assert call["status"] == "refused" and call["result"] == "Refused: No memory of yours has that id."
        assert all(not message.embeds for message in sent_messages())  # no confirmation

    kept = await m.PersonalMemory.objects.aget(pk=theirs.pk)
    assert kept.content == "Likes the night shift" and kept.persona_lineage_id == m.GLOBAL_LINEAGE_ID
    assert await m.PersonalMemory.history.filter(personal_memory_id=theirs.pk).acount() == 1  # only its creation

    # Ann is in the turn: her global memory is the persona's to correct.
    update = {"id": f"p{anns.pk}", "content": "Ann has two cats"}
    llm_server.script = [tool_round(("update_memory", json.dumps(update))), "Updated."]
    await dpytest.message("tomori, I have two cats now", member=ann)
    assert (await m.PersonalMemory.objects.aget(pk=anns.pk)).content == "Ann has two cats"
