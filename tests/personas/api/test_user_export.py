"""What the personas know about a user (issue 16): the admin's user view, its download and the API's
export are one builder's answer, scoped to the reader's servers. Server A's member is also on server B,
with memories, a reminder, a block, a blacklist entry and a prompt record there; alice (A) sees none
of it, bob (B) none of A's, and both see the member's global memory, which reaches their prompts."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from chatcontext.models import PromptRecord
from community.export import build_user_export
from personas.models import (
    GLOBAL_LINEAGE_ID,
    PersonalizationBlacklist,
    PersonalMemory,
    PersonaUserBlock,
    PrivacyLevel,
    Reminder,
    ServerMember,
)
from tests.personas.api.conftest import bearer

pytestmark = pytest.mark.django_db

A_ONLY = "secret memory of A"
B_TEXTS = ("memory of B about the member", "reminder on B", "blocked on B", "blacklisted on B", "record on B")


@pytest.fixture
def member_on_both(world):  # type: ignore[no-untyped-def]
    a, b = world["a"], world["b"]
    user = a["user"]
    ServerMember.objects.create(server=b["server"], user_disc_id=user.user_disc_id, username=user.username)
    PersonalMemory.objects.create(user=user, persona_lineage_id=GLOBAL_LINEAGE_ID, content="likes green tea everywhere")
    PersonalMemory.objects.create(user=user, persona_lineage_id=b["persona"].persona_lineage_id, content=B_TEXTS[0])
    Reminder.objects.create(
        server=b["server"],
        channel_disc_id="88",
        user_discord_id=user.user_disc_id,
        reminder_purpose=B_TEXTS[1],
        reminder_time=datetime(2030, 1, 1, tzinfo=UTC),
    )
    PersonaUserBlock.objects.create(
        server=b["server"],
        persona=b["persona"],
        user_disc_id=user.user_disc_id,
        reason=B_TEXTS[2],
        expires_at=timezone.now() + timedelta(days=1),
    )
    PersonalizationBlacklist.objects.create(server=b["server"], user_disc_id=user.user_disc_id, reason=B_TEXTS[3])
    PromptRecord.objects.create(
        server=b["server"],
        channel_disc_id="88",
        channel_name="b-lounge",
        persona=b["persona"],
        persona_nickname=B_TEXTS[4],
        created_at=datetime(2026, 12, 1, tzinfo=UTC),
        subject_user_ids=[user.user_disc_id],
    )
    return user


def _api_export(client: Client, server_id: int, user_disc_id: str, **headers: str) -> dict:  # type: ignore[type-arg]
    response = client.get(f"/api/v1/servers/{server_id}/users/{user_disc_id}/export", headers=headers)
    assert response.status_code == 200, response.content
    return response.json()


def test_a_moderator_s_export_holds_their_servers_and_the_global_memories_only(world, member_on_both) -> None:  # type: ignore[no-untyped-def]
    a = world["a"]
    export = _api_export(Client(), a["server"].server_id, member_on_both.user_disc_id, **bearer(world["token_a_read"]))

    text = json.dumps(export)
    assert A_ONLY in text and "likes green tea everywhere" in text
    assert not [t for t in (*B_TEXTS, "Server B") if t in text]
    lineages = {lineage["lineage_id"]: lineage for lineage in export["memories"]}
    assert set(lineages) == {a["persona"].persona_lineage_id, GLOBAL_LINEAGE_ID}
    # One type for every lineage: a list, and a flag for who reads lineage 0.
    assert lineages[GLOBAL_LINEAGE_ID]["read_by"] == [] and lineages[GLOBAL_LINEAGE_ID]["read_by_every_persona"]
    persona_lineage = lineages[a["persona"].persona_lineage_id]
    assert isinstance(persona_lineage["read_by"], list) and persona_lineage["read_by_every_persona"] is False
    assert [r["purpose"] for r in export["reminders"]] == ["reminder of A"]
    assert [r["id"] for r in export["prompt_records"]] == [a["record"].pk]
    assert export["persona_blocks"] == [] and export["blacklist"] == []
    assert [s["name"] for s in export["servers"]] == ["Server A"]
    assert export["servers"][0]["memories_used"] == "yes"
    assert "every server" in export["privacy"]["applies"]


def test_the_admin_page_and_download_say_what_the_api_says(world, member_on_both) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(world["alice"])
    pk = member_on_both.pk

    page = client.get(reverse("admin:personas_discorduser_known", args=[pk]))
    download = client.get(reverse("admin:personas_discorduser_export", args=[pk]))
    api = _api_export(client, world["a"]["server"].server_id, member_on_both.user_disc_id)

    html = page.content.decode()
    assert page.status_code == 200
    assert A_ONLY in html and "likes green tea everywhere" in html and "(read-only)" in html
    assert "apply on every server" in html and "What it hides: Nothing." in html
    assert 'value="forget_users"' in html and 'value="set_privacy_full"' in html
    assert not [t for t in (*B_TEXTS, "Server B") if t in html]
    assert reverse("admin:chatcontext_promptrecord_change", args=[world["a"]["record"].pk]) in html
    assert "attachment" in download["Content-Disposition"]
    assert json.loads(download.content) == api
    change_page = client.get(reverse("admin:personas_discorduser_change", args=[pk])).content.decode()
    assert reverse("admin:personas_discorduser_known", args=[pk]) in change_page


def test_the_other_server_s_moderator_sees_theirs_and_not_a_s(world, member_on_both) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(world["bob"])

    html = client.get(reverse("admin:personas_discorduser_known", args=[member_on_both.pk])).content.decode()

    assert all(t in html for t in B_TEXTS) and "likes green tea everywhere" in html
    assert A_ONLY not in html and "reminder of A" not in html and "Server A" not in html
    # Blacklisted on B: the page says B's prompts do not get their memories.
    assert "personalization blacklist" in html
    # A user only server A knows is no user of bob's.
    only_a = world["a"]["user"].__class__.objects.create(user_disc_id="5100777", username="only_a")
    ServerMember.objects.create(server=world["a"]["server"], user_disc_id=only_a.user_disc_id)
    for name in ("admin:personas_discorduser_known", "admin:personas_discorduser_export"):
        assert client.get(reverse(name, args=[only_a.pk])).status_code == 404


def test_a_non_staff_account_gets_no_user_view(world, member_on_both) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(world["charlie"])
    for name in ("admin:personas_discorduser_known", "admin:personas_discorduser_export"):
        response = client.get(reverse(name, args=[member_on_both.pk]))
        assert response.status_code == 302 and "/login/" in response["Location"]


def test_the_user_s_own_export_holds_every_server(world, member_on_both) -> None:  # type: ignore[no-untyped-def]
    member_on_both.privacy_level = PrivacyLevel.PARTIAL
    member_on_both.save()

    export = build_user_export(member_on_both, None)

    text = json.dumps(export)
    assert export["scope"] == "every server"
    assert A_ONLY in text and all(t in text for t in B_TEXTS)
    assert {s["name"] for s in export["servers"]} == {"Server A", "Server B"}
    assert {s["memories_used"] for s in export["servers"]} == {
        "no: their privacy level is Partial",
        "no: they are on this server's personalization blacklist",
    }
    assert "no persona gets their memories" in export["privacy"]["hides"]
