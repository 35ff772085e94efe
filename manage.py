#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "botplatform.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        settings.INSTALLED_APPS  # noqa: B018  (loads the settings: a bad environment is one line, not a traceback)
    except ImproperlyConfigured as exc:
        sys.stderr.write(f"ImproperlyConfigured: {exc}\n")
        sys.exit(2)

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
