"""The real presets of ``files/`` (their sources and licences: files/README.md), shared by the preset tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FILES = Path(__file__).parent / "files"
DEFAULT = FILES / "sillytavern-default.json"


def real_preset() -> dict[str, Any]:
    """SillyTavern's default chat-completion preset, as a fresh dict a test may change."""
    doc: dict[str, Any] = json.loads(DEFAULT.read_bytes())
    return doc
