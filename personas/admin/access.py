"""Admin for who may reach a server: moderators and API tokens."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from personas import actions
from personas.access import set_password_link, set_password_link_lifetime
from personas.admin.common import adopt
from personas.admin.history import RecordedAdmin, admin_actor
from personas.admin.scoping import (
    ServerScopedAdminMixin,
)
from personas.models import (
    ApiToken,
    ServerModerator,
)


class ServerModeratorForm(forms.ModelForm):
    def clean_user(self) -> Any:
        user = self.cleaned_data["user"]
        if not user.is_staff:
            raise ValidationError("Only staff accounts can sign in to the admin; mark the account as staff first.")
        return user


class AddModeratorForm(forms.ModelForm):
    """Adding a moderator is one step (issue 16): a username, new or existing, and a server."""

    username = forms.CharField(
        max_length=150,
        help_text=(
            "The account they sign in with. When there is none by this name it is created, and you get a "
            "link to send them where they choose their password. Staff status is given; no other permission."
        ),
    )

    class Meta:
        model = ServerModerator
        fields = ["username", "server"]

    def clean_username(self) -> str:
        try:
            return actions.check_moderator_username(self.cleaned_data["username"])
        except actions.ActionError as exc:
            raise ValidationError(str(exc)) from exc


@admin.register(ServerModerator)
class ServerModeratorAdmin(ServerScopedAdminMixin, RecordedAdmin):
    """Who moderates which server (issue 5). Moderators see the rows of their own servers; only
    superusers grant or withdraw moderation, so nobody widens their own reach. Adding one takes a
    username and a server (``actions.add_moderator``: the account is created and made staff as needed)."""

    form = ServerModeratorForm
    list_display = ["user", "server", "created_at"]
    list_select_related = ["user", "server"]
    list_filter = [("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["user__username", "server__name", "=server__server_disc_id"]
    autocomplete_fields = ["server", "user"]
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return bool(request.user.is_superuser)

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return bool(request.user.is_superuser)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return bool(request.user.is_superuser)

    def get_form(self, request: HttpRequest, obj: Model | None = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is None:
            kwargs["form"] = AddModeratorForm
        return super().get_form(request, obj, change, **kwargs)

    def save_model(self, request: HttpRequest, obj: ServerModerator, form: forms.ModelForm, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        grant = actions.add_moderator(form.cleaned_data["username"], obj.server, actor=admin_actor(request))
        adopt(obj, grant.moderator)
        name = grant.account.get_username()
        obj.already_moderated = not grant.added  # type: ignore[attr-defined]
        if not grant.added:
            self.message_user(request, f"Nothing changed: {name} already moderated {obj.server}.", messages.INFO)
        elif grant.created_account:
            self.message_user(request, f"Created the staff account {name}.")
        elif grant.made_staff:
            self.message_user(request, f"Gave {name} staff status so they can sign in.")
        if grant.needs_password:
            self.message_user(
                request,
                format_html(
                    "No password yet for {}: send them this link to choose one. It works once, for {} "
                    "(adding them again makes a new one): <code>{}</code>",
                    name,
                    set_password_link_lifetime(),
                    set_password_link(grant.account),
                ),
                messages.WARNING,
            )

    def response_add(self, request: HttpRequest, obj: ServerModerator, post_url_continue: str | None = None) -> Any:
        if getattr(obj, "already_moderated", False):  # not "added successfully": it was there already
            return HttpResponseRedirect(reverse("admin:personas_servermoderator_changelist"))
        return super().response_add(request, obj, post_url_continue)


class TokenStateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
        return [("active", "Active"), ("revoked", "Revoked")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "active":
            return queryset.filter(revoked_at__isnull=True)
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        return queryset


TOKEN_DETAIL_FIELDS = ["token_prefix", "token_hash", "created_by", "created_at", "last_used_at", "revoked_at"]


@admin.register(ApiToken)
class ApiTokenAdmin(ServerScopedAdminMixin, RecordedAdmin):
    """Per-server API tokens for dashboards (issue 5). Only the SHA-256 hash is stored: the raw
    token is shown once, in the message after it is created, and cannot be shown again. A token is
    revoked rather than deleted, so its prefix and last use stay on record."""

    list_display = ["name", "server", "scope", "token_prefix", "is_active", "created_by", "created_at", "last_used_at"]
    list_select_related = ["server", "created_by"]
    list_filter = [TokenStateFilter, "scope", ("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["name", "=token_prefix"]
    show_full_result_count = False
    actions = ["revoke_tokens"]

    def get_fields(self, request: HttpRequest, obj: Model | None = None) -> list[Any]:
        return ["server", "name", "scope"] if obj is None else ["server", "name", "scope", *TOKEN_DETAIL_FIELDS]

    def get_readonly_fields(self, request: HttpRequest, obj: Model | None = None) -> list[str]:
        # Once issued, a token keeps its server and scope: a different reach is a new token.
        return [] if obj is None else ["server", "scope", *TOKEN_DETAIL_FIELDS]

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return bool(request.user.is_superuser)

    @admin.display(description="active", boolean=True, ordering="revoked_at")
    def is_active(self, obj: ApiToken) -> bool:
        return obj.is_active

    def save_model(self, request: HttpRequest, obj: ApiToken, form: forms.ModelForm, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        token, raw = ApiToken.issue(obj.server, obj.name, obj.scope, created_by=request.user)
        adopt(obj, token)
        self.message_user(
            request,
            format_html("Copy this token now; it is shown only once and cannot be recovered: <code>{}</code>", raw),
            messages.WARNING,
        )

    @admin.action(description="Revoke selected tokens", permissions=["change"])
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        revoked = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {revoked} token(s).")
