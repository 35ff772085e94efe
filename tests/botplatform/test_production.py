"""The production path (docs/deploy.md): the processes the containers run (``bin/tomori``, as
compose.yaml calls it) start healthy with ``.env.example``'s settings against this run's database and,
when ``REDIS_URL`` is set (CI), Redis; ``check --deploy`` is clean with those settings; a wrong
variable or a database that does not answer is one line and exit 2."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from botplatform.settings import REDIS_URL
from tests.botplatform.documented import documented_variables
from tests.chatcontext.records.live.conftest import shared_database_url  # noqa: F401
from tests.paths import REPO_ROOT
from tests.serve_process import HOST_ONLY_VARIABLES, START_TIMEOUT_SECONDS, free_port, http_get, stop
from tests.services import LoopbackProxy, require_redis

ENTRY = str(REPO_ROOT / "bin" / "tomori")
ENV_EXAMPLE = REPO_ROOT / ".env.example"
# Read by the compose file's postgres service, not by the project.
COMPOSE_ONLY = {"POSTGRES_PASSWORD"}


def env_example() -> dict[str, str]:
    values = {}
    for line in ENV_EXAMPLE.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, value = line.partition("=")
            values[name.strip()] = value.strip()
    return values


def production_env(tmp_path: Path, **overrides: str) -> dict[str, str]:
    """``.env.example`` with a real secret key and this test's folders, on top of this process's
    environment without what would point at the developer's database, broker or bot."""
    base = {k: v for k, v in os.environ.items() if k not in HOST_ONLY_VARIABLES}
    metrics = tmp_path / "metrics"
    metrics.mkdir(exist_ok=True)
    return {
        **base,
        **env_example(),
        "SECRET_KEY": secrets.token_urlsafe(50),
        "TOMORI_VAR_DIR": str(tmp_path / "var"),
        "STATIC_ROOT": str(tmp_path / "static"),
        "PROMETHEUS_MULTIPROC_DIR": str(metrics),
        "PYTHON": sys.executable,
        **overrides,
    }


def run(env: dict[str, str], *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)


def outcome(env: dict[str, str], role: str) -> tuple[int, str, str]:
    result = run(env, ENTRY, role)
    return result.returncode, result.stdout, result.stderr


def test_env_example_names_every_variable_the_project_reads_and_no_other() -> None:
    """Set, or at their default and commented out (``# NAME=value``)."""
    text = ENV_EXAMPLE.read_text(encoding="utf-8")
    listed = set(re.findall(r"^(?:# )?([A-Z][A-Z0-9_]+)=", text, re.MULTILINE))
    assert sorted(listed - documented_variables() - COMPOSE_ONLY) == []
    assert sorted(documented_variables() - listed) == []


