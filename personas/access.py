"""Who may see which server: one answer for the API, the admin inspector and the live feed.

A principal is either an API token (exactly one server, read-only or read-write) or a staff
session (the servers the account moderates; superusers see all). Objects outside a principal's
servers are reported as missing (404), never as forbidden, so ids of other servers leak nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from personas.models import ApiToken, ServerModerator
from personas.models.access import hash_token

LAST_USED_RESOLUTION = timedelta(minutes=1)


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
