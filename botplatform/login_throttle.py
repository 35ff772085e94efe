"""Login throttling (django-axes): how the platform plugs it in.

Django's own login has no limit: 30 wrong admin passwords in 14 seconds, then the right one, worked.
django-axes counts failed sign-ins by the *combination* of username and client address and refuses
that combination for ``LOGIN_LOCKOUT_MINUTES`` after ``LOGIN_FAILURE_LIMIT`` failures. Locking by
username alone would let anyone lock the operator out by typing wrong passwords for ``admin``;
locking by address alone would let one guesser at a shared address lock out everyone there. The
cool-off bounds what an attacker who shares the operator's address can do; ``manage.py axes_reset``
lifts every lockout at once.
"""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from django.http import HttpRequest


class LoginThrottleBackend(AxesStandaloneBackend):
    """django-axes' check, for sign-ins that come with a request. Without one (a management command,
    the test client's ``login``) there is no client to throttle, and axes would raise instead of
    letting the next backend decide."""

    def authenticate(self, request: HttpRequest | None, *args: Any, **kwargs: Any) -> None:
        if request is None:
            return None
        return super().authenticate(request, *args, **kwargs)


def client_description(username: str, ip_address: str, user_agent: str, path_info: Any, request: Any) -> str:
    """What axes writes into its log lines about a client: usernames and addresses stay out of logs
    (they name people); the attempt itself is in the admin's *Access attempts*."""
    return "a client (username and address in Access attempts)"