def test_the_containers_run_the_roles_this_file_starts() -> None:
    """compose.yaml's app services are ``bin/tomori`` roles (the image's entry point), each with the
    arguments test_the_containers_processes_start_healthy gives it, and health checks of that role."""
    compose = yaml.safe_load((REPO_ROOT / "compose.yaml").read_text(encoding="utf-8"))
    dockerfile = (REPO_ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert 'ENTRYPOINT ["bin/tomori"]' in dockerfile and "\nUSER tomori\n" in dockerfile
    apps = {name: s for name, s in compose["services"].items() if s.get("image") == "tomori-platform:latest"}
    assert {name: s["command"] for name, s in apps.items()} == {
        "migrate": ["migrate"],
        "web": ["web"],
        "bot": ["bot", "--offline"],
        "worker": ["worker"],
        "beat": ["beat"],
    }
    for name, service in apps.items():
        if name != "migrate":
            assert service["healthcheck"]["test"] == ["CMD", "bin/tomori", "health", name]
            assert service["env_file"] == ".env"


@pytest.mark.slow
def test_check_deploy_is_clean_with_env_example_and_a_real_secret_key(tmp_path: Path) -> None:
    result = run(production_env(tmp_path), sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stderr + result.stdout
    assert "System check identified no issues" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("overrides", "line"),
    [
        ({"SECRET_KEY": ""}, "Configuration error: SECRET_KEY must be set when DEBUG is off."),
        (
            {"SESSION_COOKIE_SECURE": "yes please"},
            "Configuration error: SESSION_COOKIE_SECURE='yes please' is not one of 1/0, true/false, yes/no, on/off",
        ),
        (
            {"SECURE_HSTS_SECONDS": "1y"},
            "Configuration error: SECURE_HSTS_SECONDS='1y' is not a whole number",
        ),
    ],
    ids=["no-secret-key", "cookie-typo", "hsts-typo"],
)
def test_a_wrong_variable_is_one_line_and_exit_2(tmp_path: Path, overrides: dict[str, str], line: str) -> None:
    result = run(production_env(tmp_path, **overrides), ENTRY, "migrate")
    assert (result.returncode, result.stderr) == (2, line + "\n")


@pytest.mark.parametrize("command", [(), ("serve",), ("health",), ("health", "caddy")])
def test_a_wrong_role_is_the_usage_line_and_exit_2(tmp_path: Path, command: tuple[str, ...]) -> None:
    result = run(production_env(tmp_path), ENTRY, *command)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "usage: bin/tomori migrate|web|bot|worker|beat|health ROLE [arguments]\n"


@pytest.mark.slow
def test_an_unreachable_database_or_redis_is_one_line_and_exit_2(tmp_path: Path, migrated_var_dir: Path) -> None:
    closed = free_port()
    env = production_env(tmp_path, DATABASE_URL=f"postgres://tomori@127.0.0.1:{closed}/tomori")
    result = run(env, ENTRY, "migrate")
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith("Database error: ") and "Connection refused" in line
    for role in ("worker", "beat"):
        assert outcome(env, role) == (2, "", "CommandError: not ready: database unreachable\n")
    env = production_env(
        tmp_path, DATABASE_URL=f"sqlite:///{migrated_var_dir / 'db.sqlite3'}", REDIS_URL=f"redis://127.0.0.1:{closed}/0"
    )
    assert run(env, ENTRY, "migrate").returncode == 0  # with no Redis (on an already migrated database)
    assert outcome(env, "worker") == (2, "", "CommandError: not ready: redis unreachable\n")


@contextmanager
def started(env: dict[str, str], log: Path, *command: str) -> Iterator[Callable[[], str]]:
    """A long-running role; yields a reader of its log. Stopped with SIGTERM like a container."""
    with log.open("wb") as out:
        proc = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield lambda: f"[{' '.join(command[1:])} exited {proc.poll()}]\n" + log.read_text(errors="replace")
            assert proc.poll() is None, log.read_text(errors="replace")
        finally:
            stop(proc)


def wait_for(condition: Callable[[], bool], describe: Callable[[], str]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, describe()
        time.sleep(0.5)


def answers(url: str, status: int = 200) -> bool:
    try:
        return http_get(url)[0] == status
    except OSError:
        return False


def healthy(env: dict[str, str], *role: str) -> bool:
    return run(env, ENTRY, "health", *role).returncode == 0


@pytest.mark.slow
def test_the_containers_processes_start_healthy(
    tmp_path: Path,
    shared_database_url: str,  # noqa: F811
    make_reminder: Callable[..., object],
) -> None:
    """migrate, then web (DEBUG off, production settings), the bot offline, and with Redis the worker
    and beat: each answers its health check, beat's schedule reaches the worker through Redis, and
    the worker's metrics reach the web's /metrics through the shared multiprocess folder."""
    port, bot_port = free_port(), free_port()
    run_id = uuid.uuid4().hex[:12]
    queue, worker_name = f"prodtest-{run_id}", f"prodtest-{run_id}@localhost"
    env = production_env(
        tmp_path,
        DATABASE_URL=shared_database_url,
        REDIS_URL=require_redis(REDIS_URL) if REDIS_URL else "",
        PORT=str(port),
        BOT_HEALTH_PORT=str(bot_port),
        CHANNEL_LAYER_PREFIX=f"prodtest-{run_id}",
        CACHE_KEY_PREFIX=f"prodtest-{run_id}",
    )
    migrated = run(env, ENTRY, "migrate")
    assert migrated.returncode == 0, migrated.stderr
    assert (tmp_path / "static" / "admin" / "css" / "base.css").is_file()
    if REDIS_URL:
        # This run's schedule only, on a queue of its own: other runs may share this Redis.
        PeriodicTask.objects.update(enabled=False)
        every_second, _ = IntervalSchedule.objects.get_or_create(every=1, period=IntervalSchedule.SECONDS)
        PeriodicTask.objects.create(
            name=f"fire reminders {run_id}",
            task="personas.tasks.fire_due_reminders",
            interval=every_second,
            queue=queue,
        )
        make_reminder(reminder_time=timezone.now() - timedelta(seconds=5))

    base = f"http://127.0.0.1:{port}"
    with ExitStack() as stack:
        web = stack.enter_context(started(env, tmp_path / "web.log", ENTRY, "web"))
        bot = stack.enter_context(started(env, tmp_path / "bot.log", ENTRY, "bot", "--offline"))
        if REDIS_URL:
            worker = stack.enter_context(
                started(env, tmp_path / "worker.log", ENTRY, "worker", "-Q", queue, "-n", worker_name, "-c", "1")
            )
            beat = stack.enter_context(started(env, tmp_path / "beat.log", ENTRY, "beat"))

        wait_for(lambda: answers(f"{base}/readyz"), web)
        assert json.loads(http_get(f"{base}/healthz")[1]) == {"status": "ok"}
        wait_for(lambda: healthy(env, "web") and healthy(env, "bot"), bot)
        assert json.loads(http_get(f"http://127.0.0.1:{bot_port}/healthz")[1]) == {"status": "ok", "gateway": "offline"}
        # DEBUG is off: the admin is not served to a Host outside ALLOWED_HOSTS, and static files are the proxy's.
        assert not answers(f"{base}/admin/login/")
        assert "Language model: offline echo provider" in web()
        assert "the bot is offline" in bot()

        if REDIS_URL:
            wait_for(lambda: healthy(env, "worker", worker_name), worker)
            handed_over = r"fire_due_reminders\[[^]]+\] succeeded in [0-9.]+s: \{'dispatched': 1"
            wait_for(lambda: re.search(handed_over, worker()) is not None, beat)
            metrics = http_get(f"{base}/metrics")[1].decode()
            # Recorded by the worker's child process, read by the web's /metrics from the shared folder.
            assert re.search(r"^tomori_reminder_lag_seconds_count [1-9]", metrics, re.MULTILINE), metrics
            assert "tomori_queue_depth" in metrics


class DatabaseOutage:
    """A loopback TCP proxy in front of PostgreSQL that this test cuts and restores (a real outage
    for the process behind it: its connections are closed and new ones refused), or for SQLite the
    database's folder moved away and back."""

    def __init__(self, database_url: str, tmp_path: Path) -> None:
        parts = urlsplit(database_url)
        self.sqlite_dir: Path | None = None
        if parts.scheme == "sqlite":
            self.sqlite_dir = tmp_path / "db"
            self.sqlite_dir.mkdir()
            shutil.copy(parts.path, self.sqlite_dir / "db.sqlite3")
            self.url = f"sqlite:///{self.sqlite_dir / 'db.sqlite3'}"
            return
        self.proxy = LoopbackProxy(database_url, 5432)
        self.proxy.start()
        self.url = self.proxy.url

    def cut(self) -> None:
        if self.sqlite_dir is not None:
            self.sqlite_dir.rename(self.sqlite_dir.with_name("db-away"))
            return
        self.proxy.stop()

    def restore(self) -> None:
        if self.sqlite_dir is not None:
            self.sqlite_dir.with_name("db-away").rename(self.sqlite_dir)
            return
        self.proxy.start()

    def close(self) -> None:
        if self.sqlite_dir is None:
            self.proxy.stop()


@pytest.mark.slow
def test_readyz_follows_the_database_away_and_back(tmp_path: Path, shared_database_url: str) -> None:  # noqa: F811
    outage = DatabaseOutage(shared_database_url, tmp_path)
    port = free_port()
    env = production_env(tmp_path, DATABASE_URL=outage.url, DB_CONN_MAX_AGE="0", REDIS_URL="", PORT=str(port))
    readyz = f"http://127.0.0.1:{port}/readyz"
    try:
        with started(env, tmp_path / "web.log", ENTRY, "web") as web:
            wait_for(lambda: answers(readyz), web)
            outage.cut()
            status, body = http_get(readyz)
            assert status == 503
            assert json.loads(body)["detail"] == "not ready: database unreachable"
            assert answers(f"http://127.0.0.1:{port}/healthz")  # alive all the same
            outage.restore()
            wait_for(lambda: answers(readyz), web)
    finally:
        outage.close()
