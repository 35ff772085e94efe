"""A preset and a persona's sampling settings in real turns, and a server's fallback endpoints
(issue 31 items 4–6), against the local OpenAI-compatible test server (tests/bot/fake_llm.py):
what it receives is what a provider would."""

from __future__ import annotations

import json
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from chatcontext.models import PromptRecord
from personas.models import ApiToken, PersonaSampling, ServerSettings
from tests.bot.fake_llm import FakeLLMServer
from tests.bot.playground.conftest import Demo
from tests.personas.presets.preset_files import real_preset
from tests.personas.presets.turns import import_preset, post


def test_a_presets_sampling_and_prompt_order_reach_the_provider(demo: Demo, llm: FakeLLMServer, tmp_path: Path):
    doc = real_preset() | {"temperature": 0.35, "top_p": 0.9, "presence_penalty": 0.4, "frequency_penalty": -0.5}
    doc["prompts"][3]["content"] = "Stay in character as {{char}}; {{user}} is listening."  # jailbreak
    import_preset(tmp_path, doc, "Tomori")

    [record] = post(demo, "tomori, how is the night?").records

    sent = llm.requests[-1]
    assert (sent["temperature"], sent["top_p"], sent["presence_penalty"], sent["frequency_penalty"]) == (
        0.35,
        0.9,
        0.4,
        -0.5,
    )
    assert sent["max_tokens"] == 300 and "seed" not in sent and "stop" not in sent
    assert record.generation["sampling"] == {
        "temperature": 0.35,
        "top_p": 0.9,
        "presence_penalty": 0.4,
        "frequency_penalty": -0.5,
        "max_reply_tokens": 300,
    }
    # The preset's order: its main prompt first (macros resolved), the platform's instruction next,
    # the post-history instruction after the conversation.
    messages = [m["content"] for m in sent["messages"]]
    assert messages[0] == "Write Tomori's next reply in a fictional chat between Tomori and Minnie."
    assert messages[1].startswith("You are Tomori, taking part in a Discord conversation.")
    jailbreak = messages.index("Stay in character as Tomori; Minnie is listening.")
    assert any("how is the night?" in m for m in messages[2:jailbreak])
    tags = [item["tag"] for item in record.context_items]
    assert tags[:2] == [None, "system_instruction_block"]
    assert record.reply_text == llm.reply_text


def test_without_a_preset_the_prompt_keeps_the_native_order(demo: Demo, llm: FakeLLMServer, tmp_path: Path):
    import_preset(tmp_path, real_preset(), "Pip")  # another persona's preset changes nothing here

    [record] = post(demo, "tomori, hello").records

    assert record.context_items[0]["tag"] == "system_instruction_block"
    assert "fictional chat" not in json.dumps(llm.requests[-1]["messages"])
    assert llm.requests[-1]["max_tokens"] == 1024 and "temperature" not in llm.requests[-1]


def test_a_personas_own_sampling_reaches_the_provider_capped_by_the_platform(demo: Demo, llm: FakeLLMServer, settings):
    settings.LLM_MAX_REPLY_TOKENS = 200
    PersonaSampling.objects.create(persona=demo.tomori, stop=["\nMina:", "###"], seed=42, max_reply_tokens=500)

    [record] = post(demo, "tomori, a seed please").records

    sent = llm.requests[-1]
    assert (sent["stop"], sent["seed"], sent["max_tokens"]) == (["\nMina:", "###"], 42, 200)
    assert record.generation["sampling"] == {"max_reply_tokens": 200, "stop": ["\nMina:", "###"], "seed": 42}


@pytest.fixture
def fallbacks(demo: Demo, llm: FakeLLMServer, settings: Any) -> FakeLLMServer:
    """The platform's endpoint fails with a 500 (model ``fail``); the server's fallbacks, in order,
    answer 429, never answer (a timeout), then answer."""
    settings.LLM_MODEL, settings.LLM_TIMEOUT_SECONDS = "fail", 0.5
    settings.LLM_APPROVED_ENDPOINTS = {
        name: {"base_url": llm.base_url, "api_key": "", "model": model}
        for name, model in [("busy-lane", "busy"), ("slow-lane", "slow"), ("spare", "ok")]
    }
    ServerSettings.objects.filter(server=demo.server).update(llm_fallback_endpoints=["busy-lane", "slow-lane", "spare"])
    return llm


def test_a_500_a_429_and_a_timeout_each_pass_the_turn_to_the_next_endpoint(demo: Demo, fallbacks: FakeLLMServer):
    [record] = post(demo, "tomori, are you awake?").records

    assert [r["model"] for r in fallbacks.requests] == ["fail", "busy", "slow", "ok"]  # each asked once
    assert record.reply_text == fallbacks.reply_text and record.error == ""
    assert record.model_name == "ok"
    assert record.generation["endpoints"] == [
        {
            "endpoint": "platform",
            "model": "fail",
            "answered": False,
            "failure": "provider returned HTTP 500: llama_decode failed: out of memory",
        },
        {
            "endpoint": "busy-lane",
            "model": "busy",
            "answered": False,
            "failure": "provider returned HTTP 429: Rate limit reached for requests per min: Limit 3, Used 3",
        },
        {"endpoint": "slow-lane", "model": "slow", "answered": False, "failure": "provider timed out"},
        {"endpoint": "spare", "model": "ok", "answered": True},
    ]


def test_the_inspector_and_the_api_show_how_the_reply_was_asked_for(
    demo: Demo, fallbacks: FakeLLMServer, admin_client: Client
) -> None:
    PersonaSampling.objects.create(persona=demo.tomori, temperature=0.7)
    [record] = post(demo, "tomori, still up?").records

    page = unescape(
        admin_client.get(reverse("admin:chatcontext_promptrecord_change", args=[record.pk])).content.decode()
    )
    assert "How the reply was asked for" in page
    assert "temperature</code> 0.7" in page and "max_reply_tokens</code> 1024" in page
    assert "<td>slow-lane</td><td>slow</td>" in page and "provider timed out" in page
    assert "<td>spare</td><td>ok</td>" in page
    _, token = ApiToken.issue(demo.server, "dash", ApiToken.Scope.READ)
    detail = Client().get(f"/api/v1/records/{record.pk}", headers={"Authorization": f"Bearer {token}"}).json()
    assert detail["generation"] == record.generation
    assert detail["generation"]["endpoints"][-1] == {"endpoint": "spare", "model": "ok", "answered": True}


def test_when_every_endpoint_fails_the_turn_fails_with_the_last_ones_error(demo: Demo, fallbacks: FakeLLMServer):
    ServerSettings.objects.filter(server=demo.server).update(llm_fallback_endpoints=["busy-lane"])

    [record] = post(demo, "tomori, anyone?").records

    assert record.reply_text == "" and record.error.startswith("provider returned HTTP 429")
    assert [e["answered"] for e in record.generation["endpoints"]] == [False, False]


def test_a_missing_model_is_not_passed_on_it_would_fail_anywhere(demo: Demo, fallbacks: FakeLLMServer, settings):
    settings.LLM_MODEL = "no-such-model"

    [record] = post(demo, "tomori, hello?").records

    assert [r["model"] for r in fallbacks.requests] == ["no-such-model"]
    assert record.error == "provider returned HTTP 404: The model `no-such-model` does not exist"
    assert len(record.generation["endpoints"]) == 1


def test_records_of_the_offline_echo_have_no_generation_account(demo: Demo):
    [record] = post(demo, "tomori, hi").records

    assert record.provider == "echo" and record.generation == {}
    assert PromptRecord.objects.get(pk=record.pk).generation == {}
