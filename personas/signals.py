"""Every change of what a staff account may see reaches its open live-feed sockets.

What decides access (``personas.access.principal_for_user``): the account's row (active, staff,
superuser) and its moderator rows. Saving or deleting either announces the change once the
transaction commits (a rolled-back change changed nothing). Writes that send no signal (a
queryset ``update``, raw SQL) are caught by the sockets' periodic re-check instead.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from personas.access import announce_access_change
from personas.models import ServerModerator


@receiver(post_save, sender=ServerModerator, dispatch_uid="access_moderator_saved")
@receiver(post_delete, sender=ServerModerator, dispatch_uid="access_moderator_deleted")
def _moderator_changed(sender: Any, instance: ServerModerator, **kwargs: Any) -> None:
    transaction.on_commit(partial(announce_access_change, instance.user_id))


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="access_account_saved")
@receiver(post_delete, sender=settings.AUTH_USER_MODEL, dispatch_uid="access_account_deleted")
def _account_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    transaction.on_commit(partial(announce_access_change, instance.pk))
