"""Per-server scoping for moderator-facing admin pages (issue 5: moderators see only their servers).

``ServerScopedAdminMixin`` goes first in a ModelAdmin's (or an inline's) bases. It narrows the
changelist and every object page to the servers the signed-in account moderates
(``personas.access.principal_for_user``: ``ServerModerator`` rows; superusers see everything), turns
per-server moderation into the view, add, change and delete permissions, limits every foreign-key
choice to the rows the related model's own admin would show, and answers 404 — not 403, not a
redirect — for an object of another server, so ids of other servers leak nothing. A form that
still names an object outside the scope (a forged post) is refused when it is saved.

Set ``server_field`` to the lookup path of the row's server, e.g. ``"server"`` or ``"persona__server"``,
or ``"pk"`` on the Server admin itself. Rows without a server link use a subclass with the same
hooks (``scope_queryset`` / ``object_in_scope``): ``LineageScopedAdminMixin`` for rows keyed by a
persona lineage id, ``KnownUserScopedAdminMixin`` for Discord users.

An inline is scoped by its own ``server_field`` like any admin, and the admin asks its permissions
about the parent object, so the parent model's admin answers them: inline rows follow their parent.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.admin import AdminSite
from django.contrib.admin.options import InlineModelAdmin
from django.core.exceptions import PermissionDenied
from django.db.models import Field, ForeignKey, Model, Q, QuerySet
from django.forms import ModelChoiceField
from django.http import Http404, HttpRequest

from personas.access import Principal, principal_for_user
from personas.models import Persona, PersonalMemory, ServerMember

_PRINCIPAL_ATTR = "_server_scope_principal"
_LINEAGES_ATTR = "_server_scope_lineages"
_OBJECTS_ATTR = "_server_scope_objects"


def request_principal(request: HttpRequest) -> Principal | None:
    """The account's principal, computed once per request (the admin asks for permissions many times)."""
    if not hasattr(request, _PRINCIPAL_ATTR):
        setattr(request, _PRINCIPAL_ATTR, principal_for_user(getattr(request, "user", None)))
    principal: Principal | None = getattr(request, _PRINCIPAL_ATTR)
    return principal


def moderated_lineages(request: HttpRequest) -> dict[int, str] | None:
    """Lineage id → "persona (server)" label for the personas of the account's servers; None = every
    lineage (superuser). One query, once per request.

    Lineage 0 (global) is never in it: a global memory reaches every server's prompts and may have
    been written in any of them, so no single server's moderators own it (the API's rule too).
    """
    if not hasattr(request, _LINEAGES_ATTR):
        who = request_principal(request)
        labels: dict[int, str] | None = None
        if who is None:
            labels = {}
        elif who.server_ids is not None:
            labels = {}
            personas = who.scope(Persona.objects.order_by("persona_id")).values_list(
                "persona_lineage_id", "persona_nickname", "server__name", "server__server_disc_id"
            )
            for lineage_id, nickname, server_name, server_disc_id in personas:
                label = f"{nickname} ({server_name or f'server {server_disc_id}'})"
                labels[lineage_id] = f"{labels[lineage_id]}, {label}" if lineage_id in labels else label
        setattr(request, _LINEAGES_ATTR, labels)
    result: dict[int, str] | None = getattr(request, _LINEAGES_ATTR)
    return result


def object_server_id(obj: Model, server_field: str) -> int | None:
    """Follow ``server_field`` (``"persona__server"``; ``"pk"`` for a Server) from ``obj`` to the server's key."""
    if server_field == "pk":
        return int(obj.pk) if obj.pk is not None else None
    *hops, last = server_field.split("__")
    target: Any = obj
    for hop in hops:
        target = getattr(target, hop, None)
        if target is None:
            return None
    server_id = getattr(target, f"{last}_id", None)
    return int(server_id) if server_id is not None else None


