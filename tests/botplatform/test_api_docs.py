"""`/api/docs` works without internet (issue 13 item 11): Swagger UI comes from django-ninja's own
static files, never a CDN, and the page sends the schema to no online validator. The files it
references are served by ``manage.py serve`` with DEBUG on and, DEBUG off, with ``--serve-static``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.test import Client

from tests.serve_process import fresh_env, http_get, serving

# Every URL the page makes the browser load: script and image sources, stylesheets and icons.
_REFERENCE = re.compile(r"""\b(?:src|href)=["']([^"']+)["']""")


def references(page: str) -> list[str]:
    return _REFERENCE.findall(page)


def swagger_settings(page: str) -> dict[str, object]:
    raw = re.search(r'<script type="application/json" id="swagger-settings">(.*?)</script>', page, re.S)
    assert raw is not None, page
    return json.loads(raw.group(1))


@pytest.mark.django_db
def test_the_docs_page_loads_nothing_from_another_host() -> None:
    page = Client().get("/api/docs").content.decode()
    refs = references(page)
    assert any(ref.endswith("swagger-ui-bundle.js") for ref in refs), page
    assert all(ref.startswith("/static/") for ref in refs), refs
    assert "://" not in page.replace("http://testserver", "")
    # Swagger UI's default validator badge posts the schema to validator.swagger.io.
    assert swagger_settings(page)["validatorUrl"] is None


def assert_docs_served_offline(base: str) -> None:
    status, body = http_get(f"{base}/api/docs")
    assert status == 200
    refs = references(body.decode())
    assert refs and all(ref.startswith("/static/") for ref in refs), refs
    for ref in refs:
        status, content = http_get(f"{base}{ref}")
        assert (status, bool(content)) == (200, True), ref


@pytest.mark.slow
@pytest.mark.parametrize(
    ("extra_env", "args"),
    [({}, ()), ({"DEBUG": "0", "SECRET_KEY": "test-only-secret-key-for-serve"}, ("--serve-static",))],
    ids=["debug", "serve-static"],
)
def test_serve_serves_every_file_the_docs_page_references(
    migrated_var_dir: Path, extra_env: dict[str, str], args: tuple[str, ...]
) -> None:
    env = fresh_env(migrated_var_dir, **extra_env)
    with serving(env, migrated_var_dir / "serve.log", *args) as base:
        assert_docs_served_offline(base)
