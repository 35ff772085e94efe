"""Becoming a moderator is one step (issue 16 item 2): ``manage.py add_moderator USER SERVER`` and the
admin's *Server moderators → Add* (``personas.actions.add_moderator``).

alice already moderates Zephyr Hall; bob has no account yet; charlie has an account without staff
status; root is the superuser. A moderator made here gets staff status and no Django model
permission or group: the moderator row alone decides what they see (least privilege).
"""

from __future__ import annotations

import logging
import re
from html import unescape
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from botplatform.logging_filters import mask_ids
from botplatform.management.commands.serve import access_log
from personas.models import Server, ServerModerator

pytestmark = pytest.mark.django_db

LINK = re.compile(r"https?://\S+/account/set-password/[^/\s]+/[^/\s<]+/")
NEW_PASSWORD = "owls-at-midnight-42"


@pytest.fixture
def servers() -> dict[str, Any]:
    User = get_user_model()
    zephyr = Server.objects.create(server_disc_id="710000000000000001", name="Zephyr Hall")
    quokka = Server.objects.create(server_disc_id="720000000000000002", name="Quokka Hall")
    alice = User.objects.create_user("alice", password="pw-alice", is_staff=True)
    ServerModerator.objects.create(server=zephyr, user=alice)
    User.objects.create_user("charlie", password="pw-charlie")
    User.objects.create_superuser("root", password="pw-root")
    return {"zephyr": zephyr, "quokka": quokka, "alice": alice}


def run(*args: str) -> str:
    out = StringIO()
    call_command("add_moderator", *args, stdout=out)
    return out.getvalue()


def account(name: str) -> Any:
    return get_user_model().objects.get(username=name)


def choose_password(link: str) -> Client:
    """Follow a set-password link as its recipient would, and sign in with the new password."""
    client = Client()
    form = client.get(link, follow=True)
    assert form.status_code == 200 and form.context["validlink"], "the link was refused"
    done = client.post(form.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done.status_code == 302 and done["Location"] == reverse("set_password_done")
    assert reverse("admin:login") in client.get(done["Location"]).content.decode()
    return client


def test_a_new_account_is_created_as_staff_with_no_model_permissions(servers: dict[str, Any]) -> None:
    out = run("bob", "Quokka Hall")
    bob = account("bob")
    assert bob.is_staff and bob.is_active and not bob.is_superuser
    assert not bob.user_permissions.exists() and not bob.groups.exists()
    assert not bob.has_usable_password()
    assert list(ServerModerator.objects.filter(user=bob).values_list("server", flat=True)) == [servers["quokka"].pk]
    assert "Created the staff account 'bob'" in out and "'bob' now moderates Quokka Hall" in out

    link = LINK.search(out)
    assert link is not None, out
    choose_password(link.group(0))
    client = Client()
    assert client.login(username="bob", password=NEW_PASSWORD)
    # What the moderator row gives, and nothing else.
    assert client.get(reverse("admin:personas_server_change", args=[servers["quokka"].pk])).status_code == 200
    assert client.get(reverse("admin:personas_server_change", args=[servers["zephyr"].pk])).status_code == 404
    assert client.get(reverse("admin:auth_user_changelist")).status_code == 403
    assert client.get(reverse("admin:django_celery_beat_periodictask_changelist")).status_code == 403
    assert not Permission.objects.filter(user=account("bob")).exists()
    # The link worked once: the password it set is part of what the token was made of.
    assert not Client().get(link.group(0), follow=True).context["validlink"]


def test_running_it_again_changes_nothing_and_names_the_server_any_way(servers: dict[str, Any]) -> None:
    quokka = servers["quokka"]
    run("bob", "quokka hall")
    before = list(get_user_model().objects.values_list("pk", "username", "password", "is_staff"))
    for reference in (quokka.server_disc_id, str(quokka.pk), "QUOKKA HALL"):
        out = run("bob", reference)
        assert "'bob' already moderates Quokka Hall" in out and "Created" not in out
    assert ServerModerator.objects.filter(user=account("bob")).count() == 1
    assert list(get_user_model().objects.values_list("pk", "username", "password", "is_staff")) == before


def test_an_existing_account_gets_staff_status_and_keeps_its_password(servers: dict[str, Any]) -> None:
    out = run("charlie", "Zephyr Hall")
    charlie = account("charlie")
    assert charlie.is_staff and charlie.check_password("pw-charlie")
    assert "Gave the existing account 'charlie' staff status." in out
    assert LINK.search(out) is None  # they sign in with the password they have
    out = run("alice", servers["quokka"].server_disc_id)
    assert set(ServerModerator.objects.filter(user=servers["alice"]).values_list("server__name", flat=True)) == {
        "Zephyr Hall",
        "Quokka Hall",
    }
    assert "staff status" not in out and LINK.search(out) is None


@pytest.mark.parametrize(
    ("username", "server", "message"),
    [
        ("bob", "Nowhere Hall", "No server has the Discord id, id or name 'Nowhere Hall'. Servers: Quokka Hall"),
        ("bob", "Twin Hall", "'Twin Hall' matches more than one server"),
        ("bob", "  ", "SERVER is empty"),
        ("bob the owl", "Quokka Hall", "'bob the owl' is not a valid account name"),
        ("x" * 151, "Quokka Hall", "is not a valid account name"),
        ("dormant", "Quokka Hall", "The account 'dormant' is deactivated"),
    ],
)
def test_bad_input_is_one_clear_line_and_writes_nothing(
    servers: dict[str, Any], username: str, server: str, message: str
) -> None:
    Server.objects.create(server_disc_id="730000000000000003", name="Twin Hall")
    Server.objects.create(server_disc_id="740000000000000004", name="twin hall")
    get_user_model().objects.create_user("dormant", is_active=False)
    accounts, rows = get_user_model().objects.count(), ServerModerator.objects.count()
    with pytest.raises(CommandError) as refused:
        run(username, server)
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)
    assert (get_user_model().objects.count(), ServerModerator.objects.count()) == (accounts, rows)


