"""A stored playground turn replays, from its snapshot alone, to the prompt its record holds (issue 28
item 1): a tool turn exported from the API and replayed with ``replay_turn``, and an image turn. The
demo's Tomori has example dialogue and the demo server has emojis, so every such turn shows both."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from bot.playground.service import send_playground_message
from chatcontext.models import PromptRecord
from personas import models as m
from tests.bot.fake_llm import FakeLLMServer, tool_round
from tests.bot.image_server import png_bytes
from tests.bot.playground.conftest import MINA, Demo
from tests.bot.playground.turns import moderator_client
from tests.replays import assert_replays_to_its_record, recorded_items

BOTH = pytest.mark.django_db(transaction=True, databases=["default", "replay"])
EXAMPLE_LINE = "Still awake, Tomori?"  # the demo's example dialogue (load_demo)


def replay_turn_command(snapshot: dict[str, Any], folder: Path) -> list[dict[str, Any]]:
    """The context items ``manage.py replay_turn`` prints for ``snapshot``."""
    path = folder / "exported.snapshot.json"
    path.write_text(json.dumps(snapshot), encoding="utf-8")
    out = StringIO()
    call_command("replay_turn", str(path), stdout=out)
    items: list[dict[str, Any]] = json.loads(out.getvalue())["context_items"]
    return items


@BOTH
async def test_a_playground_tool_turn_exported_from_the_api_replays_with_replay_turn_to_its_record(
    tdemo: Demo,
    llm_server: FakeLLMServer,
    tmp_path: Path,
) -> None:
    _, client = await moderator_client(tdemo, llm_server)
    remember = {"user": "mina", "content": "Mina grows tomatoes on the balcony"}
    llm_server.script = [tool_round(("remember_user_fact", json.dumps(remember))), "Noted!"]

    response = await client.post(
        reverse("playground:send_message", args=[tdemo.channel.pk]),
        {"identity": MINA, "content": "tomori, I grow tomatoes"},
    )
    assert response.status_code == 200, response.content
    [summary] = response.json()["records"]
    record = await PromptRecord.objects.aget(pk=summary["id"])
    memory = await m.PersonalMemory.objects.aget(content=remember["content"])
    assert memory.source_prompt_record_id == record.pk  # the tool wrote, and the record points at it

    exported = await client.get(f"/api/v1/records/{record.pk}/snapshot")
    assert exported.status_code == 200
    snapshot = exported.json()
    assert snapshot["format"] == "tomori-turn-snapshot/2"
    # Captured before the tool ran: the memory it wrote is no part of the turn's input.
    assert remember["content"] not in json.dumps(snapshot)

    replayed = await sync_to_async(replay_turn_command)(snapshot, tmp_path)
    assert replayed == recorded_items(record)
    tags = [item["tag"] for item in replayed]
    assert "dialogue_sample" in tags and "knowledge_emojis" in tags
    assert EXAMPLE_LINE in "\n".join(item["text"] for item in replayed)


def send_photo(demo: Demo) -> PromptRecord:
    m.ServerSettings.objects.filter(server=demo.server).update(model_accepts_images=True)
    photo = SimpleUploadedFile("owl.png", png_bytes(), "image/png")
    [record] = send_playground_message(demo.channel, MINA, f"{demo.mention()} what is this?", attachments=[photo])
    return record


@pytest.mark.django_db(databases=["default", "replay"])
def test_a_playground_image_turn_replays_to_its_record(demo: Demo) -> None:
    record = send_photo(demo)
    assert record.images["sent"]  # the model was sent the image
    assert "(Media ID: media_1)" in "\n".join(item["text"] for item in record.context_items)
    assert_replays_to_its_record(record)
    assert EXAMPLE_LINE in "\n".join(item["text"] for item in record.context_items)
    assert "knowledge_emojis" in [item["tag"] for item in record.context_items]
