"""Odd HTTP requests get a clean 4xx (issue 26 item 14): a path that climbs out of /static/ (a 500
from Django's static handler), and a multipart body sent to the API with a signed-in session (the
CSRF check reads it as a form first: a 500), which now answers in the API's ``{"detail": …}``."""

from __future__ import annotations

from typing import Any

import pytest
from channels.testing import HttpCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from botplatform.asgi import application
from botplatform.static_files import StaticFilesHandler
from personas.models import Server, ServerModerator


@pytest.mark.parametrize("path", ["/static/../botplatform/settings.py", "/static/admin/../../../../etc/passwd"])
async def test_a_static_path_out_of_the_static_folders_is_a_400(path: str) -> None:
    response = await HttpCommunicator(StaticFilesHandler(application), "GET", path).get_response(timeout=10)
    assert response["status"] == 400
    assert b"SECRET_KEY" not in response["body"] and b"root:" not in response["body"]


async def test_static_files_are_still_served() -> None:
    communicator = HttpCommunicator(StaticFilesHandler(application), "GET", "/static/admin/css/base.css")
    await communicator.send_input({"type": "http.request", "body": b""})
    start = await communicator.receive_output(timeout=10)  # a file streams: its start is enough
    assert (start["type"], start["status"]) == ("http.response.start", 200)
    await communicator.wait(timeout=10)


@pytest.fixture
def session(db: Any) -> dict[str, Any]:
    server = Server.objects.create(server_disc_id="123456789012345678", name="Night Owls")
    user = get_user_model().objects.create_user("alice", is_staff=True)
    ServerModerator.objects.create(server=server, user=user)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    client.get("/admin/")
    return {
        "client": client,
        "path": f"/api/v1/servers/{server.pk}/blacklist",
        "csrf": client.cookies["csrftoken"].value,
    }


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("multipart/form-data; boundary=xyz", b'--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--xyz--'),
        ("multipart/form-data", b"no boundary"),
        ("multipart/form-data; boundary=xyz", b"--xyz\r\nbroken"),
    ],
)
def test_a_multipart_body_with_a_session_is_a_400_in_the_apis_shape(
    session: dict[str, Any], content_type: str, body: bytes
) -> None:
    response = session["client"].generic(
        "POST", session["path"], body, content_type=content_type, HTTP_X_CSRFTOKEN=session["csrf"]
    )
    assert response.status_code == 400
    assert response.json() == {"detail": "Request body must be JSON (application/json)"}