def test_help_says_how_to_name_the_server(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        call_command("add_moderator", "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert "Discord id" in text and "created when missing" in text and "No Django model permissions" in text


def superuser() -> Client:
    client = Client()
    client.force_login(account("root"))
    return client


def test_the_superuser_adds_a_new_moderator_in_one_step_in_the_admin(servers: dict[str, Any]) -> None:
    quokka = servers["quokka"]
    add = reverse("admin:personas_servermoderator_add")
    form = superuser().get(add, {"server": quokka.pk})
    assert form.status_code == 200
    assert list(form.context["adminform"].form.fields) == ["username", "server"]
    assert form.context["adminform"].form.initial["server"] == str(quokka.pk)

    response = superuser().post(add, {"username": "bob", "server": quokka.pk}, follow=True)
    page = unescape(response.content.decode())
    assert response.status_code == 200
    assert "Created the staff account bob." in page
    link = LINK.search(page)
    assert link is not None, page
    bob = account("bob")
    assert bob.is_staff and not bob.user_permissions.exists()
    assert ServerModerator.objects.filter(user=bob, server=quokka).exists()
    choose_password(link.group(0))

    again = unescape(superuser().post(add, {"username": "bob", "server": quokka.pk}, follow=True).content.decode())
    assert "Nothing changed: bob already moderated Quokka Hall." in again and "added successfully" not in again
    assert ServerModerator.objects.filter(user=bob).count() == 1 and LINK.search(again) is None


def test_the_admin_form_refuses_what_the_command_refuses(servers: dict[str, Any]) -> None:
    get_user_model().objects.create_user("dormant", is_active=False)
    add = reverse("admin:personas_servermoderator_add")
    for username, message in (("bob the owl", "is not a valid account name"), ("dormant", "is deactivated")):
        response = superuser().post(add, {"username": username, "server": servers["quokka"].pk})
        assert response.status_code == 200
        assert message in unescape(response.content.decode())
    assert not ServerModerator.objects.filter(server=servers["quokka"]).exists()


def test_the_server_page_lists_its_moderators_and_links_the_add_form_for_superusers(servers: dict[str, Any]) -> None:
    zephyr = servers["zephyr"]
    url = reverse("admin:personas_server_change", args=[zephyr.pk])
    add_link = f"{reverse('admin:personas_servermoderator_add')}?server={zephyr.pk}"
    root_page = superuser().get(url).content.decode()
    assert "alice" in root_page and add_link in unescape(root_page)
    alice = Client()
    alice.force_login(servers["alice"])
    alice_page = alice.get(url).content.decode()
    assert "alice" in alice_page and add_link not in unescape(alice_page)


def test_a_set_password_link_never_reaches_a_log_line() -> None:
    path = "/account/set-password/MTI/cz3x1k-0123456789abcdef0123456789abcdef/"
    assert mask_ids(f"Not Found: {path}") == "Not Found: /account/set-password/<secret>"
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    serve_logger = logging.getLogger("botplatform.serve")
    handler = Keep()
    serve_logger.addHandler(handler)
    serve_logger.setLevel(logging.INFO)
    try:
        access_log(None, "complete", {"method": "GET", "path": path, "status": 302})
        access_log(None, "complete", {"method": "GET", "path": "/admin/personas/server/12/change/", "status": 200})
    finally:
        serve_logger.removeHandler(handler)
    assert lines == ["GET /account/set-password/<secret> 302", "GET /admin/personas/server/<id>/change/ 200"]
