"""No credential reaches a log line (issue 13 item 2): an API token sent with any scheme, right or
wrong, leaves no part of itself in any logger's output, DEBUG on (``make run``'s default).

django-ninja's ``HttpBearer`` logged ``Unexpected auth - '<the whole header>'`` on the ``django``
logger for a scheme other than Bearer (``Token tmr_…``, ``Basic tmr_…``)."""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator

import pytest
from django.test import Client
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

pytestmark = pytest.mark.django_db

WINDOW = 8  # no run of this many characters of the token's secret part may appear


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(logging.Formatter("%(name)s %(message)s").format(record))


@pytest.fixture
def every_log_line(settings) -> Iterator[Collect]:  # type: ignore[no-untyped-def]
    """A handler on the root and on every existing logger, each opened to DEBUG (some loggers do not
    propagate), with settings.DEBUG on; restored afterwards."""
    settings.DEBUG = True
    handler = Collect()
    loggers = [logging.getLogger(), *(logging.getLogger(name) for name in list(logging.root.manager.loggerDict))]
    levels = [(lg, lg.level, lg.disabled) for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)
        lg.disabled = False
    try:
        yield handler
    finally:
        for lg, level, disabled in levels:
            lg.removeHandler(handler)
            lg.setLevel(level)
            lg.disabled = disabled


def header_variants(scheme: str, token: str) -> list[str]:
    encoded = base64.b64encode(f"{token}:".encode()).decode()
    return [
        f"{scheme} {token}",
        f"{scheme}  {token}",
        f"{scheme}{token}",
        f"{scheme} {encoded}",
        token,
        f"{token} {scheme}",
    ]


def leaked(lines: list[str], token: str) -> list[str]:
    secret = token.removeprefix("tmr_")
    forms = [secret, base64.b64encode(f"{token}:".encode()).decode()]
    windows = {form[i : i + WINDOW] for form in forms for i in range(len(form) - WINDOW + 1)}
    return [line for line in lines if any(w in line for w in windows)]


@pytest.mark.parametrize("scheme", ["Token", "Basic", "bearer", "Bearer", "Bearer:", "JWT", "", "ApiKey"])
def test_a_real_token_with_any_scheme_leaves_no_trace_in_any_log(world, every_log_line, scheme) -> None:  # type: ignore[no-untyped-def]
    token = world["token_a_write"]
    client = Client()
    for value in header_variants(scheme, token):
        client.get("/api/v1/servers", HTTP_AUTHORIZATION=value)
        client.get("/api/v1/health", HTTP_AUTHORIZATION=value)
    assert every_log_line.lines, "the capture saw nothing: the test would prove nothing"
    assert leaked(every_log_line.lines, token) == []


@hypothesis_settings(suppress_health_check=list(HealthCheck), deadline=None)
@given(scheme=st.text(st.characters(codec="latin-1", exclude_categories=["Cc"]), max_size=12))
def test_no_scheme_whatsoever_logs_the_token(world, every_log_line, scheme) -> None:  # type: ignore[no-untyped-def]
    token = world["token_a_write"]
    every_log_line.lines.clear()
    for value in header_variants(scheme, token):
        Client().get("/api/v1/records", HTTP_AUTHORIZATION=value)
    assert leaked(every_log_line.lines, token) == []
