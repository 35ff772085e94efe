"""The bot's metrics (personas/metrics.py) from real turns: dpytest drives the bot, the local
OpenAI-compatible server answers, fails or scripts tool calls. Endpoints and tools appear by name
only, never by URL."""

from __future__ import annotations

import discord.ext.test as dpytest
import pytest
from django.test import Client
from prometheus_client import REGISTRY

from tests.bot.fakes import run_db
from tests.bot.tool_turns import remember, sent_messages, setup

pytestmark = pytest.mark.django_db(transaction=True)


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_a_turn_with_tool_calls_counts_its_outcome_requests_and_calls(harness, llm_server):
    await setup(harness, llm_server)
    replied = sample("tomori_turns_total", outcome="replied")
    requests = sample("tomori_provider_request_seconds_count", endpoint="server")
    remembered = sample("tomori_tool_calls_total", tool="remember_user_fact", status="ok")
    unknown = sample("tomori_tool_calls_total", tool="unknown", status="error")
    llm_server.script = [
        [*remember("ann", "Ann's cat is called Mochi"), ("drop_database", "{}")],
        "Noted, Mochi it is!",
    ]

    await dpytest.message("tomori, remember that my cat is Mochi", member=harness.member(0))

    assert sent_messages()[0].content == "Noted, Mochi it is!"
    assert sample("tomori_turns_total", outcome="replied") == replied + 1
    # A tool round and the reply: two requests to the server's own endpoint.
    assert sample("tomori_provider_request_seconds_count", endpoint="server") == requests + 2
    assert sample("tomori_tool_calls_total", tool="remember_user_fact", status="ok") == remembered + 1
    # The model's made-up tool name is not a label value.
    assert sample("tomori_tool_calls_total", tool="unknown", status="error") == unknown + 1
    assert sample("tomori_tool_calls_total", tool="drop_database", status="error") == 0


async def test_a_failing_endpoint_counts_an_error_and_a_failed_turn_and_metrics_show_no_url(harness, llm_server):
    await setup(harness, llm_server, model="fail")
    failed = sample("tomori_turns_total", outcome="failed")
    errors = sample("tomori_provider_errors_total", endpoint="server")

    await dpytest.message("tomori, are you there?", member=harness.member(0))

    assert sample("tomori_turns_total", outcome="failed") == failed + 1
    assert sample("tomori_provider_errors_total", endpoint="server") >= errors + 1
    text = await run_db(lambda: Client().get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode())
    assert 'tomori_provider_errors_total{endpoint="server"}' in text
    assert llm_server.base_url not in text and "127.0.0.1" not in text
