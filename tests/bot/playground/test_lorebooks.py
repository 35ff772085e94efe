"""Lorebook entries fire on their keys in a playground turn: the prompt the test LLM server receives,
the record and the inspector show them; a privacy-FULL user's message fires none (README "Lorebooks")."""

from __future__ import annotations

import asyncio

import pytest

from bot.playground.service import post_playground_message
from chatcontext.models import PromptRecord
from personas.actions import Actor
from personas.actions.cards import import_lorebook
from personas.character_data import LorebookData, LoreEntry
from tests.bot.fake_llm import FakeLLMServer
from tests.bot.playground.conftest import MINA, REI, Demo
from tests.bot.playground.turns import record_panel, use_llm

BOOK = LorebookData(
    name="Night Owls lore",
    entries=(
        LoreEntry(
            uid=1, keys=("observatory",), comment="The observatory", content="{{char}} keeps the observatory key."
        ),
        LoreEntry(uid=2, keys=("comet",), content="A comet passes every 76 years.", position="at_depth", depth=1),
    ),
)


def _sent_text(server: FakeLLMServer) -> str:
    return "\n".join(str(message["content"]) for message in server.requests[-1]["messages"])


async def _turn(demo: Demo, author: str, text: str) -> PromptRecord:
    outcome = await post_playground_message(demo.channel, author, text)
    [record] = outcome.records
    return record


@pytest.fixture
async def lore_demo(tdemo: Demo, llm_server: FakeLLMServer) -> Demo:
    """The demo server answering through the test LLM server, with BOOK for every persona."""
    await asyncio.to_thread(use_llm, tdemo, llm_server)
    await asyncio.to_thread(import_lorebook, tdemo.server, BOOK, persona=None, actor=Actor.system("tests"))
    return tdemo


async def test_an_entry_fires_on_its_key_in_a_playground_turn(lore_demo: Demo, llm_server: FakeLLMServer) -> None:
    record = await _turn(lore_demo, MINA, "tomori, shall we go up to the Observatory tonight?")

    assert "Tomori keeps the observatory key." in _sent_text(llm_server)
    assert "comet" not in _sent_text(llm_server)
    [item] = [i for i in record.context_items if i["tag"] == "world_info_before"]
    assert item["world_info"] == [
        {"book": item["world_info"][0]["book"], "entry": 1, "comment": "The observatory", "key": "observatory"}
    ]
    panel = await asyncio.to_thread(record_panel, record)
    assert "The observatory (book" in panel and "entry 1) on &quot;observatory&quot;" in panel


async def test_a_full_users_message_fires_no_entry(lore_demo: Demo, llm_server: FakeLLMServer) -> None:
    """Rei is privacy FULL: her message about the comet is left out of the prompt, so it fires nothing."""
    await post_playground_message(lore_demo.channel, REI, "did you see the comet")
    record = await _turn(lore_demo, MINA, "tomori, anything in the sky tonight?")

    assert "76 years" not in _sent_text(llm_server)
    assert not [i for i in record.context_items if i["tag"].startswith("world_info")]
