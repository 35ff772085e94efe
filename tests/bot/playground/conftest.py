"""The playground tests run on the demo server of ``manage.py load_demo`` (what ``make run`` shows):
Tomori (main) and Pip (alter); Mina MINIMAL, Jun PARTIAL, Rei FULL, Okabe blacklisted, Sora blocked
by Pip; the bot account is a member."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.core.management import call_command

from bot.playground import store
from bot.playground.models import PlaygroundChannel
from personas.management.commands.load_demo import DEMO_BOT_DISC_ID, DEMO_SERVER_DISC_ID, DEMO_USERS
from personas.models import Persona, Server
from tests.bot.fake_llm import FakeLLMServer
from tests.bot.playground.chromium import server_env
from tests.botplatform.celery.conftest import speech_files, transcriber  # noqa: F401
from tests.serve_process import copy_database, manage

MINA, JUN, REI, OKABE, SORA = (DEMO_USERS[name] for name in ("mina", "jun", "rei", "okabe", "sora"))
BOT = DEMO_BOT_DISC_ID
NOW_MS = 1_893_456_000_000  # 2030-01-01


@dataclass
class Demo:
    server: Server
    channel: PlaygroundChannel
    tomori: Persona
    pip: Persona

    def mention(self) -> str:
        return f"<@{BOT}>"


@pytest.fixture
def offline_llm(settings: Any) -> Any:
    """No provider anywhere: the offline echo provider answers."""
    settings.LLM_PROVIDER = settings.LLM_BASE_URL = settings.LLM_API_KEY = settings.LLM_MODEL = ""
    return settings


@pytest.fixture
def uploads_dir(settings: Any, tmp_path: Path) -> Path:
    settings.VAR_DIR = tmp_path
    return tmp_path / store.UPLOAD_DIR_NAME


def make_demo() -> Demo:
    cache.clear()  # persona assets are cached by server id, which a new test database reuses
    call_command("load_demo", stdout=open("/dev/null", "w"))  # noqa: SIM115
    server = Server.objects.get(server_disc_id=DEMO_SERVER_DISC_ID)
    channel = store.create_channel(server, "lounge", topic="Late-night chat", now_ms=NOW_MS)
    return Demo(
        server=server,
        channel=channel,
        tomori=Persona.objects.get(server=server, persona_nickname="Tomori"),
        pip=Persona.objects.get(server=server, persona_nickname="Pip"),
    )


@pytest.fixture
def demo(db: None, offline_llm: Any, uploads_dir: Path) -> Demo:
    return make_demo()


# The speech fixtures of the background tests: espeak-ng speech files and the one Whisper model.
@pytest.fixture
async def llm_server() -> AsyncIterator[FakeLLMServer]:
    server = FakeLLMServer()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
def tdemo(transactional_db: None, offline_llm: Any, uploads_dir: Any) -> Demo:
    return make_demo()


@pytest.fixture(scope="session")
def demo_template(migrated_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The database ``make run`` serves on a first start (migrate, load_demo, ensure_admin with the
    browser walks' superuser), made once per test process."""
    path = copy_database(migrated_template, tmp_path_factory.mktemp("demo"))
    env = server_env(path)
    manage(env, "load_demo")
    manage(env, "ensure_admin")
    return path


@pytest.fixture
def demo_var_dir(demo_template: Path, tmp_path: Path) -> Path:
    """This test's ``TOMORI_VAR_DIR`` for a served demo: its own copy of ``demo_template``."""
    return copy_database(demo_template, tmp_path)
