"""``manage.py serve`` answers the admin, the API docs and the health check from a fresh SQLite database."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.serve_process import fresh_env, http_status, serving


@pytest.mark.slow
def test_serve_answers_admin_docs_health_and_static(migrated_var_dir: Path) -> None:
    env = fresh_env(migrated_var_dir)
    log_path = migrated_var_dir / "serve.log"
    with serving(env, log_path) as base:
        assert http_status(f"{base}/admin/login/") == 200
        assert http_status(f"{base}/api/docs") == 200
        assert http_status(f"{base}/static/admin/css/base.css") == 200
    output = log_path.read_text()
    assert "DISCORD_TOKEN is not set" in output
    assert "REDIS_URL is not set" in output
