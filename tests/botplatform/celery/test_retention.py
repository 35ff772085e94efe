"""Retention (each server keeps prompt records younger than its retention_days) and the forget-me task."""

from __future__ import annotations

import logging
from datetime import timedelta

from chatcontext.models import PromptRecord
from community.retention import prune_prompt_records
from community.tasks import forget_user
from personas.models import DiscordUser, PersonalMemory, Reminder, Server, ServerSettings
from tests.botplatform.celery.conftest import NOW

AGES_DAYS = (1, 10, 40)


def record(server: Server, age_days: int) -> PromptRecord:
    return PromptRecord.objects.create(
        server=server,
        channel_disc_id="600000000000000001",
        channel_name="general",
        persona_nickname="Tomori",
        created_at=NOW - timedelta(days=age_days),
        reply_text="a reply that must not be logged",
    )


def test_retention_prunes_only_records_older_than_each_servers_retention(db, caplog):
    week = Server.objects.create(server_disc_id="500000000000000007", name="Weekly Guild")
    ServerSettings.objects.filter(server=week).update(retention_days=7)
    month = Server.objects.create(server_disc_id="500000000000000030", name="Monthly Guild")
    unset = Server.objects.create(server_disc_id="500000000000000099", name="No Settings Guild")
    ServerSettings.objects.filter(server=unset).delete()  # falls back to the 30-day default
    for server in (week, month, unset):
        for age in AGES_DAYS:
            record(server, age)

    with caplog.at_level(logging.INFO, logger="community.retention"):
        report = prune_prompt_records(now=NOW, batch_size=1)

    kept = {
        server.server_disc_id: sorted(
            (NOW - created).days
            for created in PromptRecord.objects.filter(server=server).values_list("created_at", flat=True)
        )
        for server in (week, month, unset)
    }
    assert kept == {
        "500000000000000007": [1],
        "500000000000000030": [1, 10],
        "500000000000000099": [1, 10],
    }
    assert (report.deleted, report.batches) == (4, 4)
    assert report.deleted_by_retention_days == {7: 2, 30: 2}
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "4 prompt records deleted" in logged
    for secret in ("500000000000000007", "Weekly Guild", "general", "must not be logged"):
        assert secret not in logged


def test_retention_with_nothing_old_deletes_nothing(db):
    server = Server.objects.create(server_disc_id="500000000000000001")
    fresh = record(server, 1)

    report = prune_prompt_records(now=NOW)

    assert (report.deleted, report.batches) == (0, 0)
    assert list(PromptRecord.objects.values_list("pk", flat=True)) == [fresh.pk]


def test_forget_me_runs_as_a_task_and_a_second_delivery_finds_nothing(make_reminder):
    user = DiscordUser.objects.create(user_disc_id="111111111111111111", username="ann")
    PersonalMemory.objects.create(user=user, persona_lineage_id=0, content="likes tea")
    make_reminder(user_discord_id=user.user_disc_id)

    first = forget_user.delay(user.user_disc_id).get()
    second = forget_user.delay(user.user_disc_id).get()

    assert (first["personal_memories"], first["reminders"]) == (1, 1)
    assert (second["personal_memories"], second["reminders"]) == (0, 0)
    assert not PersonalMemory.objects.exists()
    assert not Reminder.objects.exists()
