"""A database blip in the middle of a playground turn (issue 26 item 10): the connection the turn
runs on is killed while the model writes — on PostgreSQL ``pg_terminate_backend`` of that one
backend, on SQLite its driver connection closed under it — and the reply and the prompt record are
still written, on a new connection."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async

from bot.playground.models import PlaygroundMessage
from bot.playground.service import post_playground_message
from chatcontext.models import PromptRecord
from tests.bot.fake_llm import FakeLLMServer
from tests.bot.playground.conftest import MINA, Demo
from tests.bot.playground.turns import use_llm
from tests.db_faults import ConnectionKiller, turn_connection

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_connection_killed_while_the_model_writes_loses_neither_the_reply_nor_the_record(
    tdemo: Demo,
    llm_server: FakeLLMServer,
) -> None:
    await asyncio.to_thread(use_llm, tdemo, llm_server)
    killer = ConnectionKiller(await sync_to_async(turn_connection)())
    llm_server.on_request = killer
    try:
        outcome = await post_playground_message(tdemo.channel, MINA, "tomori, tell me about owls")
    finally:
        killer.close()

    assert killer.killed is not None  # the turn's connection was killed mid-turn
    [result] = outcome.results
    assert result.reply is not None and result.reply.content == llm_server.reply_text
    reply = await PlaygroundMessage.objects.aget(pk=result.reply.pk)
    assert reply.reply_to_id == outcome.message.pk and reply.persona_id == tdemo.tomori.pk
    record = await PromptRecord.objects.aget(pk=result.record.pk)
    assert record.reply_text == llm_server.reply_text and record.error == ""
    assert record.trigger_message_disc_id == outcome.message.disc_id
    assert record.snapshot["turn"]["trigger_message_id"] == outcome.message.disc_id
    message = await PlaygroundMessage.objects.aget(pk=outcome.message.pk)
    assert not message.turn_pending and message.skip_reason == ""
    # The rest of the turn ran on a new connection.
    assert (await sync_to_async(turn_connection)()).connection is not killer.killed
