"""Running a browser walk in Debian's Chromium against a ``manage.py serve`` of the demo."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.paths import REPO_ROOT as ROOT
from tests.serve_process import fresh_env, manage, serving

ARTIFACTS = ROOT / "artifacts"


def run_in_chromium(var_dir: Path, script: str, *, setup: str = "", **script_env: str) -> tuple[dict[str, Any], str]:
    """Serve the demo database in ``var_dir`` (the ``demo_var_dir`` fixture: as `make run` first
    serves it), run one browser script against it, and return the script's JSON result and the
    server's log. ``setup``: Python run by ``manage.py shell -c`` first, for rows a scenario adds."""
    ensure_node_modules()
    env = server_env(var_dir)
    if setup:
        manage(env, "shell", "-c", setup)
    log_path = var_dir / "serve.log"
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


BROWSER_DIR = Path(__file__).resolve().parent / "browser"


CHROMIUM = Path("/usr/bin/chromium")


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
