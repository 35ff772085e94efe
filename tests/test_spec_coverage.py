"""docs/spec-coverage.md against the specs: one row per rule id, and every test a row names exists.

The rule ids come from `../shared/spec/build-context.md` and `../shared/spec/participants.md` (the
`shared/` folder sits beside the repository, read-only): the bold list headings (`- **BC3-14a** …`,
`- **D-06** …`) plus any id in the first cell of a table row. Without that folder the tests fail
instead of passing on an empty list.

A row's status is the first word of its status cell (`implemented`, `quirk`, `deferred`, `missing`;
a qualifier may follow). Tests are named `` `path::function` `` (or `path::Class::method`), the path
relative to the repository root or to `tests/`.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SPEC_DIR = REPO.parent / "shared" / "spec"
SPEC_FILES = ("build-context.md", "participants.md")
COVERAGE = REPO / "docs" / "spec-coverage.md"

RULE_ID = r"(?:BC\d+-\d+[a-z]?|[UDCHPRXN]-\d+)"
_HEADING = re.compile(rf"^\s*-\s+\*\*({RULE_ID})\*\*", re.MULTILINE)
_TABLE_ID = re.compile(rf"^\|\s*\**`?({RULE_ID})`?\**\s*\|", re.MULTILINE)
_MENTION = re.compile(rf"\b({RULE_ID})\b")
_TEST_REF = re.compile(r"`([^`\s]+\.py)::([A-Za-z_][\w:]*)`")

STATUSES = ("implemented", "quirk", "deferred", "missing")
NEEDS_TESTS = ("implemented", "quirk")
NEEDS_NOTES = ("quirk", "deferred", "missing")


@dataclass(frozen=True)
class Row:
    line: int
    rule: str
    status: str
    tests: tuple[tuple[str, str], ...]
    notes: str


def _spec_texts() -> dict[str, str]:
    missing = [name for name in SPEC_FILES if not (SPEC_DIR / name).is_file()]
    if missing:
        pytest.fail(
            f"spec files not found: {', '.join(missing)} in {SPEC_DIR} — the shared/ folder must sit beside "
            "the repository (../shared/spec); the coverage check cannot run without it",
            pytrace=False,
        )
    return {name: (SPEC_DIR / name).read_text(encoding="utf-8") for name in SPEC_FILES}


@cache
def spec_rule_ids() -> tuple[str, ...]:
    ids: list[str] = []
    for text in _spec_texts().values():
        ids += _HEADING.findall(text) + _TABLE_ID.findall(text)
    return tuple(ids)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _column(header: list[str], *words: str) -> int | None:
    return next((i for i, name in enumerate(header) if any(w in name.lower() for w in words)), None)


@cache
def coverage_rows() -> tuple[Row, ...]:
    """The rule rows of every table. Columns are found by their header: `status`, the tests column
    (`covered by` / `covering tests`) and an optional `notes`; the rule id is the first cell."""
    assert COVERAGE.is_file(), f"{COVERAGE.relative_to(REPO)} is missing"
    lines = COVERAGE.read_text(encoding="utf-8").splitlines()
    rows = []
    header: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.startswith("|"):
            header = []
            continue
        cells = _cells(line)
        following = lines[number] if number < len(lines) else ""
        if not header and following.startswith("|") and set(following.replace("|", "").strip()) <= set("-: "):
            header = cells  # the line above a |---| separator
            continue
        if not re.fullmatch(RULE_ID, cells[0].strip("*`")):
            continue
        status, tests, notes = _column(header, "status"), _column(header, "cover", "test"), _column(header, "note")
        assert status is not None and tests is not None, f"line {number}: the table needs status and tests columns"
        assert len(cells) == len(header), f"line {number}: {len(cells)} cells under a {len(header)}-column header"
        words = cells[status].strip("*` ").lower().split()
        rows.append(
            Row(
                line=number,
                rule=cells[0].strip("*`"),
                status=words[0].rstrip(":;,") if words else "",
                tests=tuple(_TEST_REF.findall(cells[tests])),
                notes=cells[notes] if notes is not None else "",
            )
        )
    return tuple(rows)


def _test_file(path: str) -> Path | None:
    """A test path relative to the repository root, or to tests/."""
    return next((p for p in (REPO / path, REPO / "tests" / path) if p.is_file()), None)


@cache
def _defined_tests(path: Path) -> frozenset[str]:
    """`name` for module-level test functions, `Class::name` for test methods."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.update(
                f"{node.name}::{child.name}"
                for child in node.body
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            )
    return frozenset(names)


def test_the_spec_parser_sees_every_rule_the_specs_mention() -> None:
    """Guards the heading regex: every id written anywhere in the specs (scenario lists, ranges,
    cross-references) is a parsed rule id, or a lettered sub-item of one (`BC8-12g` → `BC8-12`)."""
    ids = set(spec_rule_ids())
    assert {"BC2-01", "BC3-14a", "BC11-03", "U-1", "D-37", "C-09", "H-22", "P-07", "R-19", "X-08", "N-05"} <= ids
    mentioned = {m for text in _spec_texts().values() for m in _MENTION.findall(text)}
    unknown = sorted(m for m in mentioned if m not in ids and m.rstrip("abcdefghijklmnopqrstuvwxyz") not in ids)
    assert unknown == []


def test_every_spec_rule_id_has_exactly_one_row() -> None:
    spec = spec_rule_ids()
    assert len(spec) == len(set(spec)), "a rule id is defined twice in the specs"
    counts = Counter(row.rule for row in coverage_rows())
    assert sorted(r for r in spec if counts[r] == 0) == [], "rule ids without a row in docs/spec-coverage.md"
    assert sorted(r for r, n in counts.items() if n > 1) == [], "rule ids with more than one row"


def test_rows_name_only_known_rule_ids() -> None:
    known = set(spec_rule_ids())
    assert [(row.line, row.rule) for row in coverage_rows() if row.rule not in known] == []


def test_statuses_are_known_and_explained() -> None:
    rows = coverage_rows()
    assert [(row.line, row.status) for row in rows if row.status not in STATUSES] == []
    unexplained = [(row.line, row.rule) for row in rows if row.status in NEEDS_NOTES and not row.notes.strip()]
    assert unexplained == [], "quirk, deferred and missing rows must say why in the notes"


def test_implemented_and_quirk_rows_name_tests_that_exist() -> None:
    problems: list[str] = []
    for row in coverage_rows():
        if row.status in NEEDS_TESTS and not row.tests:
            problems.append(f"line {row.line} {row.rule}: {row.status} but names no test")
        for path, name in row.tests:
            found = _test_file(path)
            if found is None:
                problems.append(f"line {row.line} {row.rule}: no file {path}")
            elif not name.rsplit("::", 1)[-1].startswith("test"):
                problems.append(f"line {row.line} {row.rule}: {path}::{name} is not a test")
            elif name not in _defined_tests(found):
                problems.append(f"line {row.line} {row.rule}: {path} defines no {name}")
    assert problems == []


def test_summary_counts_match_the_rows() -> None:
    text = COVERAGE.read_text(encoding="utf-8")
    summary = {
        cells[0].strip("*`").lower(): int(cells[1])
        for line in text.splitlines()
        if line.startswith("|") and len(cells := _cells(line)) == 2 and cells[1].isdigit()
    }
    counts = Counter(row.status for row in coverage_rows())
    assert summary == {**{status: counts.get(status, 0) for status in STATUSES}, "total": len(coverage_rows())}
