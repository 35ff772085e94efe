"""Login throttling (issue 26 item 15, ``botplatform.login_throttle``, django-axes): after
LOGIN_FAILURE_LIMIT wrong passwords the right one no longer signs in from that address for that
username, until the cool-off passes or ``manage.py axes_reset``; the operator at another address
is not locked out, and no log line names the username or the address."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"
ATTACKER = "198.51.100.7"
OPERATOR = "203.0.113.9"


@pytest.fixture
def admin_account() -> Any:
    return get_user_model().objects.create_superuser("operator-kim", password=PASSWORD)


def sign_in(address: str, password: str) -> Any:
    client = Client(REMOTE_ADDR=address)
    response = client.post("/admin/login/?next=/admin/", {"username": "operator-kim", "password": password})
    response.signed_in = client.get("/admin/").status_code == 200
    return response


def guess(times: int) -> None:
    for attempt in range(times):
        assert not sign_in(ATTACKER, f"guess-{attempt}").signed_in


def test_the_right_password_is_refused_after_the_failure_limit(admin_account: Any) -> None:
    guess(30)
    response = sign_in(ATTACKER, PASSWORD)
    assert response.status_code == 429 and not response.signed_in


def test_below_the_limit_the_right_password_still_works(admin_account: Any) -> None:
    guess(settings.AXES_FAILURE_LIMIT - 1)
    assert sign_in(ATTACKER, PASSWORD).signed_in


def test_the_operator_at_another_address_is_not_locked_out(admin_account: Any) -> None:
    guess(settings.AXES_FAILURE_LIMIT + 3)
    assert sign_in(OPERATOR, PASSWORD).signed_in


def test_the_lockout_ends_after_the_cool_off(admin_account: Any) -> None:
    from axes.models import AccessAttempt

    guess(settings.AXES_FAILURE_LIMIT)
    assert not sign_in(ATTACKER, PASSWORD).signed_in
    past = AccessAttempt.objects.get().attempt_time - settings.AXES_COOLOFF_TIME - timedelta(seconds=1)
    AccessAttempt.objects.update(attempt_time=past)
    assert sign_in(ATTACKER, PASSWORD).signed_in


def test_axes_reset_lifts_the_lockout(admin_account: Any) -> None:
    guess(settings.AXES_FAILURE_LIMIT)
    assert not sign_in(ATTACKER, PASSWORD).signed_in
    call_command("axes_reset", verbosity=0)
    assert sign_in(ATTACKER, PASSWORD).signed_in


def test_log_lines_name_neither_the_username_nor_the_address(admin_account: Any, caplog: Any) -> None:
    caplog.set_level(logging.INFO)
    guess(settings.AXES_FAILURE_LIMIT + 1)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "AXES" in logged
    assert "operator-kim" not in logged and ATTACKER not in logged


def test_the_test_clients_login_still_signs_in(admin_account: Any) -> None:
    client = Client()
    assert client.login(username="operator-kim", password=PASSWORD)
    assert client.get("/admin/").status_code == 200
