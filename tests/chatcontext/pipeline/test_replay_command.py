"""`replay_turn` (turn-snapshot.md §2–§3): exit status 2 with one path-naming line for bad input,
no traceback, nothing persisted (except the --record prompt record), byte-identical output, and a
live database whose rows share the snapshot's ids is neither read nor changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.core.management import call_command

from chatcontext.models import PromptRecord
from chatcontext.snapshot.minimise import minimise_snapshot
from personas import models as m
from tests.chatcontext.pipeline.conftest import EXAMPLE, example_doc
from tests.chatcontext.pipeline.replay_cli import run, write
from tests.markers import BOTH
from tests.paths import EXAMPLE_EXPECTED as GOLDEN
from tests.paths import REPO_ROOT as ROOT

DOC = example_doc()
SERVER, CHANNEL = DOC["server"]["disc_id"], DOC["channel"]["id"]
PRIYA = next(u["disc_id"] for u in DOC["users"] if u["username"] == "priya.k")
STAGE_TUNABLES = (
    "REACTION_CONTEXT_ENABLED",
    "REACTION_CONTEXT_MAX_API_CALLS_PER_TURN",
    "REACTION_CONTEXT_MAX_REACTIONS_PER_MESSAGE",
    "REACTION_CONTEXT_MAX_USERS_PER_REACTION",
    "FORWARD_CHAIN_MAX_DEPTH",
    "VOICE_TRANSCRIPT_CACHE_TTL_MINUTES",
    "EMOJI_PENALTY_ENABLED",
    "EMOJI_PENALTY_LOOKBACK",
    "EMOJI_PENALTY_THRESHOLD",
    "MEDIA_IMAGE_MESSAGE_LIMIT",
    "EMOJI_STICKER_CACHE_TTL_MINUTES",
    "DEFAULT_BOTNAME",
)


@pytest.fixture(autouse=True)
def _default_tunables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in STAGE_TUNABLES:
        monkeypatch.delenv(name, raising=False)


def row_counts() -> dict[str, int]:
    return {model._meta.label: model.objects.count() for model in apps.get_models() if model._meta.managed}


@BOTH
def test_replay_prints_the_golden_output_of_the_example() -> None:
    code, out, err = run(str(EXAMPLE))
    assert (code, err) == (0, "")
    assert out.encode("utf-8") == GOLDEN.read_bytes()


@pytest.mark.parametrize(
    ("mutate", "line"),
    [
        (lambda d: d["messages"][3]["author"].pop("id"), "messages[3].author.id: required"),
        (lambda d: d["turn"].update(persona_key="nobody"), 'turn.persona_key: unknown persona key "nobody"'),
        (
            lambda d: d["turn"].update(trigger_message_id="1"),
            'turn.trigger_message_id: no message with id "1" in messages',
        ),
        (lambda d: d["server"].update(region="eu"), "server.region: unknown key"),
        (
            lambda d: d["turn"].update(
                budget={"window": 512, "reply_tokens": 512, "scale": 1.0, "margin_percent": 10, "reserved": 0}
            ),
            "turn.budget: a context budget needs a window larger than its reply budget",
        ),
    ],
)
@BOTH
def test_bad_snapshots_exit_2_with_one_line_naming_the_path(tmp_path: Path, mutate: Any, line: str) -> None:
    doc = example_doc()
    mutate(doc)
    assert run(write(tmp_path, doc)) == (2, "", line + "\n")


@BOTH
def test_malformed_json_and_missing_files_exit_2(tmp_path: Path) -> None:
    assert run(write(tmp_path, '{"format": "tomori-turn-snapshot/1",}')) == (
        2,
        "",
        "$: malformed JSON at line 1, column 37: Expecting property name enclosed in double quotes\n",
    )
    code, out, err = run(str(tmp_path / "absent.json"))
    assert (code, out) == (2, "") and err.endswith("absent.json: cannot read (No such file or directory)\n")


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _example_text(now_ms: str) -> str:
    doc = example_doc()
    doc["now_ms"] = 0
    return json.dumps(doc).replace('"now_ms": 0', f'"now_ms": {now_ms}', 1)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # json.loads and the schema validator recurse per level: a traceback before the bound.
        (_deep(100_000), "$: nested deeper than 64 levels at line 1, column 65"),
        ('{"format":\n' + _deep(100_000) + "}", "$: nested deeper than 64 levels at line 2, column 64"),
        # Python refuses to convert an integer of more than 4,300 digits (a ValueError).
        (_example_text("9" * 5000), "now_ms: expected integer"),
        (_example_text("9" * 21), "now_ms: must be at most 253370764800000"),
    ],
)
@BOTH
def test_deep_nesting_and_huge_numbers_exit_2_with_one_line(tmp_path: Path, text: str, line: str) -> None:
    assert run(write(tmp_path, text)) == (2, "", line + "\n")


@BOTH
def test_brackets_inside_strings_are_not_nesting(tmp_path: Path) -> None:
    doc = example_doc()
    doc["messages"][3]["content"] = "[{" * 50_000
    code, _, err = run(write(tmp_path, doc))
    assert (code, err) == (0, "")


def _set(path: list[str | int], value: Any) -> Any:
    def mutate(doc: dict[str, Any]) -> None:
        node: Any = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return mutate


LAST_MS = "must be at most 253370764800000"
DISCORD_ID = "must be a string of 1 to 20 ASCII digits (a Discord id)"


@pytest.mark.parametrize(
    ("mutate", "line"),
    [
        # A datetime overflow (exit 1) before the schema bounded times to 1970..9999.
        (_set(["now_ms"], 10**30), f"now_ms: {LAST_MS}"),
        (_set(["now_ms"], -1), "now_ms: must be at least 0"),
        (_set(["messages", 2, "created_timestamp"], 10**16), f"messages[2].created_timestamp: {LAST_MS}"),
        # An integer beyond SQLite's 64 bits (exit 1) before every integer of the schema was bounded.
        (_set(["personas", 0, "persona_lineage_id"], 2**63), "personas[0].persona_lineage_id: must be at most 2**63-1"),
        # A lone surrogate cannot be printed or stored (UnicodeEncodeError, exit 1).
        (
            _set(["messages", 3, "content"], "hi \ud800"),
            "messages[3].content: unpaired surrogate U+D800 (not Unicode text)",
        ),
        (_set(["server", "name"], "\udfff"), "server.name: unpaired surrogate U+DFFF (not Unicode text)"),
        (_set(["server", "\ud83d"], "x"), "server: in a key: unpaired surrogate U+D83D (not Unicode text)"),
        # PostgreSQL stores no NUL in text or JSON (a DataError on --record).
        (_set(["channel", "name"], "a\x00b"), "channel.name: NUL character U+0000 (no database stores it in text)"),
        # Ids are ASCII digits: Python's isdigit (and int) accept any Unicode digit.
        (_set(["messages", 3, "author", "id"], "\u0661\u0662"), f"messages[3].author.id: {DISCORD_ID}"),
        (_set(["messages", 3, "author", "id"], "1" * 21), f"messages[3].author.id: {DISCORD_ID}"),
        (_set(["messages", 3, "author", "id"], "12\n"), f"messages[3].author.id: {DISCORD_ID}"),
    ],
)
@BOTH
def test_out_of_range_and_unstorable_values_exit_2_naming_the_path(tmp_path: Path, mutate: Any, line: str) -> None:
    doc = example_doc()
    mutate(doc)
    assert run(write(tmp_path, doc)) == (2, "", line.replace("2**63-1", str(2**63 - 1)) + "\n")


@BOTH
def test_a_surrogate_pair_is_text_and_replays(tmp_path: Path) -> None:
    """Only an unpaired surrogate is refused: an escaped pair is one character (here U+1F989)."""
    doc = example_doc()
    doc["messages"][3]["content"] = "an owl \U0001f989"
    assert "\\ud83e\\udd89" in json.dumps(doc)
    code, out, err = run(write(tmp_path, doc))
    assert (code, err) == (0, "") and "an owl \U0001f989" in out


def _subprocess(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in STAGE_TUNABLES and k != "DATABASE_URL"}
    env["TOMORI_VAR_DIR"] = str(tmp_path / "var")
    return subprocess.run(
        [sys.executable, "manage.py", "replay_turn", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
        timeout=120,
    )


def test_separate_processes_give_byte_identical_output_and_never_a_traceback(tmp_path: Path) -> None:
    """Two processes (different hash seeds) print the same bytes; bad input is one stderr line."""
    first = _subprocess([str(EXAMPLE)], tmp_path)
    second = _subprocess([str(EXAMPLE)], tmp_path)
    assert first.returncode == second.returncode == 0, first.stderr
    assert first.stdout == second.stdout == GOLDEN.read_text(encoding="utf-8")
    doc = example_doc()
    del doc["messages"][3]["author"]["id"]
    bad = _subprocess([write(tmp_path, doc)], tmp_path)
    assert (bad.returncode, bad.stdout, bad.stderr) == (2, "", "messages[3].author.id: required\n")
    assert "Traceback" not in bad.stderr
    deep = _subprocess([write(tmp_path, _deep(100_000), "deep.json")], tmp_path)
    too_deep = "$: nested deeper than 64 levels at line 1, column 65\n"
    assert (deep.returncode, deep.stdout, deep.stderr) == (2, "", too_deep)


@BOTH
def test_text_format_is_one_block_per_item_with_role_and_tag() -> None:
    code, out, _ = run(str(EXAMPLE), "--format", "text")
    output = json.loads(GOLDEN.read_text(encoding="utf-8"))
    headers = [line for line in out.split("\n") if line.startswith("--- ")]
    assert code == 0 and len(headers) == len(output["context_items"])
    assert headers[0] == "--- 1 · system · system_instruction_block ---"
    assert f"--- 6 · user · dialogue_history · message {DOC['messages'][0]['id']} ---" in headers
    assert "Pree: afternoon everyone, the resin printer finally arrived" in out


@BOTH
def test_replay_persists_nothing() -> None:
    before = row_counts()
    assert run(str(EXAMPLE))[0] == 0
    assert row_counts() == before


def live_rows_sharing_the_snapshot_ids() -> None:
    """The live database may hold a server, users and a reminder with the very ids of the snapshot."""
    server = m.Server.objects.create(server_disc_id=SERVER, name="Live Tidepool")
    m.Persona.objects.create(server=server, persona_nickname="Tomori", persona_lineage_id=10040)
    priya = m.DiscordUser.objects.create(user_disc_id=PRIYA, username="priya.k", user_nickname="LIVE-NICK")
    m.PersonalMemory.objects.create(user=priya, persona_lineage_id=10040, content="LIVE memory of Priya")
    m.Reminder.objects.create(
        reminder_id=118,
        server=server,
        channel_disc_id=CHANNEL,
        user_discord_id=PRIYA,
        reminder_purpose="LIVE reminder",
        reminder_time=datetime(2030, 1, 1, tzinfo=UTC),
    )


@BOTH
def test_a_live_database_with_the_same_ids_neither_shapes_nor_sees_the_replay() -> None:
    live_rows_sharing_the_snapshot_ids()
    before = row_counts()
    code, out, err = run(str(EXAMPLE))
    assert (code, err) == (0, "")
    assert out.encode("utf-8") == GOLDEN.read_bytes()
    assert "LIVE" not in out
    assert row_counts() == before
    assert m.Server.objects.get(server_disc_id=SERVER).name == "Live Tidepool"
    assert m.Reminder.objects.get(reminder_id=118).reminder_purpose == "LIVE reminder"


@BOTH
def test_record_stores_only_the_prompt_record() -> None:
    live_rows_sharing_the_snapshot_ids()
    before = row_counts()
    code, out, err = run(str(EXAMPLE), "--record")
    assert code == 0 and out.encode("utf-8") == GOLDEN.read_bytes()
    after = row_counts()
    assert after.pop("chatcontext.PromptRecord") == before.pop("chatcontext.PromptRecord") + 1
    assert after == before
    record = PromptRecord.objects.get()
    assert err == f"stored prompt record {record.pk}\n"
    assert record.source == PromptRecord.Source.REPLAY
    assert record.server.server_disc_id == SERVER and record.persona is not None
    assert (
        record.persona.persona_nickname == "Tomori"
        and record.trigger_message_disc_id == DOC["turn"]["trigger_message_id"]
    )
    assert record.snapshot == minimise_snapshot(example_doc())
    # What the turn never showed is not stored: Wren's (FULL) words and memory, Sprocket's lineage,
    # Tobias's (blacklisted) memory; the stored snapshot replays to the same output.
    stored = json.dumps(record.snapshot)
    for withheld in ("4471", "night shifts at the bakery", "to wave hello", "Saturday market"):
        assert withheld not in stored
    assert "fume extractor" in stored and "prefers metric screws" in stored
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert [{k: v for k, v in i.items() if k != "token_estimate"} for i in record.context_items] == golden[
        "context_items"
    ]
    assert all(i["token_estimate"] == -(-len(i["text"]) // 4) for i in record.context_items)
    assert record.token_estimate == sum(i["token_estimate"] for i in record.context_items)
    humans = {u["disc_id"] for u in DOC["users"]} - {DOC["bot_user"]["id"]}
    assert humans <= set(record.subject_user_ids) and DOC["bot_user"]["id"] not in record.subject_user_ids
    wren = DOC["messages"][1]
    assert {"message_id": wren["id"], "author_id": wren["author"]["id"], "reason": "privacy_full"} in record.exclusions


@BOTH
def test_record_needs_a_registered_server() -> None:
    assert run(str(EXAMPLE), "--record") == (
        2,
        "",
        "server.disc_id: no server with this id in the database; --record stores against a registered server\n",
    )
    assert not PromptRecord.objects.exists()


def test_help_explains_the_output_and_the_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        call_command("replay_turn", "--help")
    text = capsys.readouterr().out
    for phrase in ("SNAPSHOT.json", "--format", "--record", "exit status", "messages[3].author.id: required"):
        assert phrase in text
