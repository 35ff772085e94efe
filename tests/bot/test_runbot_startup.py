"""``manage.py runbot`` that cannot start says why in one line and exits 2 (issue 27 item 4):
a refused token, privileged intents the application has not enabled, Discord out of reach."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.bot.fake_discord import BAD_TOKEN, TOKEN, FakeDiscord, runbot_command
from tests.paths import REPO_ROOT
from tests.serve_process import MANAGE, free_port, fresh_env

pytestmark = pytest.mark.slow


@pytest.fixture
async def discord_api():
    server = FakeDiscord()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
def var_dir(migrated_var_dir: Path) -> Path:
    """A migrated SQLite database: the bot's reminder ticks read it from the start."""
    return migrated_var_dir


async def runbot(api_base: str, var_dir: Path, token: str) -> tuple[int, list[str]]:
    # INFO lines (discord.py's "logging in") are not what this is about: warnings and errors are.
    env = fresh_env(var_dir, DISCORD_TOKEN=token, LOG_LEVEL="WARNING")
    proc = await asyncio.create_subprocess_exec(
        *runbot_command(api_base, "--no-sync"),
        cwd=REPO_ROOT,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        _, stderr = await asyncio.wait_for(proc.communicate(), timeout=120)
    except TimeoutError:
        proc.kill()  # a bot that never gives up (the failure this file is about) is not left running
        await proc.wait()
        raise
    assert proc.returncode is not None
    return proc.returncode, stderr.decode().splitlines()


async def test_a_refused_token_is_one_line_and_the_admin_status_says_it(discord_api, var_dir):
    code, stderr = await runbot(discord_api.api_base, var_dir, BAD_TOKEN)

    line = (
        "Discord refused DISCORD_TOKEN: copy the bot's token again "
        "(Bot, Reset Token in https://discord.com/developers/applications)"
    )
    assert code == 2
    assert stderr == [f"CommandError: {line}"]
    with contextlib.closing(sqlite3.connect(var_dir / "db.sqlite3")) as db:
        assert db.execute("SELECT process, state, last_error FROM bot_status").fetchall() == [
            ("all shards", "failed", line)
        ]


async def test_privileged_intents_not_enabled_is_one_line(discord_api, var_dir):
    code, stderr = await runbot(discord_api.api_base, var_dir, TOKEN)

    assert code == 2
    assert stderr == [
        "CommandError: Discord refused the privileged intents: enable Message Content Intent and "
        "Server Members Intent under Bot in https://discord.com/developers/applications"
    ]
    # The bot really asked for them: message content (1 << 15) and members (1 << 1).
    [identify] = discord_api.identified
    assert identify["intents"] & (1 << 15) and identify["intents"] & (1 << 1)


async def test_discord_out_of_reach_is_one_line(var_dir):
    closed = f"http://127.0.0.1:{free_port()}/api/v10"

    code, stderr = await runbot(closed, var_dir, TOKEN)

    assert code == 2
    [line] = stderr
    assert line.startswith("CommandError: Cannot reach Discord (Cannot connect to host 127.0.0.1:")
    assert line.endswith("): check this machine's network, DNS and proxy")
    assert TOKEN not in line


async def test_a_gateway_out_of_reach_is_one_line(var_dir):
    discord_api = FakeDiscord(gateway_url=f"ws://127.0.0.1:{free_port()}/gateway")
    await discord_api.start()
    try:
        code, stderr = await runbot(discord_api.api_base, var_dir, TOKEN)
    finally:
        await discord_api.stop()

    assert code == 2
    [line] = stderr
    assert line.startswith("CommandError: Cannot reach Discord's gateway (Cannot connect to host 127.0.0.1:")
    assert line.endswith("): websockets to it must be allowed from this machine")


async def test_a_connected_bot_says_so_in_its_status_row(var_dir):
    discord_api = FakeDiscord(intents_enabled=True)
    await discord_api.start()
    env = fresh_env(var_dir, DISCORD_TOKEN=TOKEN, LOG_LEVEL="WARNING")
    proc = await asyncio.create_subprocess_exec(
        *runbot_command(discord_api.api_base, "--no-sync"), cwd=REPO_ROOT, env=env, stderr=asyncio.subprocess.PIPE
    )
    try:
        row = await asyncio.wait_for(connected_row(var_dir), timeout=60)
    finally:
        proc.terminate()
        await proc.wait()
        await discord_api.stop()

    process, shards, last_error = row
    assert process == "all shards" and last_error == ""
    assert json.loads(shards)["0"]["connected"] is True


async def connected_row(var_dir: Path) -> tuple[str, str, str]:
    while True:
        with contextlib.closing(sqlite3.connect(var_dir / "db.sqlite3")) as db:
            row = db.execute("SELECT process, shards, last_error FROM bot_status WHERE state = 'connected'").fetchone()
        if row is not None:
            return row
        await asyncio.sleep(0.2)


def test_a_health_port_already_taken_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [*MANAGE, "runbot", "--offline", "--health-port", str(port)],
            cwd=REPO_ROOT,
            env=fresh_env(tmp_path),
            capture_output=True,
            timeout=120,
        )
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        f"CommandError: --health-port {port}: cannot listen on 127.0.0.1:{port} (Address already in use)."
    ]
