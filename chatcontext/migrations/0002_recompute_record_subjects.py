"""Recompute ``PromptRecord.subject_user_ids`` with the rule of ``chatcontext.records.subject_user_ids``.

Records stored before it listed everyone the snapshot named (every member and user row), so
forgetting a member who never posted deleted the whole server's history. The rule reads only the
stored prompt and snapshot, so old records get the answer a new one would. Reversing keeps the new
lists: the old ones made forget-me delete records that are not about the user.
"""

from django.db import migrations

BATCH = 500


def recompute(apps, schema_editor):
    from chatcontext.records.store import subject_user_ids

    PromptRecord = apps.get_model("chatcontext", "PromptRecord")
    rows = PromptRecord.objects.order_by("pk").only(
        "pk", "simplified_messages", "participant_target_index", "snapshot", "subject_user_ids"
    )
    changed = []
    for record in rows.iterator(chunk_size=BATCH):
        snapshot = record.snapshot if isinstance(record.snapshot, dict) else {}
        bot = snapshot.get("bot_user")
        output = {
            "simplified_messages": record.simplified_messages,
            "participant_target_index": record.participant_target_index,
        }
        subjects = subject_user_ids(output, snapshot, bot_id=str(bot["id"]) if isinstance(bot, dict) else None)
        if subjects != record.subject_user_ids:
            record.subject_user_ids = subjects
            changed.append(record)
        if len(changed) >= BATCH:
            PromptRecord.objects.bulk_update(changed, ["subject_user_ids"])
            changed = []
    PromptRecord.objects.bulk_update(changed, ["subject_user_ids"])


class Migration(migrations.Migration):
    dependencies = [("chatcontext", "0001_initial")]

    operations = [migrations.RunPython(recompute, migrations.RunPython.noop)]
