"""Run ``manage.py serve`` in a subprocess for tests that need a real HTTP + websocket server."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.paths import REPO_ROOT

START_TIMEOUT_SECONDS = 90
MANAGE = [sys.executable, str(REPO_ROOT / "manage.py")]
# Variables that would point the server at the developer's database, broker or bot.
HOST_ONLY_VARIABLES = {"DATABASE_URL", "REDIS_URL", "DISCORD_TOKEN", "DJANGO_SETTINGS_MODULE", "SECRET_KEY", "DEBUG"}


def fresh_env(var_dir: Path, **extra: str) -> dict[str, str]:
    """This process's environment on a fresh SQLite database in `var_dir`, no Redis, no bot."""
    env = {k: v for k, v in os.environ.items() if k not in HOST_ONLY_VARIABLES}
    return {**env, "TOMORI_VAR_DIR": str(var_dir), **extra}


def copy_database(template_dir: Path, var_dir: Path) -> Path:
    """Copy the SQLite database (``db.sqlite3``, botplatform.settings) a session fixture built once into
    ``var_dir``, and return ``var_dir``: each test gets its own database with the same rows without
    running ``migrate`` again (7–8 s a process on this machine)."""
    for path in template_dir.glob("db.sqlite3*"):
        shutil.copy2(path, var_dir / path.name)
    return var_dir


def manage(env: dict[str, str], *command: str) -> None:
    subprocess.run([*MANAGE, *command], cwd=REPO_ROOT, env=env, check=True, timeout=300, capture_output=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http_get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status), response.read()
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read()


def http_status(url: str) -> int:
    return http_get(url)[0]


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, as a container stop or Ctrl-C; SIGKILL only if it does not end in 30 s."""
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def serving(env: dict[str, str], log_path: Path, *args: str) -> Iterator[str]:
    """`manage.py serve` on a free port until it answers the health check; yields its base URL."""
    with serve_process(env, log_path, *args) as (base, _):
        yield base


@contextmanager
def serve_process(env: dict[str, str], log_path: Path, *args: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``serving``, also yielding the process (a test that kills it)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [*MANAGE, "serve", "--port", str(port), *args], cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            deadline = time.monotonic() + START_TIMEOUT_SECONDS
            while True:
                assert proc.poll() is None, log_path.read_text()
                try:
                    if http_status(f"{base}/api/v1/health") == 200:
                        break
                except OSError:
                    pass
                assert time.monotonic() < deadline, "serve did not answer:\n" + log_path.read_text()
                time.sleep(0.3)
            yield base, proc
        finally:
            stop(proc)
