"""Turns of the preset tests: the test LLM server as the platform's endpoint, a playground post, a preset import."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command

from bot.playground.service import PlaygroundOutcome, post_playground_message
from personas.management.commands.load_demo import DEMO_SERVER_DISC_ID
from tests.bot.fake_llm import FakeLLMServer, ThreadedFakeLLMServer
from tests.bot.playground.conftest import MINA, Demo


@pytest.fixture
def llm(demo: Demo, settings: Any) -> Iterator[FakeLLMServer]:
    """The platform's endpoint is the test server (model ``ok``), reached from the turns' own loops."""
    with ThreadedFakeLLMServer() as server:
        settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_MAX_REPLY_TOKENS = server.base_url, "ok", 1024
        yield server


def post(demo: Demo, content: str) -> PlaygroundOutcome:
    return async_to_sync(post_playground_message)(demo.channel, MINA, content)


def import_preset(tmp_path: Path, doc: dict[str, Any], persona: str) -> None:
    path = tmp_path / "my-preset.json"
    path.write_text(json.dumps(doc))
    call_command("import_preset", str(path), "--server", DEMO_SERVER_DISC_ID, "--persona", persona, stdout=None)
