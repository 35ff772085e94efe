"""Redis down does not break turns (issue 13 item 7). The live feed is best-effort: with REDIS_URL
pointing at a closed local port a playground post still answers with its turn and its record, and
``replay_turn --record`` stores the record and exits 0; each failed announcement logs one line
without personal data, and ``/api/v1/health`` says "degraded" and names Redis."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from typing import Any

import pytest
from channels.layers import get_channel_layer
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from botplatform.settings import REDIS_URL
from chatcontext.models import PromptRecord
from infrastructure import best_effort
from personas.models import Server, ServerModerator
from tests.bot.playground.conftest import MINA, Demo
from tests.chatcontext.records.live.conftest import closed_port
from tests.chatcontext.records.live.feed import SNAPSHOT, SNAPSHOT_SERVER, SUBPROCESS_SECONDS
from tests.paths import REPO_ROOT as ROOT
from tests.services import embedded_and_redis, require_redis

FEED_FAILURE = "live feed unavailable"


@pytest.mark.django_db(transaction=True)
def test_a_playground_post_runs_its_turn_with_redis_down(demo: Demo, redis_down: str, caplog) -> None:  # type: ignore[no-untyped-def]
    alice = get_user_model().objects.create_user("alice", password="pw", is_staff=True)
    ServerModerator.objects.create(server=demo.server, user=alice)
    client = Client()
    client.force_login(alice)
    caplog.set_level(logging.INFO)

    response = client.post(
        reverse("playground:send_message", args=[demo.channel.pk]), {"identity": MINA, "content": "tomori, hi"}
    )

    assert response.status_code == 200, response.content[:2000]
    answered = response.json()
    assert [m["kind"] for m in answered["messages"]] == ["user", "persona"]
    [summary] = answered["records"]
    assert summary["error"] == ""
    assert PromptRecord.objects.filter(server=demo.server).count() == 1
    failures = [r for r in caplog.records if FEED_FAILURE in r.getMessage()]
    assert failures, [r.getMessage() for r in caplog.records]
    for record in failures:  # one line: no traceback, no text of the turn
        assert record.exc_info is None
        assert "tomori, hi" not in record.getMessage() and "\n" not in record.getMessage()


@pytest.mark.slow
def test_replay_turn_record_stores_the_record_and_exits_0_with_redis_down(shared_database_url: str) -> None:
    server = Server.objects.create(server_disc_id=SNAPSHOT_SERVER["disc_id"], name=SNAPSHOT_SERVER["name"])
    env = {**os.environ, "DATABASE_URL": shared_database_url, "REDIS_URL": f"redis://127.0.0.1:{closed_port()}/0"}
    process = subprocess.run(
        [sys.executable, "manage.py", "replay_turn", str(SNAPSHOT), "--record"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_SECONDS,
    )
    assert process.returncode == 0, process.stderr
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 2, lines
    assert FEED_FAILURE in lines[0] and "Traceback" not in process.stderr
    assert lines[1].startswith("stored prompt record ")
    record_id = int(lines[1].rsplit(" ", 1)[1])
    assert PromptRecord.objects.filter(pk=record_id, server=server).exists()


@pytest.mark.django_db
def test_health_is_degraded_and_names_redis_when_it_is_down(redis_down: str) -> None:
    response = Client().get("/api/v1/health")
    assert response.status_code == 200
    assert response.json() == {"status": "degraded", "components": {"database": "ok", "redis": "unreachable"}}


@pytest.mark.django_db
@pytest.mark.parametrize("redis", embedded_and_redis("not configured"))
def test_health_is_ok_without_redis_and_with_redis_up(settings: Any, redis: str) -> None:
    settings.REDIS_URL = require_redis(REDIS_URL) if redis == "redis" else ""
    expected = "ok" if redis == "redis" else "not configured"
    response = Client().get("/api/v1/health")
    assert response.json() == {"status": "ok", "components": {"database": "ok", "redis": expected}}


def test_an_outage_logs_one_line_and_skips_calls_until_the_retry_time(monkeypatch, caplog) -> None:  # type: ignore[no-untyped-def]
    clock = [1000.0]
    monkeypatch.setattr(best_effort.time, "monotonic", lambda: clock[0])
    outage = best_effort.Outage("live feed", "events are dropped")
    caplog.set_level(logging.INFO, logger="infrastructure.best_effort")

    for _ in range(3):
        outage.failed(ConnectionError("127.0.0.1:6379 refused"))
    assert outage.skip()
    clock[0] += best_effort.RETRY_SECONDS
    assert not outage.skip()  # time to try again
    outage.succeeded()
    outage.succeeded()

    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        f"live feed unavailable (ConnectionError): events are dropped; retrying every {best_effort.RETRY_SECONDS}s",
        "live feed available again",
    ]
    assert not outage.skip()


@pytest.mark.django_db
async def test_a_dropped_event_does_not_wait_on_the_dead_server_again(redis_down: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[str] = []
    layer = get_channel_layer()
    original = layer.group_send

    async def counting(group: str, message: dict) -> None:  # type: ignore[type-arg]
        calls.append(group)
        await original(group, message)

    monkeypatch.setattr(layer, "group_send", counting)
    assert await best_effort.send_to_group("g", {"type": "x"}) is False
    assert await best_effort.send_to_group("g", {"type": "x"}) is False
    assert calls == ["g"]
