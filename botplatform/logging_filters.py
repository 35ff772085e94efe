"""Log hygiene: ids, message text and SQL never reach a log line.

Django's request logger writes the path of every 4xx/5xx ("Not Found: /api/v1/servers/1/users/123…"),
and so does ``django.security.csrf`` ("Forbidden (…): /admin/…/123…/change/"); such paths carry Discord
ids. The filter masks numeric path segments the way `serve`'s access log does, on the message and on
its arguments. A path that carries a credential (a new moderator's set-password link,
``personas.access.set_password_link``) loses everything after its prefix.

A database error's message quotes the SQL and its values (PostgreSQL's ``DETAIL: Key (content)=(…)``,
``LINE 1: …``; SQLite's "no such table: …"), and those values are members' words. Wherever such an
error reaches a record, as an argument or as the exception of ``logger.exception`` or of Django's
"Internal Server Error", it is logged by its class and its traceback's frames only.

The filter sits on the one console handler every logger writes to, so no logger is left out.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import traceback

import psycopg
from django.db import Error as DjangoDatabaseError

_ID_SEGMENT = re.compile(r"(?<=/)\d+(?=/|$|\?)")
_SECRET_PATH = re.compile(r"(?<=/account/set-password/)\S+")
DATABASE_ERRORS = (DjangoDatabaseError, psycopg.Error, sqlite3.Error)
WITHHELD = "(detail not logged: a database error quotes SQL and values)"


def mask_ids(text: str) -> str:
    if "/" not in text:
        return text
    return _ID_SEGMENT.sub("<id>", _SECRET_PATH.sub("<secret>", text.split("?", 1)[0]))


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or during, outermost first."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def redacted_traceback(exc: BaseException) -> str:
    """Python's traceback of ``exc``, with the message of every database error in its chain withheld."""
    blocks = []
    for link in reversed(_chain(exc)):
        name = f"{type(link).__module__}.{type(link).__qualname__}"
        message = WITHHELD if isinstance(link, DATABASE_ERRORS) else str(link)
        frames = "".join(traceback.format_tb(link.__traceback__))
        blocks.append(f"Traceback (most recent call last):\n{frames}{name}: {message}")
    return "\n\nThe above exception led to the following one:\n\n".join(blocks)


def _mask_argument(value: object) -> object:
    if isinstance(value, str):
        return mask_ids(value)
    if isinstance(value, DATABASE_ERRORS):
        return f"{type(value).__name__} {WITHHELD}"
    return value


class MaskPathIds(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = mask_ids(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_mask_argument(a) for a in record.args)
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None and any(isinstance(link, DATABASE_ERRORS) for link in _chain(exc)):
            # The formatter prints exc_text when it is set, instead of formatting exc_info itself.
            record.exc_text = redacted_traceback(exc)
        return True
