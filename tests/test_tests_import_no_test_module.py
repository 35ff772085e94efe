"""No module under tests/ imports a test module (issue 28 item 7): what two test modules share lives in
a support module (tests/README.md), so running, moving or deleting one test module never changes
another's. Imports inside functions count too: they are where such a dependency hides."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.paths import REPO_ROOT

TESTS = REPO_ROOT / "tests"


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it, as dotted names (``from a import b`` gives
    ``a`` and ``a.b``, since ``b`` may be a module)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def is_test_module(name: str) -> bool:
    parts = name.split(".")
    return parts[0] == "tests" and parts[-1].startswith("test_")


def test_no_module_under_tests_imports_a_test_module() -> None:
    offenders = {
        str(path.relative_to(REPO_ROOT)): sorted(name for name in imported_modules(path) if is_test_module(name))
        for path in sorted(TESTS.rglob("*.py"))
        if "node_modules" not in path.parts
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_check_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    module = tmp_path / "conftest.py"
    module.write_text("def fixture():\n    from tests.a.test_b import helper\n    return helper\n")
    assert {name for name in imported_modules(module) if is_test_module(name)} == {"tests.a.test_b"}
