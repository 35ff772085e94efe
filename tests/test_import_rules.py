"""The import rule (README, Architecture), as the import-linter contracts in pyproject.toml: the apps
import downward only (botplatform → bot → chatcontext → personas), chatcontext reads other apps'
models only through its named loaders, and the pure pipeline imports no Django. Built from the
source (every import, also those inside functions), not by importing the project."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.paths import REPO_ROOT as ROOT

# In a child interpreter: under pytest, zope.interface (imported with Twisted by daphne and channels)
# declares interfaces on abc.ABC, which breaks import-linter's introspection of its contract classes.
LINT = (
    "import sys\n"
    "from importlinter import configuration\n"
    "from importlinter.application import use_cases\n"
    "configuration.configure()\n"
    "kept = use_cases.lint_imports(config_filename=sys.argv[1], cache_dir=None, no_logo=True)\n"
    "sys.exit(0 if kept else 1)\n"
)


def test_the_import_contracts_are_kept() -> None:
    run = subprocess.run(
        [sys.executable, "-c", LINT, str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "400"},  # one line per contract in the report
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = run.stdout + run.stderr
    broken = [line.split(" BROKEN")[0] for line in report.splitlines() if " BROKEN" in line]
    assert re.search(r"Contracts: \d+ kept", report), report  # the contracts ran
    assert run.returncode == 0, "broken contracts:\n" + "\n".join(broken) + "\n\n" + report
