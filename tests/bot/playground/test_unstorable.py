"""NUL and lone surrogates in the playground (issue 26 item 4): from its forms (message, channel name,
topic) and from the model (over the local OpenAI-compatible server, tests/bot/fake_llm.py), they
never give a 5xx, never leave a reply without its prompt record and never leave an upload without
its message. Run on SQLite and on PostgreSQL (which keeps no NUL at all)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import IntegrityError
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from bot.playground import store
from bot.playground.models import PlaygroundChannel, PlaygroundMessage
from chatcontext.core.storable import UNSTORABLE
from chatcontext.models import PromptRecord
from personas import models as m
from tests.bot.fake_llm import UNSTORABLE_REPLY, FakeLLMServer, tool_round
from tests.bot.playground.conftest import MINA, NOW_MS, Demo

pytestmark = pytest.mark.django_db


@pytest.fixture
def llm(demo: Demo) -> Iterator[FakeLLMServer]:
    """The fake model on a loop of its own thread, so the playground's views reach it from a
    synchronous test client; the demo server's settings point at it."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = FakeLLMServer()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(timeout=10)
    m.ServerSettings.objects.filter(server=demo.server).update(llm_base_url=server.base_url, llm_model="ok")
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


@pytest.fixture
def staff(demo: Demo) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="pw"))
    return client


def storable(text: str) -> bool:
    return UNSTORABLE.search(text) is None


def files_under(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file()] if root.exists() else []


def test_nul_in_the_forms_and_the_models_reply_is_cleaned_and_everything_is_written(
    demo: Demo, llm: FakeLLMServer, staff: Client, uploads_dir: Path
) -> None:
    created = staff.post(
        reverse("playground:create_channel", args=[demo.server.pk]), {"name": "night\x00owls", "topic": "late\x00"}
    )
    assert created.status_code == 302
    channel = PlaygroundChannel.objects.get(name="nightowls")
    assert channel.topic == "late"
    llm.script = [UNSTORABLE_REPLY]
    photo = SimpleUploadedFile("owl.png", b"\x89PNG-owl", "image/png")

    sent = staff.post(
        reverse("playground:send_message", args=[channel.pk]),
        {"identity": MINA, "content": "tomori, hi\x00 there", "files": [photo]},
    )

    assert sent.status_code == 200
    user, reply = sent.json()["messages"]
    assert user["content"] == "tomori, hi there" and reply["content"] == "Hi there \ufffd!"
    [record] = PromptRecord.objects.filter(channel_disc_id=channel.disc_id)
    assert record.reply_text == reply["content"] and record.channel_name == "nightowls"
    assert len(files_under(uploads_dir)) == 1


def test_an_upload_whose_message_the_database_refuses_is_removed(
    demo: Demo, uploads_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = store.store_user_message(demo.channel, MINA, "first", now_ms=NOW_MS)
    allocate = store.allocate_snowflakes
    # The message gets an id that is already used: the database refuses the row after the file was saved.
    monkeypatch.setattr(store, "allocate_snowflakes", lambda n, now: [taken.disc_id, *allocate(n - 1, now)])
    photo = SimpleUploadedFile("owl.png", b"\x89PNG-owl", "image/png")

    with pytest.raises(IntegrityError):
        store.store_user_message(demo.channel, MINA, "second", now_ms=NOW_MS, uploads=[photo])

    assert files_under(uploads_dir) == []
    assert list(PlaygroundMessage.objects.values_list("content", flat=True)) == ["first"]


# What a browser can send (a form is UTF-8, so no lone surrogate), NUL and controls included.
form_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=30)
# What a model can send: anything JSON can escape, lone surrogates included.
model_text = st.text(
    st.one_of(st.characters(), st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, categories=["Cs"])),
    min_size=1,
    max_size=30,
)


@hypothesis_settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(name=form_text, topic=form_text, content=form_text, reply=model_text)
@example(name="a\x00", topic="\x00", content="\x00", reply=UNSTORABLE_REPLY)
@example(name="", topic="", content="", reply="\x00")
@example(name="", topic="", content="", reply=" \ud800")
def test_arbitrary_unicode_never_gives_a_5xx_nor_a_reply_without_its_record(
    demo: Demo, llm: FakeLLMServer, staff: Client, name: str, topic: str, content: str, reply: str
) -> None:
    created = staff.post(
        reverse("playground:create_channel", args=[demo.server.pk]), {"name": f"c{name}", "topic": topic}
    )
    assert created.status_code < 500
    channel = PlaygroundChannel.objects.order_by("-pk").first()
    assert channel is not None and storable(channel.name) and storable(channel.topic)
    remember = json.dumps({"user": "mina", "content": f"likes {reply}"})
    llm.script = [tool_round(("remember_user_fact", remember)), reply]

    sent = staff.post(
        reverse("playground:send_message", args=[channel.pk]), {"identity": MINA, "content": f"tomori {content}"}
    )

    assert sent.status_code < 500
    payload: dict[str, Any] = sent.json()
    replies = [message for message in payload.get("messages", []) if message["kind"] == "persona"]
    if sent.status_code == 200 and payload["skip"] is None:  # a turn ran: it has its record, reply or not
        [summary] = payload["records"]
        assert PromptRecord.objects.filter(pk=summary["id"], channel_disc_id=channel.disc_id).exists()
    for message in replies:
        assert storable(message["content"])
        assert PromptRecord.objects.filter(channel_disc_id=channel.disc_id, reply_text=message["content"]).exists()
    assert all(storable(content) for content in m.PersonalMemory.objects.values_list("content", flat=True))
    if replies:
        record = PromptRecord.objects.get(channel_disc_id=channel.disc_id)
        assert [call["status"] for call in record.tool_calls["calls"]] == ["ok"]
