#!/usr/bin/env python
import os
import sys

# Exit status of a command refused for its configuration or an unreachable service (argparse's own).
USAGE_ERROR = 2


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "botplatform.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line
    from django.db.utils import OperationalError

    # A wrong variable or a database that does not answer is the operator's to fix: one line, no traceback.
    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        print(f"Configuration error: {exc}", file=sys.stderr)
        sys.exit(USAGE_ERROR)
    except OperationalError as exc:
        first_line = (str(exc).strip().splitlines() or ["no detail"])[0]
        print(f"Database error: {first_line}", file=sys.stderr)
        sys.exit(USAGE_ERROR)


if __name__ == "__main__":
    main()
