import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_platform_and_discord_import_from_repository_root():
    """The project package is `botplatform`, so the stdlib `platform` module is not shadowed."""
    result = subprocess.run(
        [sys.executable, "-c", "import platform, discord; print(platform.python_implementation())"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "CPython"
