"""Where the repository's own example material lives (examples/ at the root of the checkout).

Everything a test reads is inside the repository, so a bare clone passes its own tests.
"""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = REPO_ROOT / "examples"
EXAMPLE = EXAMPLES / "tidepool-workbench.snapshot.json"
EXAMPLE_EXPECTED = EXAMPLES / "tidepool-workbench.expected.json"
