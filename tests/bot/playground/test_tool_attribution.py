"""Who wrote what a persona's tool wrote in a playground turn (issue 26 item 9): a moderator posts as
a member, and the memory's history names the moderator's account (``history_user``) beside the
member, and the turn's prompt record (README "Actions and the audit trail")."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from chatcontext.models import PromptRecord
from personas import models as m
from tests.bot.fake_llm import FakeLLMServer, tool_round
from tests.bot.playground.conftest import MINA, Demo
from tests.bot.playground.turns import moderator_client

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_memory_a_tool_wrote_in_a_turn_a_moderator_posted_names_the_account_and_the_record(
    tdemo: Demo,
    llm_server: FakeLLMServer,
) -> None:
    alice, client = await moderator_client(tdemo, llm_server)
    remember = {"user": "mina", "content": "Mina grows tomatoes"}
    llm_server.script = [tool_round(("remember_user_fact", json.dumps(remember))), "Noted!"]

    url = reverse("playground:send_message", args=[tdemo.channel.pk])
    response = await client.post(url, {"identity": MINA, "content": "tomori, I grow tomatoes"})

    assert response.status_code == 200
    [summary] = response.json()["records"]
    record = await PromptRecord.objects.aget(pk=summary["id"])
    memory = await m.PersonalMemory.objects.aget(content="Mina grows tomatoes")
    assert memory.source_prompt_record_id == record.pk
    [version] = [v async for v in m.PersonalMemory.history.filter(personal_memory_id=memory.pk)]
    assert version.history_user_id == alice.pk and version.actor_kind == m.ActorKind.TOOL_CALL
    who = f"Discord user {MINA}, posted by account #{alice.pk}"
    assert version.actor == f"tool call in prompt record #{record.pk} ({who})"
