"""``manage.py serve`` answers the admin, the API docs and the health check from a fresh SQLite database."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_SECONDS = 90


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


@pytest.mark.slow
def test_serve_answers_admin_docs_health_and_static(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "DISCORD_TOKEN", "DJANGO_SETTINGS_MODULE", "SECRET_KEY", "DEBUG"}
    }
    env["TOMORI_VAR_DIR"] = str(tmp_path)
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True, timeout=300)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [*manage, "serve", "--port", str(port)], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            deadline = time.monotonic() + START_TIMEOUT_SECONDS
            while True:
                assert proc.poll() is None, log_path.read_text()
                try:
                    if _get(f"{base}/api/v1/health") == 200:
                        break
                except OSError:
                    pass
                assert time.monotonic() < deadline, "serve did not answer:\n" + log_path.read_text()
                time.sleep(0.3)
            assert _get(f"{base}/admin/login/") == 200
            assert _get(f"{base}/api/docs") == 200
            assert _get(f"{base}/static/admin/css/base.css") == 200
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    output = log_path.read_text()
    assert "DISCORD_TOKEN is not set" in output
    assert "REDIS_URL is not set" in output
