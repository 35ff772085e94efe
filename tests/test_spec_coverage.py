"""docs/spec-coverage.md against the project's behaviour reference: one row per rule id, and every
test a row names exists.

The rule ids are the project's own catalogue, `docs/behaviour/build-context.md` and
`docs/behaviour/participants.md`: the bold list headings (`- **BC3-14a** …`, `- **D-06** …`) plus any
id in the first cell of a table row. Every id the code, the tests and the other documents cite must be
one of them, and every test the catalogue's scenario tables name must exist.

A row's status is the first word of its status cell (`implemented`, `quirk`, `deferred`, `missing`;
a qualifier may follow). Tests are named `` `path::function` `` (or `path::Class::method`), the path
relative to the repository root or to `tests/`.
"""

from __future__ import annotations

import ast
import os
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.paths import PROJECT_PACKAGES
from tests.paths import REPO_ROOT as REPO

SPEC_DIR = REPO / "docs" / "behaviour"
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
    assert missing == [], f"behaviour reference files missing from {SPEC_DIR.relative_to(REPO)}"
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


def _test_problem(path: str, name: str) -> str | None:
    """Why `path::name` does not name an existing test, or None when it does."""
    found = _test_file(path)
    if found is None:
        return f"no file {path}"
    if not name.rsplit("::", 1)[-1].startswith("test"):
        return f"{path}::{name} is not a test"
    if name not in _defined_tests(found):
        return f"{path} defines no {name}"
    return None


def test_implemented_and_quirk_rows_name_tests_that_exist() -> None:
    problems: list[str] = []
    for row in coverage_rows():
        if row.status in NEEDS_TESTS and not row.tests:
            problems.append(f"line {row.line} {row.rule}: {row.status} but names no test")
        problems += [f"line {row.line} {row.rule}: {p}" for t in row.tests if (p := _test_problem(*t))]
    assert problems == []


def _catalogue_files() -> list[Path]:
    return sorted(SPEC_DIR.glob("*.md"))


def test_the_catalogue_names_only_tests_that_exist() -> None:
    """The scenario tables of the behaviour reference point at tests by `path::function`."""
    refs = [(f.name, ref) for f in _catalogue_files() for ref in _TEST_REF.findall(f.read_text(encoding="utf-8"))]
    assert len(refs) > 100
    assert [(name, problem) for name, ref in refs if (problem := _test_problem(*ref))] == []


_SCENARIO_TEST = re.compile(r"^(?:async )?def (test_[st]\d+_\w+)\(", re.MULTILINE)


def test_every_numbered_scenario_test_is_in_a_scenario_table() -> None:
    """`test_s18_…` and `test_t28_…` pin numbered scenarios; each is listed in the catalogue."""
    listed = {name.rsplit("::", 1)[-1] for f in _catalogue_files() for _, name in _TEST_REF.findall(f.read_text())}
    scenario_tests = {
        f"{path.relative_to(REPO)}::{name}"
        for path in (REPO / "tests").rglob("test_*.py")
        for name in _SCENARIO_TEST.findall(path.read_text(encoding="utf-8"))
    }
    assert scenario_tests and sorted(t for t in scenario_tests if t.rsplit("::", 1)[-1] not in listed) == []


# Where rule ids are cited: the project's code, tests, benchmarks and documents (not .venv or var/).
CITING_DIRS = ("bench", "docs", "tests", *PROJECT_PACKAGES)


def _citing_files() -> list[Path]:
    files = [REPO / "README.md"]
    for top in CITING_DIRS:
        for root, dirs, names in os.walk(REPO / top):
            dirs[:] = [d for d in dirs if d not in {"node_modules", "__pycache__"}]
            files += [Path(root) / n for n in names if n.endswith((".py", ".md"))]
    return sorted(files)


def test_every_rule_id_the_repository_cites_is_in_the_catalogue() -> None:
    """A docstring, test name or document citing `BC3-05` or `H-14` cites a rule the project defines
    (or a lettered sub-item of one: `BC8-12g`)."""
    known = set(spec_rule_ids())
    unknown = sorted(
        f"{path.relative_to(REPO)}: {rule}"
        for path in _citing_files()
        for rule in set(_MENTION.findall(path.read_text(encoding="utf-8", errors="replace")))
        if rule not in known and rule.rstrip("abcdefghijklmnopqrstuvwxyz") not in known
    )
    assert len(_citing_files()) > 100 and unknown == []


def test_summary_counts_match_the_rows() -> None:
    text = COVERAGE.read_text(encoding="utf-8")
    summary = {
        cells[0].strip("*`").lower(): int(cells[1])
        for line in text.splitlines()
        if line.startswith("|") and len(cells := _cells(line)) == 2 and cells[1].isdigit()
    }
    counts = Counter(row.status for row in coverage_rows())
    assert summary == {**{status: counts.get(status, 0) for status in STATUSES}, "total": len(coverage_rows())}
