"""Admin for what steers a channel's conversation: the personas' short-term memories (moderators read
and correct them, with their audit trail and where each came from) and the summaries ``/compact``
posted (read-only: the notice in the channel is what the personas read)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse

from personas import actions
from personas.admin.common import ProvenanceMixin, ReadOnlyRows
from personas.admin.history import AuditedAdmin, RecordedAdmin, admin_actor
from personas.admin.scoping import ServerScopedAdminMixin
from personas.models import ConversationSummary, ShortTermMemory

PREVIEW_CHARS = 80


def preview(text: str) -> str:
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


class ShortTermMemoryForm(forms.ModelForm):
    class Meta:
        model = ShortTermMemory
        fields = ["content"]
        widgets = {"content": forms.Textarea(attrs={"rows": 6, "cols": 80})}

    def clean_content(self) -> str:
        try:
            return actions.clean_short_term_memory(self.cleaned_data["content"])
        except actions.ActionError as exc:
            raise ValidationError(str(exc)) from exc


@admin.register(ShortTermMemory)
class ShortTermMemoryAdmin(ServerScopedAdminMixin, ProvenanceMixin, AuditedAdmin):
    """A persona's note of a channel: its tool writes it; a moderator may correct or delete it. Both
    go through ``personas.actions.replace_short_term_memory``, a durable transaction of its own, so
    these pages do not wrap the save in the admin's usual transaction."""

    form = ShortTermMemoryForm
    list_display = ["id", "note", "persona", "channel_disc_id", "origin", "updated_at"]
    list_display_links = ["id", "note"]
    list_select_related = ["persona", "server"]
    list_filter = [("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["content", "=channel_disc_id"]
    readonly_fields = ["server", "persona", "channel_disc_id", "author_disc_ids", "source", "updated_at"]
    fields = ["server", "persona", "channel_disc_id", "content", "author_disc_ids", "source", "updated_at"]

    @admin.display(description="note")
    def note(self, obj: ShortTermMemory) -> str:
        return preview(obj.content)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a note belongs to a persona's conversation in a channel: its tool starts it

    def changeform_view(
        self, request: HttpRequest, object_id: str | None = None, form_url: str = "", extra_context: Any = None
    ) -> HttpResponse:
        with actions.recording(admin_actor(request)):
            return self._changeform_view(request, object_id, form_url, extra_context)

    def delete_view(self, request: HttpRequest, object_id: str, extra_context: Any = None) -> HttpResponse:
        with actions.recording(admin_actor(request)):
            return self._delete_view(request, object_id, extra_context)

    def save_model(self, request: HttpRequest, obj: ShortTermMemory, form: forms.ModelForm, change: bool) -> None:
        self._replace(request, obj, obj.content)

    def delete_model(self, request: HttpRequest, obj: ShortTermMemory) -> None:
        self._replace(request, obj, "")

    def _replace(self, request: HttpRequest, obj: ShortTermMemory, content: str) -> None:
        # The note keeps its provenance and authors: a moderator's correction is in its audit trail.
        write = actions.NoteWrite(persona=obj.persona, channel_disc_id=obj.channel_disc_id, content=content)
        actions.replace_short_term_memory(write, actor=admin_actor(request))


@admin.register(ConversationSummary)
class ConversationSummaryAdmin(ReadOnlyRows, ServerScopedAdminMixin, ProvenanceMixin, RecordedAdmin):
    """Read-only: a summary is what ``/compact`` posted; forget-me deletes the ones that drew on a
    person's messages."""

    list_display = ["id", "summary", "kind", "channel_disc_id", "requested_by_disc_id", "created_at"]
    list_display_links = ["id", "summary"]
    list_filter = ["kind", ("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["content", "=channel_disc_id"]
    readonly_fields = (
        "server",
        "persona",
        "channel_disc_id",
        "kind",
        "content",
        "author_disc_ids",
        "requested_by_disc_id",
        "source",
        "created_at",
    )
    fields = readonly_fields

    @admin.display(description="summary")
    def summary(self, obj: ConversationSummary) -> str:
        return preview(obj.content)
