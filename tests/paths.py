"""Where the repository's own example material lives (examples/ at the root of the checkout).

Everything a test reads is inside the repository, so a bare clone passes its own tests.
"""

import tomllib
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = REPO_ROOT / "examples"
EXAMPLE = EXAMPLES / "tidepool-workbench.snapshot.json"
EXAMPLE_EXPECTED = EXAMPLES / "tidepool-workbench.expected.json"

# The project's own packages, as the import contracts name them (pyproject.toml), so a scan of the
# source covers a package the day it is added.
PROJECT_PACKAGES: tuple[str, ...] = tuple(
    tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["root_packages"]
)
