"""The playground channel's websocket: staff of the server only; a posted message, the persona's
reply streaming in word by word, the final reply and the turn's prompt record arrive live."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser

from bot.conversation.providers import EchoProvider, OpenAICompatProvider
from bot.playground.service import playground_runner, post_playground_message
from botplatform.routing import websocket_urlpatterns
from chatcontext.core.types import ContextItem, TextPart
from chatcontext.records.consumers import FORBIDDEN
from personas.models import Server, ServerModerator
from tests.bot.fake_llm import FakeLLMServer
from tests.bot.playground.conftest import MINA, Demo

RECEIVE_TIMEOUT_S = 10


@pytest.fixture
def in_memory_layer(settings: Any) -> None:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


def socket(demo: Demo, user: Any) -> WebsocketCommunicator:
    path = f"/ws/playground/channels/{demo.channel.pk}/"
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    communicator.scope["user"] = user
    return communicator


def staff(username: str, server: Server | None) -> Any:
    user = get_user_model().objects.create_user(username, password="pw", is_staff=True)
    if server is not None:
        ServerModerator.objects.create(server=server, user=user)
    return user


# Records are announced when their transaction commits: the socket tests run in autocommit.
@pytest.mark.django_db(transaction=True)
def test_only_staff_of_the_channels_server_may_connect(demo, in_memory_layer):
    other = Server.objects.create(server_disc_id="4300", name="Day Larks")
    alice, bob = staff("alice", demo.server), staff("bob", other)
    charlie = get_user_model().objects.create_user("charlie", password="pw")

    async def connect(user: Any) -> tuple[bool, int | None]:
        communicator = socket(demo, user)
        connected, code = await communicator.connect()
        await communicator.disconnect()
        return connected, code

    assert async_to_sync(connect)(alice) == (True, None)
    for refused in (bob, charlie, AnonymousUser()):
        assert async_to_sync(connect)(refused) == (False, FORBIDDEN)


@pytest.mark.django_db(transaction=True)
def test_a_message_its_streamed_reply_and_the_turns_record_arrive_live(demo, in_memory_layer):
    alice = staff("alice", demo.server)

    async def scenario() -> tuple[list[dict[str, Any]], Any]:
        communicator = socket(demo, alice)
        assert (await communicator.connect())[0]
        outcome = await post_playground_message(
            demo.channel, MINA, f"{demo.mention()} tell me a story", runner=playground_runner()
        )
        events = []
        while not any(e["kind"] == "record" for e in events):
            events.append(await communicator.receive_json_from(timeout=RECEIVE_TIMEOUT_S))
        await communicator.disconnect()
        return events, outcome

    events, outcome = async_to_sync(scenario)()

    kinds = [e["kind"] for e in events]
    [result] = outcome.results
    stream = f"{outcome.message.disc_id}:{demo.tomori.pk}"
    assert kinds[:2] == ["message", "typing"] and kinds[-2:] == ["message", "record"]
    assert events[0]["message"]["id"] == outcome.message.disc_id and events[0]["message"]["kind"] == "user"
    deltas = [e for e in events if e["kind"] == "delta"]
    assert len(deltas) > 5 and {e["stream_id"] for e in deltas} == {stream}
    assert "".join(e["text"] for e in deltas) == result.reply.content
    final = events[-2]
    assert final["stream_id"] == stream and final["message"]["id"] == result.reply.disc_id
    assert final["message"]["reply_to"]["id"] == outcome.message.disc_id
    assert events[-1]["record"]["id"] == result.record.pk and events[-1]["record"]["source"] == "playground"


def test_the_echo_provider_streams_word_by_word_and_returns_the_same_text():
    pieces: list[str] = []

    async def collect(text: str) -> None:
        pieces.append(text)

    async def generate() -> str:
        result = await EchoProvider("Tomori").generate([], stream=True, on_delta=collect)
        return result.text

    text = asyncio.run(generate())

    assert "".join(pieces) == text and len(pieces) == len(text.split())


async def test_the_openai_compatible_provider_passes_each_streamed_piece_on():
    server = FakeLLMServer(reply_text="one two three four")
    await server.start()
    pieces: list[str] = []

    async def collect(text: str) -> None:
        pieces.append(text)

    try:
        provider = OpenAICompatProvider(
            base_url=server.base_url, api_key="", model="ok", timeout_s=10, max_reply_tokens=64
        )
        item = ContextItem(role="user", parts=[TextPart("hi")])
        result = await provider.generate([item], stream=True, on_delta=collect)
    finally:
        await server.stop()

    assert pieces == ["one ", "two ", "three ", "four"] and result.text == "one two three four"
