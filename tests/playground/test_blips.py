"""A database blip in the middle of a playground turn (issue 26 item 10): the connection the turn
runs on is killed while the model writes — on PostgreSQL ``pg_terminate_backend`` of that one
backend, on SQLite its driver connection closed under it — and the reply and the prompt record are
still written, on a new connection."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connection, connections

from bot.playground.models import PlaygroundMessage
from bot.playground.service import post_playground_message
from chatcontext.models import PromptRecord
from tests.bot.fake_llm import FakeLLMServer
from tests.playground.conftest import MINA, Demo
from tests.playground.test_reminders import llm_server, tdemo, use_llm  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def _terminate(pid: int) -> None:
    """End one backend from this thread's own connection; the server and every other backend stay."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    connection.close()


class ConnectionKiller:
    """Kills the connection of the thread the turn's database calls run on, once, when the model
    is asked for the reply."""

    def __init__(self, turn_connection: Any) -> None:
        self.turn_connection = turn_connection
        self.killed: Any = None  # the driver connection that was killed
        # An in-memory SQLite database lives while a connection to it is open: the killed one is
        # kept open here, out of the turn's reach, so killing it cannot drop the test's database.
        self._kept: list[sqlite3.Connection] = []

    async def __call__(self) -> None:
        if self.killed is not None:
            return
        self.killed = self.turn_connection.connection
        if self.turn_connection.vendor == "postgresql":
            await asyncio.to_thread(_terminate, self.killed.info.backend_pid)
        else:
            closed = sqlite3.connect(":memory:", check_same_thread=False)
            closed.close()
            self._kept.append(self.killed)
            self.turn_connection.connection = closed

    def close(self) -> None:
        for kept in self._kept:
            kept.close()


def turn_connection() -> Any:
    """The open connection of the thread this is called on (through the seam: the turn's)."""
    connection.ensure_connection()
    return connections["default"]


async def test_a_connection_killed_while_the_model_writes_loses_neither_the_reply_nor_the_record(
    tdemo: Demo,  # noqa: F811
    llm_server: FakeLLMServer,  # noqa: F811
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
