"""A database blip in the middle of a Discord turn (issue 26 item 10): the connection the bot's turn
runs on is killed while the model writes, and the turn's prompt record and its turn snapshot are
still written, on a new connection (``bot.conversation.db.closing_stale_connections``)."""

from __future__ import annotations

import asyncio

import discord.ext.test as dpytest
import pytest
from django.contrib.auth.models import User
from django.db import DatabaseError, connection, connections

from bot.conversation.db import on_a_new_connection
from tests.bot.fakes import run_db
from tests.bot.tool_turns import records, sent_messages, setup
from tests.db_faults import ConnectionKiller, turn_connection

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_connection_killed_while_the_model_writes_still_records_the_discord_turn(  # type: ignore[no-untyped-def]
    harness, llm_server, monkeypatch
):
    # Persistent connections (DB_CONN_MAX_AGE): the bot keeps its connection while the model writes,
    # so the one killed then is the one the turn's next call gets. (With 0 every call opens its own.)
    monkeypatch.setitem(connections["default"].settings_dict, "CONN_MAX_AGE", 600)
    await setup(harness, llm_server)
    killer = ConnectionKiller(await run_db(turn_connection))
    llm_server.on_request = killer
    try:
        trigger = await dpytest.message("tomori, tell me about owls", member=harness.member(0))
    finally:
        killer.close()

    assert killer.killed is not None  # the turn's connection was killed mid-turn
    [reply] = sent_messages()
    assert reply.content == llm_server.reply_text
    [record] = await records()
    assert record.trigger_message_disc_id == str(trigger.id)
    assert record.reply_text == llm_server.reply_text and record.error == ""
    assert record.snapshot["turn"]["trigger_message_id"] == str(trigger.id)  # captured, not left empty


def test_a_connection_lost_after_a_statement_of_the_call_completed_is_not_retried():
    # As when the connection drops during COMMIT: the server may have written the call's rows, so
    # running the call again could write them twice; the error stands instead.
    killer = ConnectionKiller(turn_connection())
    calls: list[int] = []

    def write_then_lose_the_connection() -> int:
        calls.append(1)
        User.objects.create(username=f"written-{len(calls)}")
        asyncio.run(killer())
        return User.objects.count()

    try:
        with pytest.raises(DatabaseError):
            on_a_new_connection(write_then_lose_the_connection)()
        connection.close()
        connection.connect()
        assert len(calls) == 1
        assert list(User.objects.values_list("username", flat=True)) == ["written-1"]
    finally:
        killer.close()
