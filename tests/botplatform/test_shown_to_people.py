"""What the console and the API show people (issue 32 item 3): memories with names instead of `{user}`
and `{bot}` in lists, titles, breadcrumbs, history, the export and the API (the edit form keeps the
template, where it is changed); lineages named by their persona; the history page in words; every time
in one format with its zone."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from personas import actions
from personas.models import (
    GLOBAL_LINEAGE_ID,
    ApiToken,
    DiscordUser,
    Persona,
    PersonalMemory,
    ServerMember,
    ServerModerator,
)

pytestmark = pytest.mark.django_db

TEMPLATE = "{user} taught {bot} a whistle"
SHOWN = "Mina taught Tomori a whistle"
PLACEHOLDER = re.compile(r"\{(user|bot)\}")
# The console's one format: 2026-12-06 11:07 UTC.
CONSOLE_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\b")


@pytest.fixture
def remembered(main_persona: Persona, make_user: Any) -> dict[str, Any]:
    mina: DiscordUser = make_user(username="mina", global_name="Mina", user_nickname="Minnie-secret-nickname")
    ServerMember.objects.create(server=main_persona.server, user_disc_id=mina.user_disc_id, username="mina")
    actor = actions.Actor.system("test")
    memory = actions.add_personal_memory(mina, main_persona.persona_lineage_id, TEMPLATE, actor=actor)
    actions.update_personal_memory(memory, content=f"{TEMPLATE} on Sundays", tags=None, actor=actor)
    actions.add_personal_memory(mina, GLOBAL_LINEAGE_ID, "{user} prefers green tea", actor=actor)
    return {"mina": mina, "memory": PersonalMemory.objects.get(pk=memory.pk), "persona": main_persona}


def text(response: Any) -> str:
    assert response.status_code == 200
    return response.content.decode()


def test_memory_lists_name_the_user_and_persona_and_the_lineage(admin_client: Client, remembered) -> None:  # type: ignore[no-untyped-def]
    page = text(admin_client.get(reverse("admin:personas_personalmemory_changelist")))
    assert f"{SHOWN} on Sundays" in page and "Mina prefers green tea" in page
    assert not PLACEHOLDER.search(page)
    assert f"Tomori · {remembered['persona'].persona_lineage_id}" in page
    assert "Minnie-secret-nickname" not in page  # a saved nickname is the user's, not the moderators'
    assert CONSOLE_TIME.search(page)


def test_a_memory_page_titles_it_with_names_and_edits_the_template(admin_client: Client, remembered) -> None:  # type: ignore[no-untyped-def]
    memory = remembered["memory"]
    page = text(admin_client.get(reverse("admin:personas_personalmemory_change", args=[memory.pk])))
    title = re.search(r"<title>(.*?)</title>", page, re.S).group(1)  # type: ignore[union-attr]
    breadcrumbs = re.search(r'<div class="breadcrumbs">(.*?)</div>', page, re.S).group(1)  # type: ignore[union-attr]
    assert SHOWN in title and SHOWN in breadcrumbs
    assert not PLACEHOLDER.search(title + breadcrumbs)
    textarea = re.search(r"<textarea[^>]*>(.*?)</textarea>", page, re.S).group(1)  # type: ignore[union-attr]
    assert textarea.strip() == f"{TEMPLATE} on Sundays"


def test_the_history_page_speaks_words_with_names_and_zoned_times(admin_client: Client, remembered) -> None:  # type: ignore[no-untyped-def]
    memory = remembered["memory"]
    page = text(admin_client.get(reverse("admin:personas_personalmemory_history", args=[memory.pk])))
    table = re.search(r'<table id="change-history".*?</table>', page, re.S).group(0)  # type: ignore[union-attr]
    # The versions are named with names; their field changes show the stored template, as the form does.
    versions = re.findall(r"<td><a [^>]*>(.*?)</a></td>", table, re.S)
    assert len(versions) == 2 and all(SHOWN in v and not PLACEHOLDER.search(v) for v in versions)
    assert "actor_kind" not in table.lower() and "Change reason" not in table and "None" not in table
    assert "system: test" in table
    assert len(CONSOLE_TIME.findall(table)) == 2


def test_the_api_and_the_export_give_memories_with_names_and_times_to_the_second(remembered) -> None:  # type: ignore[no-untyped-def]
    mina, server = remembered["mina"], remembered["persona"].server
    _, token = ApiToken.issue(server, "dash", ApiToken.Scope.READ)
    headers = {"Authorization": f"Bearer {token}"}
    base = f"/api/v1/servers/{server.server_disc_id}/users/{mina.user_disc_id}"
    listed = Client().get(f"{base}/memories", headers=headers)
    exported = Client().get(f"{base}/export", headers=headers)
    assert [m["content"] for m in listed.json()] == [f"{SHOWN} on Sundays"]
    body = exported.content.decode()
    assert f"{SHOWN} on Sundays" in body and "Mina prefers green tea" in body
    # The API also gives the stored `template` (what PATCH takes); what it shows has names only.
    assert not PLACEHOLDER.search(" ".join(m["content"] for m in listed.json()) + body)
    times = re.findall(r'"(?:created_at|updated_at)": "([^"]+)"', body)
    assert times and all(re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00", t) for t in times)


def test_a_version_whose_user_is_gone_is_still_titled(admin_client: Client, remembered) -> None:  # type: ignore[no-untyped-def]
    memory = remembered["memory"]
    DiscordUser.objects.filter(pk=remembered["mina"].pk).delete()  # the versions stay in the audit trail
    table = text(admin_client.get(reverse("admin:personas_personalmemory_history", args=[memory.pk])))
    assert "a user no longer stored taught Tomori a whistle" in table


def test_the_deleted_memories_list_names_the_user_even_once_they_are_gone(admin_client: Client, remembered) -> None:  # type: ignore[no-untyped-def]
    actions.delete_personal_memory(remembered["memory"], actor=actions.Actor.system("test"))
    url = reverse("admin:personas_deletedpersonalmemory_changelist")
    assert f"{SHOWN} on Sundays" in text(admin_client.get(url))
    DiscordUser.objects.filter(pk=remembered["mina"].pk).delete()
    page = text(admin_client.get(url))
    assert "a user no longer stored taught Tomori a whistle" in page and not PLACEHOLDER.search(page)


@pytest.fixture
def shared_lineage(make_server: Any, make_user: Any) -> dict[str, Any]:
    """Lineage L held by PersonaB (server B's main persona) and by Anya, an alter of it on server A; a
    memory of L about a member of A. alice moderates A only."""
    server_a, server_b = make_server(name="A Hall"), make_server(name="B Hall")
    persona_b = Persona.objects.create(server=server_b, persona_nickname="PersonaB")
    Persona.objects.create(
        server=server_a, persona_nickname="Anya", is_alter=True, persona_lineage_id=persona_b.persona_lineage_id
    )
    mina: DiscordUser = make_user(username="mina", global_name="Mina")
    ServerMember.objects.create(server=server_a, user_disc_id=mina.user_disc_id, username="mina")
    actor = actions.Actor.system("test")
    memory = actions.add_personal_memory(mina, persona_b.persona_lineage_id, "{bot} owes {user} a note", actor=actor)
    alice = get_user_model().objects.create_user("alice", is_staff=True)
    ServerModerator.objects.create(server=server_a, user=alice)
    client = Client()
    client.force_login(alice)
    return {
        "memory": memory,
        "mina": mina,
        "alice": client,
        "server": server_a,
        "lineage": persona_b.persona_lineage_id,
    }


def test_a_moderator_never_sees_another_servers_persona_in_memory_titles(shared_lineage) -> None:  # type: ignore[no-untyped-def]
    memory, alice = shared_lineage["memory"], shared_lineage["alice"]
    pages = {
        "user": text(alice.get(reverse("admin:personas_discorduser_change", args=[shared_lineage["mina"].pk]))),
        "memory": text(alice.get(reverse("admin:personas_personalmemory_change", args=[memory.pk]))),
        "history": text(alice.get(reverse("admin:personas_personalmemory_history", args=[memory.pk]))),
    }
    for page in pages.values():
        assert "PersonaB" not in page
    assert "Anya owes Mina a note" in pages["user"] and "Anya owes Mina a note" in pages["history"]


def test_a_memorys_title_costs_no_query_and_names_nobody_it_was_not_given(
    shared_lineage, django_assert_num_queries: Any
) -> None:  # type: ignore[no-untyped-def]
    memory = PersonalMemory.objects.get(pk=shared_lineage["memory"].pk)
    with django_assert_num_queries(0):
        title = str(memory)
    assert title == "the persona owes the person a note"


def test_the_history_page_costs_the_same_queries_however_many_versions(
    admin_client: Client, remembered, django_assert_num_queries: Any
) -> None:  # type: ignore[no-untyped-def]
    memory = remembered["memory"]
    url = reverse("admin:personas_personalmemory_history", args=[memory.pk])
    admin_client.get(url)  # sessions, content types and the like are cached after the first page
    with CaptureQueriesContext(connection) as few:
        text(admin_client.get(url))
    for n in range(5):
        actions.update_personal_memory(memory, content=f"{TEMPLATE} {n}", tags=None, actor=actions.Actor.system("t"))
    with django_assert_num_queries(len(few.captured_queries)):
        page = text(admin_client.get(url))
    versions = re.findall(r"<td><a [^>]*>(.*?)</a></td>", page, re.S)
    assert len(versions) == 7 and all(SHOWN in v for v in versions)


def test_an_api_client_edits_the_template_and_the_memory_keeps_following_renames(remembered) -> None:  # type: ignore[no-untyped-def]
    mina, server = remembered["mina"], remembered["persona"].server
    _, token = ApiToken.issue(server, "dash", ApiToken.Scope.READ_WRITE)
    headers = {"Authorization": f"Bearer {token}"}
    [listed] = (
        Client()
        .get(f"/api/v1/servers/{server.server_disc_id}/users/{mina.user_disc_id}/memories", headers=headers)
        .json()
    )
    assert listed["content"] == f"{SHOWN} on Sundays" and listed["template"] == f"{TEMPLATE} on Sundays"
    patched = Client().patch(
        f"/api/v1/servers/{server.server_disc_id}/memories/{listed['personal_memory_id']}",
        data={"content": listed["template"].replace("Sundays", "Mondays")},
        content_type="application/json",
        headers=headers,
    )
    assert patched.status_code == 200 and patched.json()["template"] == f"{TEMPLATE} on Mondays"
    DiscordUser.objects.filter(pk=mina.pk).update(global_name="Mina Rose")
    again = Client().get(f"/api/v1/servers/{server.server_disc_id}/users/{mina.user_disc_id}/memories", headers=headers)
    assert again.json()[0]["content"] == "Mina Rose taught Tomori a whistle on Mondays"


def test_a_server_memory_names_its_own_servers_persona_and_lineage_0_its_server(
    admin_client: Client, shared_lineage
) -> None:  # type: ignore[no-untyped-def]
    """Even a superuser, who sees every persona of the shared lineage, reads a server memory of A with
    A's persona: only A's personas read it. Lineage 0 there is every persona of A, not of every server."""
    server, lineage, actor = shared_lineage["server"], shared_lineage["lineage"], actions.Actor.system("test")
    actions.add_server_memory(server, lineage, "{bot} keeps the keys", actor=actor)
    actions.add_server_memory(server, GLOBAL_LINEAGE_ID, "{bot} opens at nine", actor=actor)
    page = text(admin_client.get(reverse("admin:personas_servermemory_changelist")))
    assert "Anya keeps the keys" in page and f"Anya · {lineage}" in page and "PersonaB" not in page
    assert "every persona of this server · 0" in page and "global (every persona)" not in page
