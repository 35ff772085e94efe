"""Admin for moderators' decisions about users: the personalization blacklist and persona blocks."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import HttpRequest
from django.utils import timezone

from personas import actions
from personas.admin.common import PersonaOfServerForm, adopt
from personas.admin.history import AuditedAdmin, admin_actor
from personas.admin.scoping import (
    ServerScopedAdminMixin,
)
from personas.models import (
    DiscordUser,
    PersonalizationBlacklist,
    PersonaUserBlock,
)


@admin.register(PersonalizationBlacklist)
class PersonalizationBlacklistAdmin(ServerScopedAdminMixin, AuditedAdmin):
    list_display = ["user_disc_id", "known_as", "server", "reason", "created_at"]
    list_select_related = ["server"]
    list_filter = [("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["=user_disc_id", "reason"]
    autocomplete_fields = ["server"]
    show_full_result_count = False

    def get_queryset(self, request: HttpRequest) -> QuerySet[PersonalizationBlacklist]:
        # Keyed by snowflake, not FK (data-model.md §4.7): the name comes from a subquery, not a join.
        names = DiscordUser.objects.filter(user_disc_id=OuterRef("user_disc_id"))
        return super().get_queryset(request).annotate(known_name=Subquery(names.values("username")[:1]))

    @admin.display(description="username")
    def known_as(self, obj: PersonalizationBlacklist) -> str:
        return obj.known_name or "–"  # type: ignore[attr-defined]

    def get_readonly_fields(self, request: HttpRequest, obj: PersonalizationBlacklist | None = None) -> list[str]:
        return ["server", "user_disc_id", "created_at"] if obj is not None else []

    def save_model(
        self, request: HttpRequest, obj: PersonalizationBlacklist, form: forms.ModelForm, change: bool
    ) -> None:
        adopt(obj, actions.add_to_blacklist(obj.server, obj.user_disc_id, obj.reason, actor=admin_actor(request)))

    def delete_model(self, request: HttpRequest, obj: PersonalizationBlacklist) -> None:
        actions.remove_from_blacklist(obj.server, obj.user_disc_id, actor=admin_actor(request))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[PersonalizationBlacklist]) -> None:
        for entry in queryset.select_related("server"):
            actions.remove_from_blacklist(entry.server, entry.user_disc_id, actor=admin_actor(request))


class ActiveBlockFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
        return [("active", "Active"), ("expired", "Expired")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "active":
            return queryset.filter(expires_at__gt=timezone.now())
        if self.value() == "expired":
            return queryset.filter(expires_at__lte=timezone.now())
        return queryset


@admin.register(PersonaUserBlock)
class PersonaUserBlockAdmin(ServerScopedAdminMixin, AuditedAdmin):
    form = PersonaOfServerForm
    list_display = ["user_disc_id", "persona", "server", "block_type", "expires_at", "is_active", "reason"]
    list_select_related = ["server", "persona"]
    list_filter = [ActiveBlockFilter, "block_type", ("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["=user_disc_id", "reason", "persona__persona_nickname"]
    autocomplete_fields = ["server", "persona"]
    date_hierarchy = "expires_at"
    show_full_result_count = False

    @admin.display(description="active", boolean=True)
    def is_active(self, obj: PersonaUserBlock) -> bool:
        return obj.expires_at > timezone.now()

    def save_model(self, request: HttpRequest, obj: PersonaUserBlock, form: forms.ModelForm, change: bool) -> None:
        saved = actions.block_user(
            obj.persona,
            obj.user_disc_id,
            block_type=obj.block_type,
            reason=obj.reason,
            expires_at=obj.expires_at,
            actor=admin_actor(request),
        )
        adopt(obj, saved)

    def delete_model(self, request: HttpRequest, obj: PersonaUserBlock) -> None:
        actions.unblock_user(obj, actor=admin_actor(request))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[PersonaUserBlock]) -> None:
        for block in queryset:
            actions.unblock_user(block, actor=admin_actor(request))
