"""Per-server scoping for moderator-facing admin pages (issue 5: moderators see only their servers).

``ServerScopedAdminMixin`` goes first in a ModelAdmin's bases. It narrows the changelist and every
object page to the servers the signed-in account moderates (``personas.access.principal_for_user``:
``ServerModerator`` rows; superusers see everything), turns per-server moderation into the view,
add, change and delete permissions, limits server choices in forms to the moderator's servers, and
answers 404 — not 403, not a redirect — for an object of another server, so ids of other servers
leak nothing.

Set ``server_field`` to the lookup path of the row's server, e.g. ``"server"`` or ``"persona__server"``,
or ``"pk"`` on the Server admin itself.
"""

from __future__ import annotations

from typing import Any

from django.db.models import ForeignKey, Model, QuerySet
from django.forms import ModelChoiceField
from django.http import Http404, HttpRequest

from personas.access import Principal, principal_for_user
from personas.models import Server

_PRINCIPAL_ATTR = "_server_scope_principal"


def request_principal(request: HttpRequest) -> Principal | None:
    """The account's principal, computed once per request (the admin asks for permissions many times)."""
    if not hasattr(request, _PRINCIPAL_ATTR):
        setattr(request, _PRINCIPAL_ATTR, principal_for_user(getattr(request, "user", None)))
    principal: Principal | None = getattr(request, _PRINCIPAL_ATTR)
    return principal


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


class ServerScopedAdminMixin:
    """Scope a ModelAdmin to the servers the account moderates (see module docstring)."""

    server_field: str = "server"

    def scope_principal(self, request: HttpRequest) -> Principal | None:
        return request_principal(request)

    def moderates_any(self, request: HttpRequest) -> bool:
        who = self.scope_principal(request)
        return who is not None and (who.server_ids is None or bool(who.server_ids))

    def moderates_object(self, request: HttpRequest, obj: Model | None) -> bool:
        """With no object: whether the account moderates any server; else whether it moderates the object's."""
        if obj is None:
            return self.moderates_any(request)
        who = self.scope_principal(request)
        server_id = object_server_id(obj, self.server_field)
        return who is not None and (who.server_ids is None or (server_id is not None and who.sees(server_id)))

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset: QuerySet[Any] = super().get_queryset(request)  # type: ignore[misc]
        who = self.scope_principal(request)
        if who is None:
            return queryset.none()
        return who.scope(queryset, self.server_field)

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None) -> Any:
        """Objects outside the scoped queryset (other servers, or missing) are a 404 on every object page."""
        obj = super().get_object(request, object_id, from_field)  # type: ignore[misc]
        if obj is None:
            raise Http404("No such object.")
        return obj

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self.moderates_any(request)

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.moderates_object(request, obj)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return self.moderates_any(request)

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.moderates_object(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.moderates_object(request, obj)

    def formfield_for_foreignkey(self, db_field: ForeignKey[Any, Any], request: HttpRequest, **kwargs: Any) -> Any:
        """A moderator can only pick (and post) one of their own servers."""
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)  # type: ignore[misc]
        who = self.scope_principal(request)
        limited = isinstance(field, ModelChoiceField) and field.queryset is not None
        if limited and db_field.related_model is Server and who is not None:
            field.queryset = who.scope(field.queryset, "pk")
        return field
