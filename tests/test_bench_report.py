"""README.md's Performance figures are bench/report.py's rendering of the committed bench/results.json
(issue 17), so a hand edit of a figure, or results committed without the README they produce, fail
here. No benchmark runs: rendering reads the JSON only.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from types import ModuleType
from typing import Any

from tests.paths import REPO_ROOT


def _report() -> ModuleType:
    # bench/ is a directory of scripts, not a package.
    spec = importlib.util.spec_from_file_location("bench_report", REPO_ROOT / "bench" / "report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Its dataclasses look their module up by name while the module runs.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_readme_performance_section_is_the_rendering_of_the_committed_results() -> None:
    report = _report()
    results = json.loads((REPO_ROOT / "bench" / "results.json").read_text(encoding="utf-8"))
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert report.section(readme) == report.render(results), (
        "README.md's generated Performance section is not what bench/report.py renders from "
        "bench/results.json: run `.venv/bin/python bench/report.py bench/results.json`"
    )


def _point(participants: int, median_ms: float, statements: int) -> dict[str, Any]:
    return {
        "shape": {"messages": 100, "participants": participants, "memories_per_user": 10},
        "runs": 42,
        "median_ms": median_ms,
        "p95_ms": median_ms * 1.5,
        "min_ms": median_ms * 0.8,
        "queries_per_turn": statements,
        "floor": {"statements": statements, "median_ms": median_ms / 5, "min_ms": median_ms / 6},
    }


def _assembly(at_10: float, at_200: float, statements: int) -> dict[str, Any]:
    return {
        "rounds": 7,
        "sweeps": {},
        "comparison_point": _point(10, at_10, statements),
        "acceptance_point": _point(200, at_200, statements),
    }


def test_targets_compare_the_two_databases_of_the_same_run_and_leave_the_unmeasured_open() -> None:
    report = _report()
    results = {
        "assembly": _assembly(20.0, 35.0, 9),
        "postgresql": {"measured": True, "database": {}, "assembly": _assembly(28.0, 45.0, 8)},
        "users_table": {"points": [{"users": 100_000, "median_ms": 50.0}]},
    }
    met = {t["target"]: t["met"] for t in report.targets(results)}
    assert list(met.values()) == [
        False,  # PostgreSQL median 45 ms > 30 ms
        True,  # 45 / 35 = 1.29 <= 1.5
        True,  # SQLite 35 / 20 = 1.75 <= 2.0
        True,  # PostgreSQL 45 / 28 = 1.61 <= 2.0
        False,  # 9 statements on SQLite
        None,  # no request_scope section
        None,  # the users table was measured on SQLite only
        None,  # and without name-like nicknames
    ]
    unreachable = {**results, "postgresql": {"measured": False, "reason": "PostgreSQL is not reachable"}}
    met = {t["target"]: t["met"] for t in report.targets(unreachable)}
    assert list(met.values()) == [None, None, True, None, False, None, None, None]
