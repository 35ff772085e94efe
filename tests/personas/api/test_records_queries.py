"""The record list costs a constant number of queries whatever the page size."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from chatcontext.models import PromptRecord
from tests.personas.api.conftest import bearer


@pytest.mark.django_db
def test_record_list_query_count_is_constant_in_page_size(world):  # type: ignore[no-untyped-def]
    a = world["a"]
    base = datetime(2026, 11, 1, tzinfo=UTC)
    PromptRecord.objects.bulk_create(
        PromptRecord(
            server=a["server"],
            channel_disc_id="77",
            persona=a["persona"],
            persona_nickname="PersonaA",
            created_at=base + timedelta(minutes=i),
        )
        for i in range(120)
    )
    client = Client()
    # The first request of a minute also stamps the token's last_used_at; measure after it.
    client.get("/api/v1/records?limit=1", headers=bearer(world["token_a_read"]))
    counts = []
    for limit in (1, 10, 100):
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(f"/api/v1/records?limit={limit}", headers=bearer(world["token_a_read"]))
        assert response.status_code == 200
        assert len(response.json()["items"]) == limit
        counts.append(len(ctx.captured_queries))
    assert counts[0] == counts[1] == counts[2]


@pytest.mark.django_db
def test_record_list_filters(world):  # type: ignore[no-untyped-def]
    client = Client()
    a = world["a"]
    headers = bearer(world["token_a_read"])
    assert client.get("/api/v1/records?channel_disc_id=77", headers=headers).json()["count"] == 1
    assert client.get("/api/v1/records?channel_disc_id=78", headers=headers).json()["count"] == 0
    assert client.get(f"/api/v1/records?persona_id={a['persona'].persona_id}", headers=headers).json()["count"] == 1
    assert client.get("/api/v1/records?since=2026-12-01T00:00:00Z", headers=headers).json()["count"] == 0
    assert client.get("/api/v1/records?until=2026-12-01T00:00:00Z", headers=headers).json()["count"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    ["since=0001-01-01T00:00:00%2B21:00", "until=9999-12-31T23:00:00-21:00", "since=2026-11-29T10:00:00%2B21:00"],
)
def test_record_list_date_bounds_with_extreme_offsets_are_answered(world, query):  # type: ignore[no-untyped-def]
    response = Client().get(f"/api/v1/records?{query}", headers=bearer(world["token_a_read"]))
    assert response.status_code == 200
    assert response.json()["count"] == 1
