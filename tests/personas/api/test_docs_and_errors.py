"""The API as a person reads it (issue 16, item 10): every path and query parameter is described in
the served OpenAPI, the docs say where tokens are created, a server is named by its Discord id or
its internal id, 422s locate the bad value as it was sent, and 404s name no internal model."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from chatcontext.core.snapshot_format import FORMAT
from chatcontext.models import PromptRecord
from chatcontext.snapshot import validate_snapshot
from personas.models import ApiToken, Server, ServerModerator
from tests.personas.api.conftest import bearer

pytestmark = pytest.mark.django_db

SNOWFLAKE = "830140552577290247"


def openapi() -> dict:  # type: ignore[type-arg]
    response = Client().get("/api/openapi.json")
    assert response.status_code == 200
    return response.json()


def test_every_path_and_query_parameter_has_a_description() -> None:
    operations = [(path, method, op) for path, item in openapi()["paths"].items() for method, op in item.items()]
    parameters = [(f"{method.upper()} {path}", p) for path, method, op in operations for p in op.get("parameters", [])]
    assert {p["in"] for _, p in parameters} == {"path", "query"}
    assert len(parameters) > 30  # every operation was walked
    bare = [f"{where} {p['in']} {p['name']}" for where, p in parameters if not str(p.get("description", "")).strip()]
    assert bare == []
    server_ids = [p for _, p in parameters if p["name"] == "server_id"]
    assert server_ids and all("Discord id" in p["description"] for p in server_ids)


def test_the_docs_say_where_tokens_are_created_and_how_they_are_sent() -> None:
    description = openapi()["info"]["description"]
    assert reverse("admin:personas_apitoken_add") in description
    assert "Authorization: Bearer tmr_" in description and "shown once" in description


@pytest.fixture
def snowflake_server(world):  # type: ignore[no-untyped-def]
    server = Server.objects.create(server_disc_id=SNOWFLAKE, name="Night Owls")
    ServerModerator.objects.create(server=server, user=world["alice"])
    PromptRecord.objects.create(server=server, channel_disc_id="77", created_at=world["a"]["record"].created_at)
    _, token = ApiToken.issue(server, "dash", ApiToken.Scope.READ)
    return server, token


def test_a_server_is_named_by_its_discord_id_or_its_internal_id(world, snowflake_server) -> None:  # type: ignore[no-untyped-def]
    server, token = snowflake_server
    client = Client()
    by_discord = client.get(f"/api/v1/servers/{SNOWFLAKE}", headers=bearer(token))
    by_row = client.get(f"/api/v1/servers/{server.pk}", headers=bearer(token))
    assert by_discord.status_code == by_row.status_code == 200
    assert by_discord.json() == by_row.json() and by_discord.json()["server_id"] == server.pk
    assert client.get(f"/api/v1/servers/{SNOWFLAKE}/personas", headers=bearer(token)).status_code == 200
    [record] = client.get(f"/api/v1/records?server_id={SNOWFLAKE}", headers=bearer(token)).json()["items"]
    assert record["server_id"] == server.pk
    # The same ids stay scoped: another server's token finds nothing by either name.
    other = bearer(world["token_a_read"])
    for key in (SNOWFLAKE, str(server.pk)):
        assert client.get(f"/api/v1/servers/{key}", headers=other).status_code == 404
        assert client.get(f"/api/v1/records?server_id={key}", headers=other).json()["items"] == []


def test_a_422_locates_the_bad_value_where_it_was_sent(world) -> None:  # type: ignore[no-untyped-def]
    server = world["a"]["server"]
    response = Client().post(
        f"/api/v1/servers/{server.pk}/users/51001/memories",
        json.dumps({"persona_id": "x", "content": ""}),
        content_type="application/json",
        headers=bearer(world["token_a_write"]),
    )
    assert response.status_code == 422
    assert [e["loc"] for e in response.json()["detail"]] == [["body", "persona_id"], ["body", "content"]]
    query = Client().get("/api/v1/records?since=yesterday", headers=bearer(world["token_a_read"]))
    assert [e["loc"] for e in query.json()["detail"]] == [["query", "since"]]


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/api/v1/records/{other_record}", "No such prompt record."),
        ("/api/v1/records/{other_record}/snapshot", "No such prompt record."),
        ("/api/v1/servers/{other_server}", "No such server."),
        ("/api/v1/servers/{server}/users/52001/privacy", "No such user in this server."),
    ],
)
def test_a_404_says_what_was_not_found_and_names_no_model_even_with_debug_on(world, settings, path, said) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = True  # make run's default: ninja appended Django's "No PromptRecord matches…"
    url = path.format(
        other_record=world["b"]["record"].pk, other_server=world["b"]["server"].pk, server=world["a"]["server"].pk
    )
    response = Client().get(url, headers=bearer(world["token_a_read"]))
    assert response.status_code == 404
    assert response.json() == {"detail": said}


def test_the_snapshot_exports_example_is_a_snapshot_replay_turn_takes() -> None:
    """The documented example of ``GET /api/v1/records/{id}/snapshot`` validates as the current format
    (it named format 1 and lacked required keys, so it was no replay_turn input at all)."""
    operation = openapi()["paths"]["/api/v1/records/{record_id}/snapshot"]["get"]
    example = operation["responses"]["200"]["content"]["application/json"]["example"]

    assert example["format"] == FORMAT
    assert validate_snapshot(example) == example
