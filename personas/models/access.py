from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models

from personas.models.servers import Server

TOKEN_PREFIX = "tmr_"


class ServerModerator(models.Model):
    """Per-server moderator membership: a staff account sees only the servers it moderates.

    Superusers see every server without a membership row.
    """

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="moderators")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="moderated_servers")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "server_moderators"
        constraints = [models.UniqueConstraint(fields=["server", "user"], name="server_moderator_unique")]

    def __str__(self) -> str:
        return f"{self.user} moderates {self.server}"


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(models.Model):
    """A per-server API token for dashboards; only its SHA-256 hash is stored."""

    class Scope(models.TextChoices):
        READ = "read", "Read-only"
        READ_WRITE = "read_write", "Read and write"

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=80, help_text="What the token is for, e.g. 'Grafana dashboard'.")
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    token_prefix = models.CharField(max_length=12, editable=False, help_text="First characters, to recognise it.")
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.READ)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "api_tokens"
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.token_prefix}…)"

    @classmethod
    def issue(cls, server: Server, name: str, scope: str = Scope.READ, created_by=None) -> tuple[ApiToken, str]:  # type: ignore[no-untyped-def]
        """Create a token and return it with its raw value, which is shown once and never stored."""
        raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
        token = cls.objects.create(
            server=server,
            name=name,
            scope=scope,
            created_by=created_by,
            token_hash=hash_token(raw),
            token_prefix=raw[:12],
        )
        return token, raw

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
