"""The bot's admin pages: the *Discord bot* status page (with the platform endpoint's connection
test) and the servers' *Test model connection* action. Connection tests are superusers' only:
they send a request with the operator's key and show what the provider answered."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from bot.conversation.providers import (
    ConnectionCheck,
    check_connection,
    platform_endpoint,
    provider_config,
    server_endpoint,
)
from bot.discord.status import BotStatus
from community.admin.servers import CommunityServerAdmin
from personas.admin.scoping import request_principal
from personas.models import Server

# Each test can take a provider's timeout: a bulk action tests this many servers at most.
MAX_SERVERS_TESTED = 5


def _show(modeladmin: admin.ModelAdmin[Any], request: HttpRequest, label: str, check: ConnectionCheck) -> None:
    modeladmin.message_user(request, f"{label}: {check.detail}", messages.SUCCESS if check.ok else messages.ERROR)


@admin.action(description="Test the model connection (one small request)")
def test_model_connection(modeladmin: admin.ModelAdmin[Any], request: HttpRequest, queryset: QuerySet[Server]) -> None:
    servers = list(queryset.select_related("settings")[: MAX_SERVERS_TESTED + 1])
    for server in servers[:MAX_SERVERS_TESTED]:
        endpoint = server_endpoint(server.settings)
        check = async_to_sync(check_connection)(provider_config(server.settings))
        _show(modeladmin, request, f"{server.name} ({endpoint.source})", check)
    if len(servers) > MAX_SERVERS_TESTED:
        modeladmin.message_user(request, f"Only the first {MAX_SERVERS_TESTED} servers were tested.", messages.WARNING)


class ServerWithConnectionTestAdmin(CommunityServerAdmin):
    """The server pages, with the bot's connection test among the superusers' actions."""

    superuser_actions = (*CommunityServerAdmin.superuser_actions, test_model_connection)


# community's admin module registered its server admin first (community comes before bot in INSTALLED_APPS).
admin.site.unregister(Server)
admin.site.register(Server, ServerWithConnectionTestAdmin)


def _superuser(request: HttpRequest) -> bool:
    who = request_principal(request)
    return who is not None and who.server_ids is None


@admin.register(BotStatus)
class BotStatusAdmin(admin.ModelAdmin):
    """Every moderator sees whether the bot is up; the last error, process and shard latencies are
    superusers' (they name the machine's processes and what Discord or the network said)."""

    change_list_template = "admin/bot/botstatus/change_list.html"
    list_display_links = None

    def get_list_display(self, request: HttpRequest) -> list[Any]:
        shown: list[Any] = ["process", "shown_state", "shards_connected", "updated_at"]
        if _superuser(request):
            shown += ["restarts", "pid", "shard_latencies", "last_error"]
        return shown

    @admin.display(description="state")
    def shown_state(self, obj: BotStatus) -> str:
        return f"silent since {obj.updated_at:%Y-%m-%d %H:%M} UTC" if obj.silent else obj.get_state_display()

    @admin.display(description="shards connected")
    def shards_connected(self, obj: BotStatus) -> str:
        return f"{sum(1 for s in obj.shards.values() if s.get('connected'))} of {len(obj.shards)}"

    @admin.display(description="latency per shard")
    def shard_latencies(self, obj: BotStatus) -> str:
        return ", ".join(f"{shard}: {s.get('latency_ms') or '–'} ms" for shard, s in sorted(obj.shards.items()))

    def has_module_permission(self, request: HttpRequest) -> bool:
        who = request_principal(request)
        return who is not None and (who.server_ids is None or bool(who.server_ids))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        context = {**(extra_context or {}), "can_test_platform": _superuser(request)}
        return super().changelist_view(request, context)

    def get_urls(self) -> list[Any]:
        test = self.admin_site.admin_view(require_POST(self.test_platform_endpoint))
        return [path("test-platform-endpoint/", test, name="bot_botstatus_test_platform"), *super().get_urls()]

    def test_platform_endpoint(self, request: HttpRequest) -> HttpResponse:
        if not _superuser(request):
            raise PermissionDenied
        check = async_to_sync(check_connection)(provider_config(None))
        _show(self, request, f"The platform's endpoint ({platform_endpoint().model or 'default model'})", check)
        return HttpResponseRedirect(reverse("admin:bot_botstatus_changelist"))
