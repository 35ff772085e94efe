"""Forget-me leaves no trace (issue 5 acceptance): after ``personas.actions.forget_user``, a search of
every text and JSON column of every model finds none of the user's message text or memories,
although before it they were in live rows and in the stored snapshots and prompt records of two
servers."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from django.apps import apps
from django.db import models
from django.db.models.functions import Cast
from django.utils import timezone

from chatcontext.models import PromptRecord, VoiceTranscript
from personas import actions
from personas.models import DiscordUser
from tests.inspector.conftest import World, example_doc

pytestmark = pytest.mark.django_db(databases=["default", "replay"])

DOC = example_doc()
PRIYA = next(u["disc_id"] for u in DOC["users"] if u["username"] == "priya.k")
TOBIAS = next(u["disc_id"] for u in DOC["users"] if u["username"] == "tobias.r")
VOICE = DOC["messages"][8]  # Priya's voice message
# Priya's own words (her image caption and her mention of the bot, the transcript of her voice
# message), her memories (personal, including another lineage's), her reminder, her saved nickname
# and her member display name.
PRIYA_TRACES = (
    "first test print off the new printer",
    "is the workshop open on Sunday",
    "do we still have the blue filament",
    "building a fume extractor",
    "prefers metric screws",
    "to wave hello",
    "Remind Priya to order",
    "Pree",
    "Priya K",
)
UNRELATED = "a turn where only Tobias speaks"


def text_columns() -> Iterable[tuple[type[models.Model], models.Field]]:
    for model in apps.get_models(include_auto_created=True):
        if model._meta.proxy or not model._meta.managed:
            continue
        for field in model._meta.concrete_fields:
            if isinstance(field, models.CharField | models.TextField | models.JSONField):
                yield model, field


def traces(needle: str) -> set[str]:
    """Every `model.column` holding ``needle`` (JSON columns cast to text)."""
    found = set()
    for model, field in text_columns():
        rows = model._default_manager.all()
        if isinstance(field, models.JSONField):
            rows = rows.annotate(_as_text=Cast(field.name, models.TextField()))
            hit = rows.filter(_as_text__icontains=needle).exists()
        else:
            hit = rows.filter(**{f"{field.name}__icontains": needle}).exists()
        if hit:
            found.add(f"{model._meta.label}.{field.name}")
    return found


def test_forget_user_leaves_no_trace_in_any_text_column(world: World) -> None:
    VoiceTranscript.objects.create(
        message_disc_id=VOICE["id"],
        attachment_disc_id=VOICE["attachments"][0]["id"],
        transcript="tomori, do we still have the blue filament from last week",
        cached_at=timezone.now(),
    )
    unrelated = PromptRecord.objects.create(
        server=world.server_b,
        channel_disc_id="4400",
        persona_nickname="Tomori",
        created_at=timezone.now(),
        context_items=[{"role": "user", "tag": "dialogue_history", "text": UNRELATED}],
        subject_user_ids=[TOBIAS],
    )
    before = {needle: traces(needle) for needle in PRIYA_TRACES}
    # The search can see them: in live rows, and in the records and snapshots of both servers.
    caption = "first test print off the new printer"
    assert {"chatcontext.PromptRecord.snapshot", "chatcontext.PromptRecord.context_items"} <= before[caption]
    assert "chatcontext.VoiceTranscript.transcript" in before["do we still have the blue filament"]
    assert "personas.PersonalMemory.content" in before["prefers metric screws"]
    assert "personas.Reminder.reminder_purpose" in before["Remind Priya to order"]
    assert "personas.DiscordUser.user_nickname" in before["Pree"]
    assert "personas.ServerMember.display_name" in before["Priya K"]
    servers = set(PromptRecord.objects.filter(snapshot__icontains=caption).values_list("server", flat=True))
    assert servers == {world.server_a.pk, world.server_b.pk}

    actions.forget_user(PRIYA)

    assert {needle: traces(needle) for needle in PRIYA_TRACES} == {needle: set() for needle in PRIYA_TRACES}
    # The user row stays (with its privacy level) and unrelated records are kept.
    assert DiscordUser.objects.filter(user_disc_id=PRIYA).exists()
    assert list(PromptRecord.objects.values_list("pk", flat=True)) == [unrelated.pk]
    assert traces(UNRELATED) == {"chatcontext.PromptRecord.context_items"}
