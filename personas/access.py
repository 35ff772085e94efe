"""Who may see which server: one answer for the API, the admin inspector and the live feed.

A principal is either an API token (exactly one server, read-only or read-write) or a staff
session (the servers the account moderates; superusers see all). Objects outside a principal's
servers are reported as missing (404), never as forbidden, so ids of other servers leak nothing.

Live feeds (websockets) are opened by staff sessions only, and stay open: they ask
``user_sees_server`` again while open, and every change of what an account may see is announced
to its sockets (``announce_access_change``, sent by ``personas.signals``) so they ask at once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from personas.models import ApiToken, ServerModerator
from personas.models.access import hash_token

logger = logging.getLogger(__name__)

LAST_USED_RESOLUTION = timedelta(minutes=1)
ACCESS_CHANGED = "access.changed"


@dataclass(frozen=True)
class Principal:
    server_ids: frozenset[int] | None  # None: every server (superuser)
    can_write: bool
    user: Any = None
    token: ApiToken | None = None

    def sees(self, server_id: int) -> bool:
        return self.server_ids is None or server_id in self.server_ids

    def scope(self, queryset: QuerySet, field: str = "server_id") -> QuerySet:
        if self.server_ids is None:
            return queryset
        return queryset.filter(**{f"{field}__in": sorted(self.server_ids)})


def principal_for_user(user: Any) -> Principal | None:
    """Staff accounts only; a non-staff session is no principal at all."""
    if user is None or not user.is_authenticated or not user.is_active or not user.is_staff:
        return None
    if user.is_superuser:
        return Principal(server_ids=None, can_write=True, user=user)
    ids = frozenset(ServerModerator.objects.filter(user=user).values_list("server_id", flat=True))
    return Principal(server_ids=ids, can_write=True, user=user)


def principal_for_token(raw: str) -> Principal | None:
    token = ApiToken.objects.filter(token_hash=hash_token(raw.strip()), revoked_at__isnull=True).first()
    if token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return Principal(
        server_ids=frozenset({token.server_id}), can_write=token.scope == ApiToken.Scope.READ_WRITE, token=token
    )


def user_sees_server(user_id: int | None, server_id: int) -> bool:
    """Whether the account ``user_id`` may see ``server_id`` now, from its row as stored now (not the
    copy a socket loaded when it opened): active, staff, and a superuser or the server's moderator."""
    if user_id is None:
        return False
    who = principal_for_user(get_user_model().objects.filter(pk=user_id).first())
    return who is not None and who.sees(server_id)


def access_group(user_id: int) -> str:
    """The channel-layer group of one account's open feed sockets."""
    return f"access-user-{user_id}"


def announce_access_change(user_id: int) -> None:
    """Tell the account's open feed sockets to check their access again now.

    Best effort: when the channel layer is unreachable the sockets still find out at their next
    periodic check (``chatcontext.records.consumers.ACCESS_RECHECK_SECONDS``), so this logs one line and
    never fails the change that caused it.
    """
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(access_group(user_id), {"type": ACCESS_CHANGED})
    except Exception as exc:
        logger.warning("access change not announced to live feeds (%s)", type(exc).__name__)


def set_password_link(account: Any) -> str:
    """An absolute link where ``account`` chooses its password (``personas.account_views``).

    Django's password-reset token: it works once (setting a password changes what it is made of) and
    for ``PASSWORD_RESET_TIMEOUT`` seconds, and nothing of it is stored. It is a credential: shown to
    the superuser who added the moderator (like an API token, once), never logged.
    """
    uid = urlsafe_base64_encode(force_bytes(account.pk))
    path = reverse("set_password", kwargs={"uidb64": uid, "token": default_token_generator.make_token(account)})
    return f"{settings.PUBLIC_BASE_URL}{path}"


def set_password_link_lifetime() -> str:
    """How long a set-password link works, in words ("3 days")."""
    seconds = int(settings.PASSWORD_RESET_TIMEOUT)
    days, hours = divmod(seconds // 3600, 24)
    if days and not hours:
        return f"{days} day{'s' if days != 1 else ''}"
    return f"{seconds // 3600} hour{'s' if seconds // 3600 != 1 else ''}"
