"""Where tool calls and their rows show (issue 15 item 6): the inspector lists a record's tool calls
with arguments, outcome and links to the rows they wrote; the memory admin says where a memory came
from (a tool call's prompt record and message, or a moderator)."""

from __future__ import annotations

from html import unescape

import pytest
from django.urls import reverse

from chatcontext.models import PromptRecord
from personas.models import DiscordUser, Persona, PersonalMemory, ServerMemory
from tests.chatcontext.records.conftest import World

pytestmark = pytest.mark.django_db(databases=["default", "replay"])


def learned(world: World) -> PersonalMemory:
    tomori = Persona.objects.get(server=world.server_a, persona_nickname="Tomori")
    user = DiscordUser.objects.create(user_disc_id="700000000000000001", username="ann")
    memory = PersonalMemory.objects.create(
        user=user,
        persona_lineage_id=tomori.persona_lineage_id,
        content="Ann's cat is called Mochi",
        source_prompt_record_id=world.record_a.pk,
        source_message_disc_id="800000000000000001",
    )
    PromptRecord.objects.filter(pk=world.record_a.pk).update(
        tool_calls={
            "offered": ["remember_user_fact", "react"],
            "rounds": 1,
            "tools_refused": False,
            "calls": [
                {
                    "name": "remember_user_fact",
                    "arguments": {"user": "ann", "content": "Ann's cat is called Mochi"},
                    "status": "ok",
                    "result": f"Remembered (memory {memory.pk}).",
                    "rows": [{"kind": "personal_memory", "id": memory.pk}],
                    "ms": 4,
                },
                {"name": "launch", "arguments": "{not json", "status": "error", "result": "Error: x", "rows": []},
            ],
        }
    )
    return memory


def page(world: World, url: str, who: str = "alice") -> str:
    response = world.client(who).get(url)
    assert response.status_code == 200
    return unescape(response.content.decode())


def test_the_inspector_shows_each_tool_call_with_its_outcome_and_the_rows_it_wrote(world: World) -> None:
    memory = learned(world)
    html = page(world, reverse("admin:chatcontext_promptrecord_change", args=[world.record_a.pk]))
    assert 'id="tool-calls"' in html and "Tools offered: remember_user_fact, react" in html
    assert '"content": "Ann\'s cat is called Mochi"' in html and "<pre>{not json</pre>" in html
    memory_url = reverse("admin:personas_personalmemory_change", args=[memory.pk])
    assert f'<a href="{memory_url}">personal memory {memory.pk}</a>' in html
    assert 'class="tool-call tool-call-error"' in html


def test_a_record_without_tools_shows_no_tool_section(world: World) -> None:
    html = page(world, reverse("admin:chatcontext_promptrecord_change", args=[world.first_a.pk]))
    assert 'id="tool-calls"' not in html


def test_the_memory_admin_says_where_a_memory_came_from(world: World) -> None:
    memory = learned(world)
    tomori = Persona.objects.get(server=world.server_a, persona_nickname="Tomori")
    by_hand = ServerMemory.objects.create(
        server=world.server_a, persona_lineage_id=tomori.persona_lineage_id, content="typed by a moderator"
    )
    html = page(world, reverse("admin:personas_personalmemory_change", args=[memory.pk]), "root")
    record_url = reverse("admin:chatcontext_promptrecord_change", args=[world.record_a.pk])
    assert f'<a href="{record_url}">prompt record {world.record_a.pk}</a>, answering message 800000000000000001' in html
    assert "tool call" in page(world, reverse("admin:personas_personalmemory_changelist"), "root")
    manual = page(world, reverse("admin:personas_servermemory_change", args=[by_hand.pk]), "root")
    assert "a moderator, the API or an import (no tool call)" in manual

    PersonalMemory.objects.filter(pk=memory.pk).update(source_prompt_record_id=None)  # the record was pruned
    pruned = page(world, reverse("admin:personas_personalmemory_change", args=[memory.pk]), "root")
    assert "(its prompt record is gone)" in pruned
