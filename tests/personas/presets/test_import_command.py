"""``manage.py import_preset FILE --server ID --persona NAME`` (issue 31 item 4): one line on
success; a malformed file, an unknown server or persona exits 2 with one line and writes nothing."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from personas.management.commands.load_demo import DEMO_SERVER_DISC_ID
from personas.models import PersonaPreset, PersonaSampling
from tests.bot.playground.conftest import Demo
from tests.personas.presets.preset_files import DEFAULT, real_preset


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("import_preset", *args, stdout=out, stderr=err)
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def write(tmp_path: Path, doc: Any, name: str = "preset.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return str(path)


def test_the_real_default_preset_is_imported_for_a_persona_in_one_line(demo: Demo) -> None:
    status, out, err = run(str(DEFAULT), "--server", DEMO_SERVER_DISC_ID, "--persona", "pip")

    assert (status, err) == (0, "")
    assert out.count("\n") == 1
    assert out.startswith("Imported preset 'sillytavern-default.json' for Pip in Night Owls")
    preset = PersonaPreset.objects.get(persona=demo.pip)
    assert preset.nodes[0]["content"].startswith("Write {{char}}'s next reply")
    assert preset.source["openai_max_context"] == 4095  # kept, unused
    sampling = PersonaSampling.objects.get(persona=demo.pip)
    assert (sampling.temperature, sampling.top_p, sampling.max_reply_tokens, sampling.seed) == (1, 1, 300, None)
    assert not PersonaPreset.objects.filter(persona=demo.tomori).exists()


def test_a_second_import_replaces_the_first_and_keeps_what_it_does_not_set(demo: Demo, tmp_path: Path) -> None:
    PersonaSampling.objects.create(persona=demo.tomori, stop=["\nMina:"], temperature=0.2)
    run(str(DEFAULT), "--server", DEMO_SERVER_DISC_ID, "--persona", "Tomori")

    status, _, _ = run(write(tmp_path, {"temperature": 0.6}), "--server", DEMO_SERVER_DISC_ID, "--persona", "Tomori")

    assert status == 0
    sampling = PersonaSampling.objects.get(persona=demo.tomori)
    assert (sampling.temperature, sampling.max_reply_tokens, sampling.stop) == (0.6, 300, ["\nMina:"])
    assert PersonaPreset.objects.get(persona=demo.tomori).nodes == [
        {"identifier": "main", "marker": True, "content": "", "role": "system", "enabled": True}
    ]


def bad_temperature() -> dict[str, Any]:
    return real_preset() | {"temperature": 9}


@pytest.mark.parametrize(
    ("content", "persona", "server", "expected"),
    [
        ("{not json", "Tomori", DEMO_SERVER_DISC_ID, "preset.json: not a JSON file (JSONDecodeError)"),
        (bad_temperature(), "Tomori", DEMO_SERVER_DISC_ID, "preset.json: temperature: 9 is outside 0 to 2"),
        ({"name": "a card", "description": "x"}, "Tomori", DEMO_SERVER_DISC_ID, "not a SillyTavern chat-completion"),
        (real_preset(), "Nobody", DEMO_SERVER_DISC_ID, "Night Owls Demo has no persona named 'Nobody'."),
        (real_preset(), "Tomori", "999999999999999999", "No server has the Discord id, id or name"),
    ],
)
def test_a_refused_import_exits_2_with_one_line_and_writes_nothing(
    demo: Demo, tmp_path: Path, content: Any, persona: str, server: str, expected: str
) -> None:
    status, out, err = run(write(tmp_path, content), "--server", server, "--persona", persona)

    assert (status, out) == (2, "")
    assert expected in err and err.count("\n") == 1
    assert not PersonaPreset.objects.exists() and not PersonaSampling.objects.exists()


def test_a_missing_file_exits_2(demo: Demo, tmp_path: Path) -> None:
    status, _, err = run(str(tmp_path / "gone.json"), "--server", DEMO_SERVER_DISC_ID, "--persona", "Tomori")

    assert status == 2 and "gone.json: cannot read (No such file or directory)" in err


def test_a_huge_file_is_refused_without_reading_it_whole(demo: Demo, tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:
        handle.truncate(30 * 1024 * 1024)  # 30 MB of NULs, sparse on disk

    status, _, err = run(str(path), "--server", DEMO_SERVER_DISC_ID, "--persona", "Tomori")

    assert status == 2 and err == f"{path}: the file is larger than 2 MiB\n"
    assert not PersonaPreset.objects.exists()
