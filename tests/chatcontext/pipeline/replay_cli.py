"""Running ``manage.py replay_turn`` on a snapshot file, as an operator does."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

from django.core.management import call_command


def run(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("replay_turn", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def write(tmp_path: Path, doc: Any, name: str = "turn.json") -> str:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return str(path)
