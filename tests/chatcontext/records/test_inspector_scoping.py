"""Every inspector page is per-server (issue 5 acceptance): bob, moderator of B, gets a 404 for
server A's records on the changelist, the detail page, the snapshot download and "replay now";
charlie (no staff account) is sent to the login page; superusers see everything."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from chatcontext.models import PromptRecord
from tests.chatcontext.records.conftest import A_MARKUP, B_GREETING, World

pytestmark = pytest.mark.django_db(databases=["default", "replay"])

CHANGELIST = "admin:chatcontext_promptrecord_changelist"


def page(name: str, record: PromptRecord) -> str:
    return reverse(f"admin:chatcontext_promptrecord_{name}", args=[record.pk])


def request(client: Client, name: str, record: PromptRecord):  # type: ignore[no-untyped-def]
    url = page(name, record)
    return client.post(url) if name == "replay" else client.get(url)


RECORD_PAGES = ["change", "snapshot", "replay", "history"]


@pytest.mark.parametrize("name", RECORD_PAGES)
def test_moderator_of_b_gets_404_for_every_page_of_a_record(world: World, name: str) -> None:
    response = request(world.client("bob"), name, world.record_a)
    assert response.status_code == 404
    assert A_MARKUP not in response.content.decode()


@pytest.mark.parametrize("name", RECORD_PAGES)
def test_moderator_of_a_opens_every_page_of_a_record(world: World, name: str) -> None:
    assert request(world.client("alice"), name, world.record_a).status_code == 200


@pytest.mark.parametrize("name", RECORD_PAGES)
def test_moderator_of_a_gets_404_for_every_page_of_b_record(world: World, name: str) -> None:
    assert request(world.client("alice"), name, world.record_b).status_code == 404


@pytest.mark.parametrize("name", [*RECORD_PAGES, "changelist"])
def test_non_staff_is_sent_to_login(world: World, name: str) -> None:
    url = reverse(CHANGELIST) if name == "changelist" else page(name, world.record_a)
    client = world.client("charlie")
    response = client.post(url) if name == "replay" else client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


@pytest.mark.parametrize("name", RECORD_PAGES)
def test_anonymous_is_sent_to_login(world: World, name: str) -> None:
    response = request(Client(), name, world.record_a)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_changelist_shows_only_the_moderators_servers(world: World) -> None:
    alice_page = world.client("alice").get(reverse(CHANGELIST))
    bob_page = world.client("bob").get(reverse(CHANGELIST))
    assert alice_page.status_code == bob_page.status_code == 200
    alice_ids = {r.pk for r in alice_page.context["cl"].result_list}
    bob_ids = {r.pk for r in bob_page.context["cl"].result_list}
    assert alice_ids == {world.first_a.pk, world.record_a.pk}
    assert bob_ids == {world.record_b.pk}
    # The server filter offers only the moderator's own servers: B's name never reaches alice.
    assert "Day Larks" not in alice_page.content.decode()
    assert "Tidepool Makerspace" not in bob_page.content.decode()


def test_superuser_sees_every_server(world: World) -> None:
    response = world.client("root").get(reverse(CHANGELIST))
    ids = {r.pk for r in response.context["cl"].result_list}
    assert ids == {world.first_a.pk, world.record_a.pk, world.record_b.pk}
    for record in (world.record_a, world.record_b):
        assert world.client("root").get(page("change", record)).status_code == 200


def test_missing_record_is_404_like_another_servers(world: World) -> None:
    missing = PromptRecord(pk=world.record_b.pk + 1000)
    for name in RECORD_PAGES:
        assert request(world.client("alice"), name, missing).status_code == 404


def test_staff_without_moderation_sees_no_inspector(world: World) -> None:
    from django.contrib.auth import get_user_model

    dora = get_user_model().objects.create_user("dora", password="pw-dora", is_staff=True)
    client = Client()
    client.force_login(dora)
    assert client.get(reverse(CHANGELIST)).status_code == 403
    assert client.get(page("change", world.record_a)).status_code == 404


def test_records_are_read_only_and_only_superusers_delete(world: World) -> None:
    alice = world.client("alice")
    assert alice.get(reverse("admin:chatcontext_promptrecord_add")).status_code == 403
    assert alice.get(page("delete", world.record_a)).status_code == 403
    assert world.client("bob").get(page("delete", world.record_a)).status_code == 404
    # The inspector page offers no form to edit: posting to it changes nothing.
    alice.post(page("change", world.record_a), {"channel_name": "hacked"})
    world.record_a.refresh_from_db()
    assert world.record_a.channel_name == "workbench"

    root = world.client("root")
    response = root.post(page("delete", world.record_b), {"post": "yes"})
    assert response.status_code == 302
    assert not PromptRecord.objects.filter(pk=world.record_b.pk).exists()


def test_replay_now_is_post_only_and_csrf_protected(world: World) -> None:
    assert world.client("alice").get(page("replay", world.record_a)).status_code == 405
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(world.alice)
    assert strict.post(page("replay", world.record_a)).status_code == 403


def test_snapshot_download_is_the_stored_snapshot(world: World) -> None:
    response = world.client("alice").get(page("snapshot", world.record_a))
    assert response["Content-Disposition"] == f'attachment; filename="turn-{world.record_a.pk}.snapshot.json"'
    assert response.json() == world.doc_a
    assert B_GREETING not in response.content.decode()


def test_admin_index_offers_the_inspector_to_moderators(world: World) -> None:
    response = world.client("alice").get(reverse("admin:index"))
    assert response.status_code == 200
    assert f'href="{reverse(CHANGELIST)}"' in response.content.decode()
