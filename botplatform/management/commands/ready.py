"""``manage.py ready``: what ``/readyz`` answers, for processes without a web server (the Celery worker
and beat check it before they start: ``bin/tomori``)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from botplatform.health import readiness


class Command(BaseCommand):
    help = (
        "Exit 0 when the database answers, every migration is applied and Redis (when REDIS_URL is set) "
        "answers; otherwise print what is not ready in one line and exit 2."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        _, problem = readiness()
        if problem:
            raise CommandError(problem, returncode=2)
        self.stdout.write("ready")
