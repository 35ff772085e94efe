"""A server's own LLM key and base URL appear in no API answer (issue 13 item 1): not in the server,
its personas or records, not in a record's snapshot export, not in the OpenAPI schema."""

from __future__ import annotations

import pytest
from django.test import Client

from personas.models import ServerSettings
from tests.personas.api.conftest import bearer

pytestmark = pytest.mark.django_db

KEY, URL = "sk-server-key-of-a-0123456789", "http://own-endpoint.example/v1"


def test_no_read_of_the_api_carries_the_servers_key_or_endpoint(world) -> None:  # type: ignore[no-untyped-def]
    server, record = world["a"]["server"], world["a"]["record"]
    ServerSettings.objects.filter(server=server).update(llm_base_url=URL, llm_api_key=KEY, llm_model="m")
    client, headers = Client(), bearer(world["token_a_read"])
    paths = [
        "/api/v1/servers",
        f"/api/v1/servers/{server.pk}",
        f"/api/v1/servers/{server.pk}/personas",
        "/api/v1/records",
        f"/api/v1/records/{record.pk}",
        f"/api/v1/records/{record.pk}/snapshot",
        "/api/openapi.json",
    ]
    for path in paths:
        response = client.get(path, headers=headers)
        assert response.status_code == 200, path
        body = response.content.decode()
        assert KEY not in body and URL not in body and "llm_api_key" not in body, path
