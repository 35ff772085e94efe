"""The periodic tasks of botplatform/celery.py as django_celery_beat rows, editable in the admin.

Idempotent: rows are matched by task name and never overwritten, so an admin's edits survive a
re-run; reversing removes only these two tasks.
"""

from django.db import migrations
from django.utils import timezone

SCHEDULES = [
    # (periodic task name, task, every, period, description)
    (
        "fire due reminders",
        "personas.tasks.fire_due_reminders",
        30,
        "seconds",
        "Delivers each due reminder once; repeating reminders are rescheduled (data-model.md §2.13).",
    ),
    (
        "prune prompt records",
        "personas.tasks.prune_prompt_records",
        1,
        "days",
        "Deletes prompt records older than each server's retention_days.",
    ),
]


def create_schedules(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTasks = apps.get_model("django_celery_beat", "PeriodicTasks")
    for name, task, every, period, description in SCHEDULES:
        if PeriodicTask.objects.filter(name=name).exists():
            continue
        interval = IntervalSchedule.objects.filter(every=every, period=period).first()
        if interval is None:
            interval = IntervalSchedule.objects.create(every=every, period=period)
        PeriodicTask.objects.create(name=name, task=task, interval=interval, description=description, enabled=True)
    # The beat scheduler reloads its schedule when this change marker moves.
    PeriodicTasks.objects.update_or_create(ident=1, defaults={"last_update": timezone.now()})


def remove_schedules(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name__in=[s[0] for s in SCHEDULES]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("personas", "0003_access"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_schedules, remove_schedules)]
