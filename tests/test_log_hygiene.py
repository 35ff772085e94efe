"""Logs never carry the ids in a path (Discord user ids appear in API and admin paths), nor the SQL
and values a database error quotes (issue 26 item 6). The end-to-end tests read what the configured
console handler writes, as the operator's terminal would show it."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest
from django.test import Client

from botplatform.logging_filters import MaskPathIds, mask_ids

DISCORD_ID = "555555555555555555"
MEMBERS_WORDS = "my secret diary entry"


def test_mask_ids_masks_numeric_segments_and_drops_query_strings():
    assert mask_ids("Not Found: /api/v1/servers/12/users/123456789012345678/privacy") == (
        "Not Found: /api/v1/servers/<id>/users/<id>/privacy"
    )
    assert mask_ids("/api/v1/records?server_id=5") == "/api/v1/records"
    assert mask_ids("no path here 123") == "no path here 123"


@pytest.mark.django_db
def test_django_request_warnings_do_not_carry_the_user_id(caplog):  # type: ignore[no-untyped-def]
    request_logger = logging.getLogger("django.request")
    request_logger.addFilter(MaskPathIds())
    caplog.set_level(logging.WARNING, logger="django.request")
    try:
        Client().get("/api/v1/servers/9/users/555555555555555555/privacy")
    finally:
        request_logger.filters.clear()
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "Unauthorized" in logged
    assert "555555555555555555" not in logged


def test_every_handler_masks_and_no_logger_bypasses_them():
    from django.conf import settings

    assert all("mask_path_ids" in handler.get("filters", []) for handler in settings.LOGGING["handlers"].values())
    assert all(logger.get("propagate", True) for logger in settings.LOGGING["loggers"].values())


@pytest.fixture
def console() -> Iterator[io.StringIO]:
    """What the configured console handlers (settings.LOGGING) write, whichever logger they are on."""
    loggers = [logging.getLogger(), *(logging.getLogger(name) for name in logging.root.manager.loggerDict)]
    handlers = {h for logger in loggers for h in logger.handlers if type(h) is logging.StreamHandler}
    out = io.StringIO()
    previous = {handler: handler.setStream(out) for handler in handlers}
    try:
        yield out
    finally:
        for handler, stream in previous.items():
            handler.setStream(stream)


@pytest.mark.django_db
def test_a_csrf_refusal_logs_the_path_without_the_discord_id(console: io.StringIO) -> None:
    response = Client(enforce_csrf_checks=True).post(f"/admin/personas/user/{DISCORD_ID}/change/", {"a": "b"})
    assert response.status_code == 403
    logged = console.getvalue()
    assert "Forbidden (CSRF cookie not set.): /admin/personas/user/<id>/change/" in logged
    assert DISCORD_ID not in logged


@pytest.mark.django_db
@pytest.mark.urls("tests.botplatform.failing_urls")
def test_a_database_error_is_logged_without_its_sql_and_values(console: io.StringIO) -> None:
    response = Client(raise_request_exception=False).get("/fails/database/", {"q": MEMBERS_WORDS})
    assert response.status_code == 500
    logged = console.getvalue()
    assert "Internal Server Error: /fails/database/" in logged
    assert "django.db.utils." in logged and "Traceback" in logged  # the kind and where it happened stay
    assert MEMBERS_WORDS not in logged


def test_a_database_error_as_an_argument_is_logged_by_its_class(console: io.StringIO) -> None:
    from django.db import IntegrityError

    error = IntegrityError(f"duplicate key value violates unique constraint DETAIL: Key (content)=({MEMBERS_WORDS})")
    logging.getLogger("bot.conversation.runner").warning("reply delivery failed (%s)", error)
    logged = console.getvalue()
    assert "reply delivery failed (IntegrityError" in logged
    assert MEMBERS_WORDS not in logged
