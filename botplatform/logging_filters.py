"""Log hygiene: ids never reach a log line.

Django's request logger writes the path of every 4xx/5xx ("Not Found: /api/v1/servers/1/users/123…"),
and such paths carry Discord ids. The filter masks numeric path segments the way `serve`'s access log
does, on the message and on its arguments. A path that carries a credential (a new moderator's
set-password link, ``personas.access.set_password_link``) loses everything after its prefix.
"""

from __future__ import annotations

import logging
import re

_ID_SEGMENT = re.compile(r"(?<=/)\d+(?=/|$|\?)")
_SECRET_PATH = re.compile(r"(?<=/account/set-password/)\S+")


def mask_ids(text: str) -> str:
    if "/" not in text:
        return text
    return _ID_SEGMENT.sub("<id>", _SECRET_PATH.sub("<secret>", text.split("?", 1)[0]))


class MaskPathIds(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = mask_ids(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(mask_ids(a) if isinstance(a, str) else a for a in record.args)
        return True
