"""Forget-me's preview (issue 13 item 5): `GET /api/v1/servers/{id}/users/{user}/forget` answers what
the POST would delete, by the same counts, scoped as the POST is, and deletes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from chatcontext.models import PromptRecord
from personas.models import PersonalMemory, Reminder, ServerMember
from tests.personas.api.conftest import bearer


def forget_path(world: dict[str, Any], user_disc_id: str | None = None) -> str:
    a = world["a"]
    return f"/api/v1/servers/{a['server'].server_id}/users/{user_disc_id or a['user'].user_disc_id}/forget"


def kept_rows(world: dict[str, Any]) -> dict[str, int]:
    user = world["a"]["user"]
    return {
        "memories": PersonalMemory.objects.filter(user=user).count(),
        "reminders": Reminder.objects.filter(user_discord_id=user.user_disc_id).count(),
        "members": ServerMember.objects.filter(user_disc_id=user.user_disc_id).count(),
        "records": PromptRecord.objects.filter(pk=world["a"]["record"].pk).count(),
    }


@pytest.mark.django_db
def test_alices_preview_counts_what_her_forget_then_deletes(world: dict[str, Any]) -> None:
    client = Client()
    client.force_login(world["alice"])
    before = kept_rows(world)
    preview = client.get(forget_path(world))
    assert preview.status_code == 200
    would_delete = preview.json()["would_delete"]
    assert {k: would_delete[k] for k in ("personal_memories", "reminders", "member_snapshots", "prompt_records")} == {
        "personal_memories": 1,
        "reminders": 1,
        "member_snapshots": 1,
        "prompt_records": 1,
    }
    assert kept_rows(world) == before == {"memories": 1, "reminders": 1, "members": 1, "records": 1}

    deleted = client.post(forget_path(world)).json()["deleted"]
    assert deleted == would_delete
    assert kept_rows(world) == {"memories": 0, "reminders": 0, "members": 0, "records": 0}


@pytest.mark.django_db
def test_bob_cannot_preview_server_as_user_and_a_superuser_can(world: dict[str, Any]) -> None:
    client = Client()
    client.force_login(world["bob"])
    assert client.get(forget_path(world)).status_code == 404
    assert client.get(forget_path(world), headers=bearer(world["token_b_write"])).status_code == 404
    before = kept_rows(world)

    root = get_user_model().objects.create_superuser("dana", password="pw-dana")
    client.force_login(root)
    response = client.get(forget_path(world))
    assert response.status_code == 200 and response.json()["would_delete"]["prompt_records"] == 1
    assert kept_rows(world) == before
    assert client.get(forget_path(world, "5100999")).status_code == 404  # not a user server A knows


@pytest.mark.django_db
def test_a_read_only_token_gets_no_preview(world: dict[str, Any]) -> None:
    response = Client().get(forget_path(world), headers=bearer(world["token_a_read"]))
    assert response.status_code == 403
