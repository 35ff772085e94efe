"""Where the project's companion material lives: `shared/` beside the repository (specs, examples).

CI clones the repository into another folder with a copy of shared/ beside it, so the path is
always taken relative to the checkout, never absolute.
"""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = REPO_ROOT.parent / "shared"
EXAMPLES = SHARED / "examples"
NIGHT_OWLS_EXAMPLE = EXAMPLES / "night-owls-lounge.json"
