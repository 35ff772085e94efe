"""Announce each new prompt record on the live feed once its transaction has committed."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver

from chatcontext.records.consumers import announce_record
from chatcontext.records.models import PromptRecord


@receiver(post_save, sender=PromptRecord, dispatch_uid="announce_prompt_record")
def _announce(sender: type[PromptRecord], instance: PromptRecord, created: bool, **kwargs: Any) -> None:
    if created:
        transaction.on_commit(lambda: announce_record(instance))
