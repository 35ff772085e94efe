"""Every endpoint keeps server A's data from server B's moderator and token (404, not 403),
and from non-staff sessions (401)."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from tests.personas.api.conftest import bearer


def a_endpoints(world):  # type: ignore[no-untyped-def]
    a = world["a"]
    sid = a["server"].server_id
    uid = a["user"].user_disc_id
    return [
        ("get", f"/api/v1/servers/{sid}", None),
        ("get", f"/api/v1/servers/{sid}/personas", None),
        ("get", f"/api/v1/servers/{sid}/users/{uid}/privacy", None),
        ("put", f"/api/v1/servers/{sid}/users/{uid}/privacy", {"privacy_level": 2}),
        ("get", f"/api/v1/servers/{sid}/users/{uid}/memories", None),
        (
            "post",
            f"/api/v1/servers/{sid}/users/{uid}/memories",
            {"persona_id": a["persona"].persona_id, "content": "x"},
        ),
        ("patch", f"/api/v1/servers/{sid}/memories/{a['memory'].personal_memory_id}", {"content": "changed"}),
        ("delete", f"/api/v1/servers/{sid}/memories/{a['memory'].personal_memory_id}", None),
        ("get", f"/api/v1/servers/{sid}/reminders", None),
        ("delete", f"/api/v1/servers/{sid}/reminders/{a['reminder'].reminder_id}", None),
        ("get", f"/api/v1/servers/{sid}/blacklist", None),
        ("post", f"/api/v1/servers/{sid}/blacklist", {"user_disc_id": "123"}),
        ("delete", f"/api/v1/servers/{sid}/blacklist/51009", None),
        ("get", f"/api/v1/servers/{sid}/users/{uid}/export", None),
        ("get", f"/api/v1/servers/{sid}/users/{uid}/forget", None),
        ("post", f"/api/v1/servers/{sid}/users/{uid}/forget", None),
        ("get", f"/api/v1/records/{a['record'].pk}", None),
        ("get", f"/api/v1/records/{a['record'].pk}/snapshot", None),
    ]


def call(client: Client, method: str, path: str, body, **headers):  # type: ignore[no-untyped-def]
    kwargs = {"content_type": "application/json", "data": json.dumps(body)} if body is not None else {}
    return getattr(client, method)(path, headers=headers, **kwargs)


@pytest.mark.django_db
def test_server_b_token_gets_404_for_every_server_a_object(world):  # type: ignore[no-untyped-def]
    client = Client()
    for method, path, body in a_endpoints(world):
        response = call(client, method, path, body, **bearer(world["token_b_write"]))
        assert response.status_code == 404, (method, path, response.status_code)
        assert b"secret memory of A" not in response.content


@pytest.mark.django_db
def test_server_b_moderator_session_gets_404_for_every_server_a_object(world):  # type: ignore[no-untyped-def]
    client = Client(enforce_csrf_checks=False)
    client.force_login(world["bob"])
    for method, path, body in a_endpoints(world):
        response = call(client, method, path, body)
        assert response.status_code == 404, (method, path, response.status_code)


@pytest.mark.django_db
def test_non_staff_session_is_unauthorized_everywhere(world):  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(world["charlie"])
    for method, path, body in a_endpoints(world):
        assert call(client, method, path, body).status_code == 401, (method, path)
    assert client.get("/api/v1/records").status_code == 401


@pytest.mark.django_db
def test_lists_only_show_own_server(world):  # type: ignore[no-untyped-def]
    client = Client()
    servers = client.get("/api/v1/servers", headers=bearer(world["token_b_write"])).json()
    assert [s["name"] for s in servers["items"]] == ["Server B"]
    records = client.get("/api/v1/records", headers=bearer(world["token_b_write"])).json()
    assert records["count"] == 1
    assert {r["persona_nickname"] for r in records["items"]} == {"PersonaB"}
    filtered = client.get(
        f"/api/v1/records?server_id={world['a']['server'].server_id}", headers=bearer(world["token_b_write"])
    ).json()
    assert filtered["count"] == 0


@pytest.mark.django_db
def test_server_a_moderator_reads_and_writes_server_a(world):  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(world["alice"])
    a = world["a"]
    detail = client.get(f"/api/v1/records/{a['record'].pk}")
    assert detail.status_code == 200
    assert detail.json()["context_items"][0]["text"] == "text of A"
    snapshot = client.get(f"/api/v1/records/{a['record'].pk}/snapshot")
    assert snapshot.json()["marker"] == "snapshot of A"
    assert "attachment" in snapshot["Content-Disposition"]
    memories = client.get(f"/api/v1/servers/{a['server'].server_id}/users/{a['user'].user_disc_id}/memories")
    assert [m["content"] for m in memories.json()] == ["secret memory of A"]


@pytest.mark.django_db
def test_read_only_token_cannot_write(world):  # type: ignore[no-untyped-def]
    client = Client()
    a = world["a"]
    response = client.put(
        f"/api/v1/servers/{a['server'].server_id}/users/{a['user'].user_disc_id}/privacy",
        data=json.dumps({"privacy_level": 2}),
        content_type="application/json",
        headers=bearer(world["token_a_read"]),
    )
    assert response.status_code == 403
    a["user"].refresh_from_db()
    assert a["user"].privacy_level == 0


@pytest.mark.django_db
def test_revoked_and_unknown_tokens_are_unauthorized(world):  # type: ignore[no-untyped-def]
    from django.utils import timezone

    from personas.models import ApiToken

    ApiToken.objects.filter(server=world["a"]["server"]).update(revoked_at=timezone.now())
    client = Client()
    assert client.get("/api/v1/servers", headers=bearer(world["token_a_write"])).status_code == 401
    assert client.get("/api/v1/servers", headers=bearer("tmr_nonsense")).status_code == 401


@pytest.mark.django_db
def test_tokens_are_stored_hashed(world):  # type: ignore[no-untyped-def]
    from personas.models import ApiToken

    raw = world["token_a_write"]
    stored = list(ApiToken.objects.values_list("token_hash", "token_prefix"))
    assert all(raw != h and len(h) == 64 for h, _ in stored)
    assert raw[:12] in {p for _, p in stored}
