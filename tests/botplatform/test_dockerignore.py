"""``COPY . /app`` leaves out what the deployment writes into the project folder (issue 27 review):
the database dumps docs/deploy.md has cron write to ``./backups``, SQLite copies, an operator's
``.env.*`` files and local deploy overrides would otherwise be baked into every image built there."""

from __future__ import annotations

import re

import pathspec

from tests.paths import REPO_ROOT


def ignored(path: str) -> bool:
    """Docker's rule: a pattern is anchored at the build context's root, and ``!`` takes a path back."""
    lines = [line.strip() for line in (REPO_ROOT / ".dockerignore").read_text().splitlines()]
    patterns = [line if line.startswith(("!", "/", "**")) else f"/{line}" for line in lines if line]
    return pathspec.PathSpec.from_lines("gitignore", patterns).match_file(path)


def backup_files_of_the_deploy_docs() -> list[str]:
    """Where the backup commands of docs/deploy.md write, as paths of the project folder (the
    container's ``/backups`` is the project's ``./backups``, compose.yaml's mount)."""
    docs = (REPO_ROOT / "docs" / "deploy.md").read_text()
    mounts = dict(
        (inside, outside)
        for outside, inside in re.findall(r"- \./(\w+):(/\w+)", (REPO_ROOT / "compose.yaml").read_text())
    )
    written = re.findall(r"--file=(/\w+)/([^'\"\n]+?\.dump)", docs) + re.findall(
        r"\.backup (\w+)/([^'\"\n]+?\.sqlite3)", docs
    )
    return [
        re.sub(r"\$\(date [^)]*\)", "2026-12-06", f"{mounts.get(folder, folder)}/{name}") for folder, name in written
    ]


def test_the_backups_the_deploy_docs_write_are_left_out_of_the_image():
    files = backup_files_of_the_deploy_docs()
    assert "backups/tomori-2026-12-06.dump" in files and len(files) >= 2
    assert all(ignored(path) for path in files), [path for path in files if not ignored(path)]


def test_databases_environment_files_and_local_deploy_overrides_are_left_out():
    for path in ["db.sqlite3", "var/db.sqlite3", "backup.sqlite3", ".env", ".env.production", "deploy/Caddyfile.local"]:
        assert ignored(path), path


def test_what_the_image_runs_from_is_kept():
    for path in ["manage.py", "requirements.lock", "deploy/Caddyfile", "deploy/nginx.conf", "botplatform/settings.py"]:
        assert not ignored(path), path
