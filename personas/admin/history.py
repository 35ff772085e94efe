"""The audit trail in the admin (issue 16): each audited object's history, scoped like the object.

``AuditedAdmin`` takes ``admin.ModelAdmin``'s place at the end of an admin's bases, after the scoping
mixin. django-simple-history's history pages look objects up without the admin's queryset (a deleted
object is found in its history table), so here a history page answers 404 unless the reader may see
the object as it is now, or, once deleted, as it last was. Reverting an old version is offered only
where the admin says it is restorable (memories) and goes through the admin's ``save_model``, which
calls the action; everything written during an admin request is attributed to its account.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from simple_history.admin import SimpleHistoryAdmin

from personas import actions


def admin_actor(request: HttpRequest) -> actions.Actor:
    return actions.Actor.admin(request.user)


class RecordedAdmin(admin.ModelAdmin):
    """Every write of an admin page (forms, inlines, bulk actions) is recorded as this account's."""

    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        with actions.recording(admin_actor(request)):
            return super().changeform_view(request, *args, **kwargs)

    def changelist_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        with actions.recording(admin_actor(request)):
            return super().changelist_view(request, *args, **kwargs)

    def delete_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        with actions.recording(admin_actor(request)):
            return super().delete_view(request, *args, **kwargs)


class AuditedAdmin(RecordedAdmin, SimpleHistoryAdmin):
    # Memories: an old version (of a deleted memory too) can be brought back.
    restorable = False

    def visible_history_object(self, request: HttpRequest, object_id: str) -> Any:
        """The object whose history is asked for, if the reader may see it; else 404 (never 403)."""
        live = self.model._default_manager.filter(pk=object_id).first()
        if live is None:
            latest = self.model.history.filter(**{self.model._meta.pk.attname: object_id}).order_by("-history_date")
            version = latest.first()
            live = version.instance if version is not None else None
        if live is None or not self.moderates_object(request, live):
            raise Http404("No such object.")
        return live

    def history_view(self, request: HttpRequest, object_id: str, extra_context: Any = None) -> HttpResponse:
        self.visible_history_object(request, object_id)
        return super().history_view(request, object_id, extra_context)

    def history_form_view(
        self, request: HttpRequest, object_id: str, version_id: str, extra_context: Any = None
    ) -> HttpResponse:
        obj = self.visible_history_object(request, object_id)
        if request.method == "POST" and self.revert_disabled(request, obj):
            raise PermissionDenied
        with actions.recording(admin_actor(request)):
            return super().history_form_view(request, object_id, version_id, extra_context)

    def revert_disabled(self, request: HttpRequest, obj: Any = None) -> bool:
        # A deleted object is restored from the deleted list (its restore re-checks the rules).
        exists = obj is not None and self.model._default_manager.filter(pk=obj.pk).exists()
        return not (self.restorable and exists and self.has_change_permission(request, obj))
