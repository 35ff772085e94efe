"""The Content-Security-Policy in a real browser (issue 26 item 1): Debian's Chromium, headless, driven
by playwright-core from Node (tests/bot/playground/browser/csp.mjs), against ``manage.py serve`` on a fresh
demo database. The admin, the playground (its script runs, its websocket connects, its channel picker
opens the channel picked) and the API docs (Swagger UI renders) work under the policy, and Chromium
reports no violation of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bot.playground.chromium import run_in_chromium

pytestmark = pytest.mark.slow

# The playground goes live (its websocket opens) on a channel, and its picker switches to the other;
# the demo server starts with none.
CHANNEL_SETUP = (
    "from bot.playground import store; from personas.models import Server; "
    "from personas.management.commands.load_demo import DEMO_SERVER_DISC_ID; "
    "server = Server.objects.get(server_disc_id=DEMO_SERVER_DISC_ID); "
    "[store.create_channel(server, name, now_ms=1893456000000) for name in ('csp', 'csp-two')]"
)


def test_every_kind_of_page_works_under_the_policy_without_a_violation(demo_var_dir: Path) -> None:
    result, _ = run_in_chromium(demo_var_dir, "csp.mjs", setup=CHANNEL_SETUP)

    assert result["ok"], result.get("error") or result
    assert (
        "script-src 'self'" in result["policy"]
        and "'unsafe-inline'" not in result["policy"].split("script-src")[1].split(";")[0]
    )
    assert result["visited"] == [
        "/admin/",
        "/admin/personas/persona/?is_alter__exact=0",
        "/admin/personas/persona/1/change/",
        "/playground/",
        "/api/docs",
    ]
    assert result["playgroundLive"] and result["pickedChannel"] == "#csp-two" and result["swaggerOperations"] > 0
    assert result["violations"] == [] and result["pageErrors"] == []
