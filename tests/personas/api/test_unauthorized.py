"""A 401 says what was wrong with the credentials (issue 32 item 7): missing, a malformed header, a
malformed token, an unknown or a revoked token, or a session without API access. It never repeats
what was sent. (Tokens have no expiry date: revoking one is how it ends.)"""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from personas.api_common import (
    MALFORMED_HEADER,
    MALFORMED_TOKEN,
    MISSING_CREDENTIALS,
    NOT_STAFF_SESSION,
    REVOKED_TOKEN,
    UNKNOWN_TOKEN,
)
from personas.models import ApiToken
from tests.personas.api.conftest import bearer

pytestmark = pytest.mark.django_db

URL = "/api/v1/servers"
SENT = "tmr_Zq9-secret-looking-value"


def detail(client: Client, **headers: str) -> str:
    response = client.get(URL, headers=headers)
    assert response.status_code == 401
    assert SENT not in response.content.decode()
    return response.json()["detail"]


@pytest.mark.parametrize(
    ("headers", "said"),
    [
        ({}, MISSING_CREDENTIALS),
        ({"Authorization": f"Token {SENT}"}, MALFORMED_HEADER),
        ({"Authorization": "Bearer "}, MALFORMED_HEADER),
        ({"Authorization": f"Bearer x{SENT}"}, MALFORMED_TOKEN),
        ({"Authorization": f"Bearer {SENT}"}, UNKNOWN_TOKEN),
    ],
    ids=["missing", "other-scheme", "empty", "no-prefix", "unknown"],
)
def test_a_401_names_what_was_wrong_without_echoing_it(world, headers: dict[str, str], said: str) -> None:  # type: ignore[no-untyped-def]
    assert detail(Client(), **headers) == said


def test_a_revoked_token_is_told_it_was_revoked(world) -> None:  # type: ignore[no-untyped-def]
    raw = world["token_a_read"]
    assert Client().get(URL, headers=bearer(raw)).status_code == 200
    ApiToken.objects.filter(token_hash=ApiToken.objects.get(name="dash A").token_hash).update(revoked_at=timezone.now())
    response = Client().get(URL, headers=bearer(raw))
    assert (response.status_code, response.json()["detail"]) == (401, REVOKED_TOKEN)
    assert raw not in response.content.decode()


def test_a_signed_in_account_without_staff_rights_is_told_so(world) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(world["charlie"])
    assert detail(client) == NOT_STAFF_SESSION
