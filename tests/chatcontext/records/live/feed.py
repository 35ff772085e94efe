"""The live turn feed's websocket as a moderator opens it, and the example snapshot it announces."""

from __future__ import annotations

import json
from typing import Any

from channels.testing import WebsocketCommunicator
from django.test import Client

from botplatform.asgi import application
from personas.models import Server
from tests.paths import EXAMPLE

SNAPSHOT = EXAMPLE


SNAPSHOT_SERVER = json.loads(SNAPSHOT.read_text(encoding="utf-8"))["server"]


SUBPROCESS_SECONDS = 120


def session_cookie(user) -> bytes:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def socket(path: str, w: dict[str, Any], who: str) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://testserver"), (b"cookie", w["cookies"][who])]
    return WebsocketCommunicator(application, path, headers=headers)


def turns_path(server: Server) -> str:
    return f"/ws/servers/{server.pk}/turns/"
