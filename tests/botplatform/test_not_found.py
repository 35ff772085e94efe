"""With DEBUG on (``make run``), a not-found page is the production one for everyone but superusers
(issue 16 item 9, ``botplatform.middleware``): bob, moderator of Quokka Hall, opening Zephyr Hall's
server page learns neither the site's URL patterns nor which view refused him."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from personas.models import Server, ServerModerator

pytestmark = pytest.mark.django_db

# What only Django's technical 404 page prints.
TECHNICAL_MARKS = ("Using the URLconf", "Raised by:", "DEBUG = True", "botplatform.urls")


@pytest.fixture
def debug_on(settings: Any) -> Any:
    settings.DEBUG = True
    return settings


@pytest.fixture
def people() -> dict[str, Client]:
    User = get_user_model()
    zephyr = Server.objects.create(server_disc_id="7100", name="Zephyr Hall")
    quokka = Server.objects.create(server_disc_id="7200", name="Quokka Hall")
    alice = User.objects.create_user("alice", is_staff=True)
    bob = User.objects.create_user("bob", is_staff=True)
    charlie = User.objects.create_user("charlie")
    root = User.objects.create_superuser("root")
    ServerModerator.objects.create(server=zephyr, user=alice)
    ServerModerator.objects.create(server=quokka, user=bob)
    clients = {"anonymous": Client()}
    for name, account in (("alice", alice), ("bob", bob), ("charlie", charlie), ("root", root)):
        clients[name] = Client()
        clients[name].force_login(account)
    clients["zephyr_url"] = reverse("admin:personas_server_change", args=[zephyr.pk])  # type: ignore[assignment]
    return clients


def plain(response: Any) -> bool:
    body = response.content.decode()
    return response.status_code == 404 and "Not found" in body and not any(m in body for m in TECHNICAL_MARKS)


def test_a_moderator_opening_another_servers_object_gets_the_plain_page(debug_on: Any, people: Any) -> None:
    response = people["bob"].get(people["zephyr_url"])
    assert plain(response)
    assert "Zephyr" not in response.content.decode()
    assert people["alice"].get(people["zephyr_url"]).status_code == 200


@pytest.mark.parametrize("who", ["anonymous", "charlie", "bob"])
def test_an_address_no_route_matches_lists_no_routes(debug_on: Any, people: Any, who: str) -> None:
    for path in ("/nowhere/", "/admin/personas/nowhere/", "/playground/nowhere/"):
        response = people[who].get(path)
        assert plain(response) or response.status_code == 302, (path, response.status_code)
    assert plain(people[who].get("/nowhere/"))


def test_a_missing_trailing_slash_is_still_redirected(debug_on: Any, people: Any) -> None:
    response = people["bob"].get("/admin")
    assert response.status_code == 301 and response["Location"] == "/admin/"


def test_the_superuser_keeps_djangos_page(debug_on: Any, people: Any) -> None:
    body = people["root"].get("/nowhere/").content.decode()
    assert "Using the URLconf" in body
    missing = Server.objects.order_by("-pk").first().pk + 1  # type: ignore[union-attr]
    assert "Raised by:" in people["root"].get(reverse("admin:personas_server_change", args=[missing])).content.decode()


def test_the_api_keeps_its_json_not_found(debug_on: Any, people: Any) -> None:
    response = people["bob"].get("/api/v1/servers/999999")
    assert response.status_code in {401, 404}
    assert response["Content-Type"].startswith("application/json")
