"""Forget-me reaches the playground's channels (``community.forget.user_forgotten``)."""

from __future__ import annotations

import shutil
from typing import Any

from django.db import transaction
from django.db.models import TextField
from django.db.models.functions import Cast
from django.dispatch import receiver

from bot.playground.models import PlaygroundMessage
from bot.playground.store import upload_root
from chatcontext.models import VoiceTranscript
from community.forget import user_forgotten


@receiver(user_forgotten, dispatch_uid="playground_forget_author")
def forget_author(sender: Any, user_disc_id: str, **kwargs: Any) -> int:
    """Delete the user's playground messages, the platform's replies to them (a reply may quote
    them, as the echo provider does), their voice transcripts and uploaded files, and take their id
    out of every reaction. Runs in ``forget_user``'s transaction; files go once it commits."""
    authored = list(PlaygroundMessage.objects.filter(author_disc_id=user_disc_id).values_list("pk", "disc_id"))
    pks = [pk for pk, _ in authored]
    replies = list(PlaygroundMessage.objects.filter(reply_to__in=pks, is_bot=True).values_list("pk", "disc_id"))
    gone = [disc_id for _, disc_id in [*authored, *replies]]
    VoiceTranscript.objects.filter(message_disc_id__in=gone).delete()
    deleted = PlaygroundMessage.objects.filter(pk__in=[pk for pk, _ in [*authored, *replies]]).delete()[1]
    reacted = PlaygroundMessage.objects.annotate(_reactions=Cast("reactions", TextField())).filter(
        _reactions__contains=f'"{user_disc_id}"'
    )
    for message in reacted:
        message.reactions = [
            {**r, "users": [u for u in r["users"] if u != user_disc_id]}
            for r in message.reactions
            if [u for u in r["users"] if u != user_disc_id]
        ]
        message.save(update_fields=["reactions"])
    folders = [upload_root() / disc_id for disc_id in gone]

    def remove_uploads() -> None:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)

    transaction.on_commit(remove_uploads)
    return int(deleted.get(PlaygroundMessage._meta.label, 0))
