"""The playground in a real browser (issue 8 acceptance): Debian's Chromium, headless, driven by
playwright-core from Node (tests/playground/browser/playground.mjs), against ``manage.py serve`` (HTTP
and websockets) on a fresh SQLite database with the demo server loaded, as ``make run`` serves it.

The script logs in to the admin, opens the playground, picks the demo server, creates a channel,
speaks as Mina (MINIMAL) mentioning the persona, watches the reply stream in and the prompt panel
show Mina's profile block, speaks as Rei (FULL: not answered), speaks as Mina again and checks that
Rei's words are in the conversation but not in the new prompt. The screenshot lands in
artifacts/playground.png (git-ignored; CI keeps it as an artifact).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.playground.conftest import MINA, REI
from tests.serve_process import fresh_env, manage, serving

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BROWSER_DIR = Path(__file__).resolve().parent / "browser"
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "artifacts"
SCREENSHOT = ARTIFACTS / "playground.png"
START_TIMEOUT_S = 90
SCRIPT_TIMEOUT_S = 300
USERNAME, PASSWORD = "playground-admin", "pw-playground-browser"


def server_env(var_dir: Path) -> dict[str, str]:
    """A fresh SQLite database, no Redis (in-memory channel layer), no bot and no LLM provider."""
    env = fresh_env(var_dir, DJANGO_SUPERUSER_USERNAME=USERNAME, DJANGO_SUPERUSER_PASSWORD=PASSWORD)
    return {k: v for k, v in env.items() if not k.startswith("LLM_")}


def ensure_node_modules() -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("Node.js and npm are needed for the browser test (Debian packages nodejs and npm)")
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make system-deps` (apt-get install chromium)")
    if not (BROWSER_DIR / "node_modules" / "playwright-core").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=BROWSER_DIR, check=True, timeout=600)


def run_in_chromium(tmp_path: Path, script: str, *, setup: str = "", **script_env: str) -> tuple[dict[str, Any], str]:
    """Serve a fresh demo database as `make run` does, run one browser script against it, and return
    the script's JSON result and the server's log. ``setup``: Python run by ``manage.py shell -c``
    after the demo is loaded, for rows a scenario adds."""
    ensure_node_modules()
    env = server_env(tmp_path)
    for command in (["migrate", "--noinput", "-v0"], ["load_demo"], ["ensure_admin"]):
        manage(env, *command)
    if setup:
        manage(env, "shell", "-c", setup)
    log_path = tmp_path / "serve.log"
    with serving(env, log_path, "--no-bot") as base:
        completed = subprocess.run(
            ["node", script],
            cwd=BROWSER_DIR,
            env={
                **os.environ,
                "BASE_URL": base,
                "PG_USERNAME": USERNAME,
                "PG_PASSWORD": PASSWORD,
                "CHROMIUM": str(CHROMIUM),
                **script_env,
            },
            capture_output=True,
            text=True,
            timeout=SCRIPT_TIMEOUT_S,
        )
    lines = completed.stdout.strip().splitlines()
    assert lines, f"no result from the browser script:\n{completed.stderr}\n{log_path.read_text()}"
    return json.loads(lines[-1]), log_path.read_text()


def test_the_playground_in_chromium_answers_shows_the_prompt_and_keeps_a_full_users_words_out(tmp_path):
    result, _ = run_in_chromium(
        tmp_path,
        "playground.mjs",
        PG_MINIMAL_ID=MINA,
        PG_FULL_ID=REI,
        PG_PROFILE_MARKER="Pronouns: she/her",
        PG_SCREENSHOT=str(SCREENSHOT),
    )

    assert result["ok"], result.get("error") or result
    assert result["echoBanner"] and result["personas"] == ["Tomori", "Pip"]
    assert result["minimalIdentity"].endswith("privacy MINIMAL") and result["fullIdentity"].endswith("privacy FULL")
    assert result["streamed"]  # the reply streamed in before the final message replaced it
    assert result["firstReply"].startswith("[echo] Tomori:") and "studying for my exam" in result["firstReply"]
    first = result["firstPrompt"]
    assert first["hasProfileMarker"] and first["hasFirstMessage"] and "Minnie" in first["profileBlock"]
    assert result["fullSkip"] == "privacy_full" and "FULL" in result["fullNote"] and "FULL" in result["privacyNote"]
    assert result["fullNoteAfterReload"] == result["fullNote"]  # kept with the message, not only in the page
    second = result["secondPrompt"]
    assert second["recordId"] != first["recordId"] and second["hasQuestion"]
    assert not second["hasSecret"] and second["fullUserExcluded"]
    assert result["secretShownInConversation"]  # the page shows what Rei wrote; only the prompt leaves it out
    # The echo provider reports no token counts: estimated, priced at the demo's example prices.
    assert re.fullmatch(r"\d+ in \+ \d+ out tokens, estimated \(characters ÷ 4\) · cost 0\.\d+", result["recordTokens"])
    assert re.fullmatch(r"2 turns\n[\d,]+ tokens\ncost 0\.\d+", result["serverUsageDay"]), result["serverUsageDay"]
    assert result["pageErrors"] == [] and result["failedResponses"] == []
    for picture in (SCREENSHOT, ARTIFACTS / "inspector-record-cost.png", ARTIFACTS / "server-list-usage.png"):
        assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
