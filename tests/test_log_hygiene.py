"""Request logs never carry the ids in a path (Discord user ids appear in API paths)."""

from __future__ import annotations

import logging

import pytest
from django.test import Client

from botplatform.logging_filters import MaskPathIds, mask_ids


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


def test_the_masking_filter_is_installed_on_the_request_loggers():
    from django.conf import settings

    for name in ("django.request", "django.server"):
        handlers = settings.LOGGING["loggers"][name]["handlers"]
        assert all("mask_path_ids" in settings.LOGGING["handlers"][h].get("filters", []) for h in handlers)
