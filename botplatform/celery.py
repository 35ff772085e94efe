"""The Celery application: everything that must not block a Discord turn, or happens on a clock.

Configuration comes from Django settings under the ``CELERY_`` namespace (botplatform/settings.py):
with ``REDIS_URL`` set, Redis is broker and result backend; without it tasks run eagerly
in-process so ``make run`` needs no broker (no beat, no retries across restarts, and a slow task
blocks its caller).

Periodic schedules live in the database (``django_celery_beat``'s ``DatabaseScheduler``) and are
editable in the admin; the rows are created by ``personas/migrations/0003_celery_beat_schedules``.
Run the processes with::

    celery -A botplatform worker -l info
    celery -A botplatform beat -l info
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "botplatform.settings")

app = Celery("botplatform")
app.config_from_object("django.conf:settings", namespace="CELERY")
# `tasks` modules of the installed apps, plus the voice package (chatcontext.voice.tasks), which is not an app.
app.autodiscover_tasks()
app.autodiscover_tasks(["chatcontext.voice"])
