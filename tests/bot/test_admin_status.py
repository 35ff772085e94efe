"""The admin's Discord bot page and the connection tests (issue 27 items 4 and 5): moderators see
whether the bot is up, superusers also what went wrong; only superusers test a model connection."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from html import unescape

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from bot.discord.status import SILENT_AFTER, BotStatus, report, report_restart
from personas.admin.servers import ServerAdmin
from personas.models import Server, ServerModerator, ServerSettings
from tests.bot.fake_llm import FakeLLMServer, ThreadedFakeLLMServer

pytestmark = pytest.mark.django_db

STATUS = reverse("admin:bot_botstatus_changelist")
SERVERS = reverse("admin:personas_server_changelist")
PLATFORM_TEST = reverse("admin:bot_botstatus_test_platform")


@pytest.fixture
def server() -> Server:
    return Server.objects.create(server_disc_id="4242", name="Night Owls")


@pytest.fixture
def root() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", "root@example.com", "pw"))
    return client


@pytest.fixture
def moderator(server: Server) -> Client:
    account = get_user_model().objects.create_user("alice", password="pw", is_staff=True)
    ServerModerator.objects.create(server=server, user=account)
    client = Client()
    client.force_login(account)
    return client


@pytest.fixture
def keepalive_server() -> Iterator[FakeLLMServer]:
    with ThreadedFakeLLMServer() as llm:
        yield llm


def page(client: Client, url: str = STATUS) -> str:
    response = client.get(url)
    assert response.status_code == 200
    return unescape(response.content.decode())


def test_moderators_see_the_state_and_superusers_the_error_too(root, moderator):
    report(BotStatus.State.FAILED, last_error="Discord refused DISCORD_TOKEN: copy it again", pid=4711)
    report_restart(2, 4.0)

    for_root, for_moderator = page(root), page(moderator)

    assert "restarting" in for_root and "restarting" in for_moderator
    assert "Discord refused DISCORD_TOKEN: copy it again (exited with status 2; restarting in 4 s)" in for_root
    assert "4711" in for_root
    assert "Discord refused" not in for_moderator and "4711" not in for_moderator
    assert "Test the platform's model connection" in for_root
    assert "Test the platform's model connection" not in for_moderator


def test_a_row_nobody_refreshed_says_the_bot_went_silent(root):
    report(BotStatus.State.CONNECTED, shards={"0": {"connected": True, "latency_ms": 40}})
    assert "connected" in page(root) and "1 of 1" in page(root) and "0: 40 ms" in page(root)

    BotStatus.objects.update(updated_at=timezone.now() - SILENT_AFTER - timedelta(seconds=1))
    assert "silent since" in page(root)


def test_a_superuser_tests_the_platform_endpoint_and_reads_the_answer(root, settings, keepalive_server):
    settings.LLM_PROVIDER, settings.LLM_BASE_URL, settings.LLM_MODEL = "", keepalive_server.base_url, "ok"

    response = root.post(PLATFORM_TEST)

    assert response.status_code == 302
    [message] = [str(m) for m in get_messages(response.wsgi_request)]
    assert message.startswith("The platform's endpoint (ok): ok answered in ")
    assert message.endswith(
        f"ms: {keepalive_server.reply_text} (no context window reported; the setting's "
        f"{settings.LLM_CONTEXT_WINDOW} tokens apply)"
    )
    assert len(keepalive_server.requests) == 1 and "tools" not in keepalive_server.requests[0]


def test_the_connection_test_shows_the_window_the_server_reports(root, server, settings, keepalive_server):
    settings.LLM_CONTEXT_WINDOW = 8192
    ServerSettings.objects.filter(server=server).update(llm_base_url=keepalive_server.base_url, llm_model="ok")
    keepalive_server.n_ctx = 4096

    response = root.post(SERVERS, {"action": "test_model_connection", "_selected_action": [server.pk]})

    [message] = [str(m) for m in get_messages(response.wsgi_request)]
    assert message.endswith("(reports a context window of 4096 tokens; the budget uses 4096)")
    keepalive_server.n_ctx = 32768  # a larger window than the setting does not lift it; asked again, not remembered
    response = root.post(SERVERS, {"action": "test_model_connection", "_selected_action": [server.pk]})
    message = [str(m) for m in get_messages(response.wsgi_request)][-1]
    assert message.endswith("(reports a context window of 32768 tokens; the budget uses 8192)")


def test_a_missing_model_is_shown_in_the_providers_words(root, server, keepalive_server):
    ServerSettings.objects.filter(server=server).update(
        llm_provider="openai", llm_base_url=keepalive_server.base_url, llm_model="gone"
    )

    response = root.post(SERVERS, {"action": "test_model_connection", "_selected_action": [server.pk]})

    [message] = [str(m) for m in get_messages(response.wsgi_request)]
    assert message == "Night Owls (its own endpoint): provider returned HTTP 404: The model `gone` does not exist"


def test_moderators_cannot_test_a_connection(moderator, server, keepalive_server):
    assert moderator.post(PLATFORM_TEST).status_code == 403
    assert 'value="test_model_connection"' not in page(moderator, SERVERS)
    moderator.post(SERVERS, {"action": "test_model_connection", "_selected_action": [server.pk]})
    assert keepalive_server.requests == []


def test_the_connection_test_comes_with_the_bots_server_admin_not_from_a_registry_filled_at_start_up(rf):
    request = rf.get(SERVERS)
    request.user = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    assert "test_model_connection" in admin.site.get_model_admin(Server).get_actions(request)
    # personas' own server admin offers no action of an app built on it, whatever was imported.
    assert "test_model_connection" not in ServerAdmin(Server, admin.AdminSite()).get_actions(request)
