"""The settings the README's Configuration table documents."""

from __future__ import annotations

import re

from tests.paths import REPO_ROOT


def documented_variables() -> set[str]:
    """First-column names of the table under `## Configuration`; `A_B` / `_C` also documents `A_C`."""
    section = REPO_ROOT.joinpath("README.md").read_text(encoding="utf-8").split("\n## Configuration\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    names: set[str] = set()
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        first, *rest = re.findall(r"`([^`]+)`", line.split(" | ", 1)[0])
        if DYNAMIC.search(first):
            continue
        names.add(first)
        names.update(first.rsplit("_", 1)[0] + suffix for suffix in rest)
    return names


# Built from a name the operator chooses (`LLM_ENDPOINT_<NAME>_BASE_URL`), so never a literal.
DYNAMIC = re.compile(r"<[A-Z]+>")
