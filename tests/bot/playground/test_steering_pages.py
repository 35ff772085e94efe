"""The admin pages of steering (issue 30): a moderator reads and corrects a persona's short-term
memory (audit trail, provenance kept), and the inspector shows what a command's call did."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from chatcontext.models import PromptRecord
from personas import actions
from personas import models as m
from personas.provenance import Provenance
from tests.actors import TEST_ACTOR
from tests.bot.playground.conftest import MINA, Demo, offline_llm, uploads_dir  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def signed_in(username: str, **flags: bool) -> tuple[Client, object]:
    account = get_user_model().objects.create_user(username, password="pw", is_staff=True, **flags)
    client = Client()
    client.force_login(account)
    return client, account


def note_of(demo: Demo) -> m.ShortTermMemory:
    write = actions.NoteWrite(
        persona=demo.tomori,
        channel_disc_id=demo.channel.disc_id,
        content="Mina plans a Kyoto trip.",
        author_disc_ids=(MINA,),
        provenance=Provenance(message_disc_id="800000000000000001", prompt_record_id=41),
    )
    note = actions.replace_short_term_memory(write, actor=TEST_ACTOR)
    assert note is not None
    return note


def test_a_moderator_corrects_a_note_and_the_trail_names_them(tdemo: Demo) -> None:
    note = note_of(tdemo)
    client, alice = signed_in("alice")
    m.ServerModerator.objects.create(server=tdemo.server, user=alice)
    url = reverse("admin:personas_shorttermmemory_change", args=[note.pk])

    page = client.get(url).content.decode()
    assert "Mina plans a Kyoto trip." in page and "prompt record 41" in page

    response = client.post(url, {"content": "Mina plans a Kyoto trip in April."})

    assert response.status_code == 302
    note.refresh_from_db()
    assert note.content == "Mina plans a Kyoto trip in April."
    assert note.source_prompt_record_id == 41 and note.author_disc_ids == [MINA]  # provenance kept
    latest = m.ShortTermMemory.history.filter(id=note.pk).order_by("-history_date").first()
    assert latest.history_user_id == alice.pk and latest.actor_kind == m.ActorKind.ADMIN

    too_long = client.post(url, {"content": "x" * (m.SHORT_TERM_MEMORY_MAX_CHARS + 1)})
    assert too_long.status_code == 200 and "at most" in too_long.content.decode()


def test_a_moderator_of_another_server_cannot_see_the_note(tdemo: Demo) -> None:
    note = note_of(tdemo)
    other = actions.register_server(
        "900000000000000009", name="Other", is_dm=False, locale="en-US", main_persona_nickname="Nyx", actor=TEST_ACTOR
    )
    client, bob = signed_in("bob")
    m.ServerModerator.objects.create(server=other, user=bob)

    assert client.get(reverse("admin:personas_shorttermmemory_change", args=[note.pk])).status_code in (302, 404)
    listing = client.get(reverse("admin:personas_shorttermmemory_changelist")).content.decode()
    assert "Kyoto" not in listing


def test_deleting_a_note_in_the_admin_goes_through_the_action(tdemo: Demo) -> None:
    note = note_of(tdemo)
    client, _ = signed_in("root", is_superuser=True)

    response = client.post(reverse("admin:personas_shorttermmemory_delete", args=[note.pk]), {"post": "yes"})

    assert response.status_code == 302
    assert not m.ShortTermMemory.objects.exists()
    assert m.ShortTermMemory.history.filter(id=note.pk, history_type="-").exists()


def test_the_inspector_shows_what_a_command_did(tdemo: Demo) -> None:
    record = PromptRecord.objects.create(
        server=tdemo.server,
        channel_disc_id=tdemo.channel.disc_id,
        created_at=timezone.now(),
        reply_text="A summary.",
        command={"name": "compact", "kind": "summary", "by": MINA, "summarised_messages": 3, "notice": "posted"},
    )
    client, _ = signed_in("root", is_superuser=True)

    page = client.get(reverse("admin:chatcontext_promptrecord_change", args=[record.pk])).content.decode()

    assert 'id="command"' in page
    assert "<th>name</th><td>compact</td>" in page and "<th>summarised_messages</th><td>3</td>" in page
