"""Playground turns as the browser posts them, on a fake or failing model."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.test import AsyncClient, Client
from django.urls import reverse

from bot.conversation.providers import GenerationResult, ProviderError
from bot.playground.service import (
    PlaygroundOutcome,
    post_playground_message,
)
from chatcontext.core.types import ContextItem
from chatcontext.models import PromptRecord
from personas import models as m
from tests.bot.fake_llm import FakeLLMServer
from tests.bot.playground.conftest import Demo


def use_llm(demo: Demo, server: FakeLLMServer) -> None:
    m.ServerSettings.objects.filter(server=demo.server).update(llm_base_url=server.base_url, llm_model="ok")


def post(demo: Demo, author: str, content: str, **kwargs: Any) -> PlaygroundOutcome:
    return async_to_sync(post_playground_message)(demo.channel, author, content, **kwargs)


def prompt_text(record: PromptRecord) -> str:
    return "\n".join(item["text"] for item in record.context_items)


class FailingProvider:
    name = model_name = "failing"

    async def generate(self, items: Sequence[ContextItem], *, stream: bool, on_delta: Any = None) -> GenerationResult:
        raise ProviderError("provider returned HTTP 500")


def record_panel(record: PromptRecord) -> str:
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="pw"))
    response = client.get(reverse("playground:record_panel", args=[record.pk]))
    assert response.status_code == 200
    return response.content.decode()


async def moderator_client(demo: Demo, server: FakeLLMServer) -> tuple[Any, AsyncClient]:
    """The demo answered by the test LLM server, and a client signed in as its moderator alice."""
    await asyncio.to_thread(use_llm, demo, server)
    alice = await asyncio.to_thread(moderator, demo)
    client = AsyncClient()
    await client.aforce_login(alice)
    return alice, client


def moderator(demo: Demo) -> Any:
    alice = get_user_model().objects.create_user("alice", password="pw", is_staff=True)
    m.ServerModerator.objects.create(server=demo.server, user=alice)
    return alice
