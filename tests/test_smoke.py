"""Whole-project smoke checks: importable from the repository root, system checks clean, URLs wired."""

import subprocess
import sys
from io import StringIO

import pytest
from django.core.management import call_command

from tests.paths import REPO_ROOT as ROOT


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


def test_system_checks_pass():
    out = StringIO()
    call_command("check", stdout=out)
    assert "no issues" in out.getvalue()


@pytest.mark.django_db
@pytest.mark.parametrize(("path", "status"), [("/admin/login/", 200), ("/api/docs", 200), ("/api/v1/health", 200)])
def test_admin_and_api_entry_points_answer(client, path, status):
    assert client.get(path).status_code == status


@pytest.mark.django_db
def test_every_registered_admin_changelist_renders(admin_client):
    from django.contrib import admin

    for model in admin.site._registry:
        url = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        assert admin_client.get(url).status_code == 200, url


def test_site_root_leads_to_the_admin(client):  # type: ignore[no-untyped-def]
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/admin/"
