"""``manage.py ensure_admin``: make sure someone can log in to /admin/ after ``make run``.

The password is either the operator's (DJANGO_SUPERUSER_PASSWORD) or generated and printed exactly
once, on the run that creates the account. Only Django's hash is stored; later runs cannot print it
again and say so.
"""

from __future__ import annotations

import os
import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

DEFAULT_USERNAME = "admin"


class Command(BaseCommand):
    help = (
        "Create a superuser if needed. With DJANGO_SUPERUSER_USERNAME and DJANGO_SUPERUSER_PASSWORD set "
        "(DJANGO_SUPERUSER_EMAIL optional) that account is created once; with them unset and no superuser "
        "yet, an 'admin' account gets a generated password that is printed once and never again. "
        "Existing accounts are never changed."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        username = os.environ.get("DJANGO_SUPERUSER_USERNAME", "").strip()
        password = os.environ.get("DJANGO_SUPERUSER_PASSWORD", "")
        email = os.environ.get("DJANGO_SUPERUSER_EMAIL", "").strip()
        if password and not username:
            raise CommandError("DJANGO_SUPERUSER_PASSWORD is set but DJANGO_SUPERUSER_USERNAME is not.")
        login_url = f"{settings.PUBLIC_BASE_URL}/admin/"
        User = get_user_model()
        with transaction.atomic():
            if username:
                if User.objects.filter(username=username).exists():
                    self.stdout.write(f"Admin account '{username}' exists; log in at {login_url}")
                    return
            else:
                existing = User.objects.filter(is_superuser=True).order_by("pk").first()
                if existing is not None:
                    self.stdout.write(
                        f"An admin account exists ('{existing.get_username()}'); log in at {login_url}. "
                        "Its password was printed when it was created and cannot be shown again "
                        "(reset it with `manage.py changepassword`)."
                    )
                    return
                username = DEFAULT_USERNAME
            generated = not password
            if generated:
                password = secrets.token_urlsafe(15)
            User.objects.create_superuser(username=username, email=email or None, password=password)
        if generated:
            self.stdout.write(self.style.SUCCESS(f"Created admin account '{username}' for {login_url}"))
            self.stdout.write(f"    username: {username}")
            self.stdout.write(f"    password: {password}")
            self.stdout.write("This password is shown only this once; it is stored only as a hash.")
        else:
            self.stdout.write(
                self.style.SUCCESS(f"Created admin account '{username}' from the environment for {login_url}")
            )