def scoped_like_admin(admin_site: AdminSite, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
    """``queryset`` narrowed the way its model's admin narrows its own changelist.

    A model without a scoped admin is superusers' alone (fails closed).
    """
    model_admin = admin_site._registry.get(queryset.model)
    if isinstance(model_admin, ServerScopedAdminMixin):
        return model_admin.limit_to_scope(request, queryset)
    who = request_principal(request)
    return queryset if who is not None and who.server_ids is None else queryset.none()


class ServerScopedAdminMixin:
    """Scope a ModelAdmin or inline to the servers the account moderates (see module docstring)."""

    server_field: str = "server"
    # Integer lineage columns a moderator may only set to a lineage of their own servers' personas.
    lineage_choice_fields: tuple[str, ...] = ()
    admin_site: AdminSite

    def scope_principal(self, request: HttpRequest) -> Principal | None:
        return request_principal(request)

    def scope_queryset(self, request: HttpRequest, queryset: QuerySet[Any], who: Principal) -> QuerySet[Any]:
        """The rows a moderator (never a superuser: they see everything) may see."""
        return who.scope(queryset, self.server_field)

    def object_in_scope(self, request: HttpRequest, obj: Model, who: Principal) -> bool:
        """Whether a moderator may see ``obj``; must agree with ``scope_queryset``."""
        server_id = object_server_id(obj, self.server_field)
        return server_id is not None and who.sees(server_id)

    def limit_to_scope(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        who = self.scope_principal(request)
        if who is None:
            return queryset.none()
        if who.server_ids is None:
            return queryset
        return self.scope_queryset(request, queryset, who)

    def moderates_any(self, request: HttpRequest) -> bool:
        who = self.scope_principal(request)
        return who is not None and (who.server_ids is None or bool(who.server_ids))

    def moderates_object(self, request: HttpRequest, obj: Model | None) -> bool:
        """With no object: whether the account moderates any server; else whether it may see the object."""
        if obj is None:
            return self.moderates_any(request)
        if isinstance(self, InlineModelAdmin):
            # Django asks an inline's permissions about the parent object: the parent's admin knows it.
            parent = self.admin_site._registry.get(self.parent_model)
            if isinstance(parent, ServerScopedAdminMixin):
                return parent.moderates_object(request, obj)
            return self.is_superuser_session(request)
        who = self.scope_principal(request)
        if who is None:
            return False
        return who.server_ids is None or self.object_in_scope(request, obj, who)

    def is_superuser_session(self, request: HttpRequest) -> bool:
        who = self.scope_principal(request)
        return who is not None and who.server_ids is None

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return self.limit_to_scope(request, super().get_queryset(request))  # type: ignore[misc]

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None) -> Any:
        """Objects outside the scoped queryset (other servers, or missing) are a 404 on every object page."""
        obj = super().get_object(request, object_id, from_field)  # type: ignore[misc]
        if obj is None:
            raise Http404("No such object.")
        return obj

    def save_form(self, request: HttpRequest, form: forms.ModelForm, change: bool) -> Any:
        """Last line behind the limited choices: nobody saves a row outside their own scope."""
        obj = super().save_form(request, form, change)  # type: ignore[misc]
        if not self.moderates_object(request, obj):
            raise PermissionDenied
        return obj

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self.moderates_any(request)

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.moderates_object(request, obj)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        # An inline is asked with its parent object (None on the parent's add page).
        parent = args[0] if args and isinstance(self, InlineModelAdmin) else None
        return self.moderates_object(request, parent)

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.moderates_object(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.moderates_object(request, obj)

    def formfield_for_foreignkey(self, db_field: ForeignKey[Any, Any], request: HttpRequest, **kwargs: Any) -> Any:
        """A moderator can only pick (and post) rows the related model's admin shows them."""
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)  # type: ignore[misc]
        if isinstance(field, ModelChoiceField) and field.queryset is not None:
            field.queryset = scoped_like_admin(self.admin_site, request, field.queryset)
        return field

    def formfield_for_dbfield(self, db_field: Field[Any, Any], request: HttpRequest, **kwargs: Any) -> Any:
        lineages = moderated_lineages(request) if db_field.name in self.lineage_choice_fields else None
        if lineages is None:
            return super().formfield_for_dbfield(db_field, request, **kwargs)  # type: ignore[misc]
        # A lineage is a memory namespace: naming another server's lineage would read its memories.
        required = not db_field.blank
        choices = [(lid, f"{label} · {lid}") for lid, label in sorted(lineages.items())]
        return forms.TypedChoiceField(
            choices=[("", "---------" if required else "– draw a new lineage –"), *choices],
            coerce=int,
            empty_value=None,
            required=required,
            label=str(db_field.verbose_name).capitalize(),
            help_text=db_field.help_text,
        )


class LineageScopedAdminMixin(ServerScopedAdminMixin):
    """Rows keyed by a persona lineage id, with no server link (personal memories, naming preferences,
    the lineage registry): a moderator sees the lineages of their servers' personas.

    Lineage 0 (global) rows are superusers' alone (see ``moderated_lineages``). A lineage shared by
    personas of two servers is seen by both servers' moderators: its memories reach both prompts.
    """

    lineage_field: str = "persona_lineage_id"
    lineage_choice_fields: tuple[str, ...] = ("persona_lineage_id",)

    def scope_queryset(self, request: HttpRequest, queryset: QuerySet[Any], who: Principal) -> QuerySet[Any]:
        return queryset.filter(**{f"{self.lineage_field}__in": sorted(moderated_lineages(request) or ())})

    def object_in_scope(self, request: HttpRequest, obj: Model, who: Principal) -> bool:
        return getattr(obj, self.lineage_field) in (moderated_lineages(request) or {})


class KnownUserScopedAdminMixin(ServerScopedAdminMixin):
    """Discord users a moderator's servers know: a member of one of their servers, or a user one of
    their personas remembers (a personal memory in one of their lineages) — the API's rule."""

    def scope_queryset(self, request: HttpRequest, queryset: QuerySet[Any], who: Principal) -> QuerySet[Any]:
        members = who.scope(ServerMember.objects.all()).values("user_disc_id")
        lineages = sorted(moderated_lineages(request) or ())
        remembered = PersonalMemory.objects.filter(persona_lineage_id__in=lineages).values("user_id")
        return queryset.filter(Q(user_disc_id__in=members) | Q(pk__in=remembered))

    def object_in_scope(self, request: HttpRequest, obj: Model, who: Principal) -> bool:
        # One query per object and request: a change page asks about the same user many times.
        seen: dict[tuple[str, Any], bool] = request.__dict__.setdefault(_OBJECTS_ATTR, {})
        key = (obj._meta.label, obj.pk)
        if key not in seen:
            rows = type(obj)._default_manager.filter(pk=obj.pk)
            seen[key] = obj.pk is not None and self.scope_queryset(request, rows, who).exists()
        return seen[key]
