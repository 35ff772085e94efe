"""The README's configuration table and the environment variables the project reads are the same
set, and the environment is read in one settings surface (issue 14): ``botplatform/settings.py``,
plus the account variables ``ensure_admin`` reads when it runs."""

from __future__ import annotations

import ast

from tests.botplatform.documented import documented_variables
from tests.paths import PROJECT_PACKAGES
from tests.paths import REPO_ROOT as ROOT

READERS = {"botplatform/settings.py", "personas/management/commands/ensure_admin.py"}
ENV_HELPERS = {"env_bool", "env_int", "env_tunable", "env_seconds", "http_url"}


def _env_name(node: ast.AST) -> str | None:
    """The literal variable name of an environment read: ``os.environ.get("X")``, ``os.getenv("X")``,
    ``os.environ["X"]`` or a settings helper ``env_int("X", …)``; None for anything else."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        target, key = node.value, node.slice
    elif isinstance(node, ast.Call) and node.args:
        func, key = node.func, node.args[0]
        if isinstance(func, ast.Name) and func.id in ENV_HELPERS:
            target = None
        elif isinstance(func, ast.Attribute) and func.attr == "get":
            target = func.value
        elif isinstance(func, ast.Attribute) and func.attr == "getenv":
            return key.value if isinstance(key, ast.Constant) else None
        else:
            return None
    else:
        return None
    if target is not None and ast.unparse(target) != "os.environ":
        return None
    return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None


def environment_reads() -> dict[str, set[str]]:
    """Module path → the variables it reads."""
    reads: dict[str, set[str]] = {}
    for package in PROJECT_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            names = {n for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if (n := _env_name(node))}
            if names:
                reads[path.relative_to(ROOT).as_posix()] = names
    return reads


def test_every_documented_variable_is_read_and_every_read_variable_is_documented() -> None:
    read = set().union(*environment_reads().values())
    documented = documented_variables()
    assert {"DATABASE_URL", "MAX_SERVER_MEMORIES", "DJANGO_SUPERUSER_EMAIL", "DEFAULT_BOTNAME"} <= documented
    assert sorted(documented - read) == [], "documented in the README but read nowhere"
    assert sorted(read - documented) == [], "read but missing from the README's configuration table"


def test_only_the_settings_module_and_ensure_admin_read_the_environment() -> None:
    readers = set(environment_reads())
    assert "botplatform/settings.py" in readers
    assert sorted(readers - READERS) == []


def test_approved_endpoint_variables_are_documented_by_their_pattern() -> None:
    readme = ROOT.joinpath("README.md").read_text(encoding="utf-8")
    settings_source = ROOT.joinpath("botplatform/settings.py").read_text(encoding="utf-8")
    assert "`LLM_ENDPOINT_<NAME>_BASE_URL` / `_API_KEY` / `_MODEL`" in readme
    assert 'prefix = f"LLM_ENDPOINT_' in settings_source
    assert all(f'prefix + "{suffix}"' in settings_source for suffix in ("BASE_URL", "API_KEY", "MODEL"))
