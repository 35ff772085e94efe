"""Admin for personal and server memories, written through ``personas.actions``."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest

from personas import actions
from personas.admin.common import LineageColumnMixin, LineageListFilter, adopt, excerpt, refusal
from personas.admin.fields import JSONTextFieldsMixin
from personas.admin.scoping import (
    LineageScopedAdminMixin,
    ServerScopedAdminMixin,
)
from personas.models import (
    PersonalMemory,
    ServerMemory,
)

SHORT_TEXT = forms.Textarea(attrs={"rows": 2, "cols": 60})


class PersonalMemoryInlineForm(forms.ModelForm):
    class Meta:
        model = PersonalMemory
        fields = ["persona_lineage_id", "content", "tags"]
        widgets = {"content": SHORT_TEXT}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A memory's lineage never changes: moving it is forgetting in one persona and teaching another.
        self.fields["persona_lineage_id"].disabled = True


class PersonalMemoryInline(JSONTextFieldsMixin, LineageScopedAdminMixin, admin.TabularInline):
    """The user's memories, newest first; new ones are added on the memory page where limits are checked.
    A moderator sees (and edits) only the memories of their servers' lineages."""

    model = PersonalMemory
    form = PersonalMemoryInlineForm
    fields = ["persona_lineage_id", "content", "tags", "created_at"]
    readonly_fields = ["created_at"]
    ordering = ["-created_at", "-personal_memory_id"]
    show_change_link = True
    extra = 0

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class NewMemoryForm(forms.ModelForm):
    """A memory form whose add is checked by the action that will store it, so the form refuses
    exactly what the action would (and shows why next to the field); edits are checked on save."""

    def check_new(self, data: dict[str, Any]) -> None:
        raise NotImplementedError

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if self.instance.pk is None and not self.errors:
            try:
                self.check_new(data)
            except actions.ActionError as exc:
                raise refusal(exc) from exc
        return data


class PersonalMemoryForm(NewMemoryForm):
    class Meta:
        model = PersonalMemory
        fields = ["user", "persona_lineage_id", "content", "tags"]

    def check_new(self, data: dict[str, Any]) -> None:
        actions.check_new_personal_memory(data["user"], data["persona_lineage_id"], data["content"])


@admin.register(PersonalMemory)
class PersonalMemoryAdmin(JSONTextFieldsMixin, LineageScopedAdminMixin, LineageColumnMixin, admin.ModelAdmin):
    """Personal memories. A moderator sees, adds and edits those of their servers' lineages only, for the
    users their servers know; global (lineage 0) memories are superusers' alone (``moderated_lineages``)."""

    form = PersonalMemoryForm
    list_display = ["personal_memory_id", "memory", "user", "lineage", "tag_list", "created_at"]
    list_display_links = ["personal_memory_id", "memory"]
    list_select_related = ["user"]
    list_filter = [LineageListFilter, "user__privacy_level"]
    search_fields = ["content", "=user__user_disc_id", "user__username", "user__global_name"]
    # Not a raw id widget: it would print the name of any user id typed into the URL.
    autocomplete_fields = ["user"]
    date_hierarchy = "created_at"
    show_full_result_count = False
    list_per_page = 50

    def get_readonly_fields(self, request: HttpRequest, obj: PersonalMemory | None = None) -> list[str]:
        return ["user", "persona_lineage_id", "created_at", "updated_at"] if obj is not None else []

    @admin.display(description="memory")
    def memory(self, obj: PersonalMemory) -> str:
        return excerpt(obj.content)

    @admin.display(description="tags")
    def tag_list(self, obj: PersonalMemory) -> str:
        return ", ".join(str(t) for t in obj.tags or [])

    def save_model(self, request: HttpRequest, obj: PersonalMemory, form: forms.ModelForm, change: bool) -> None:
        if change:
            actions.update_personal_memory(obj, content=obj.content, tags=obj.tags)
        else:
            adopt(obj, actions.add_personal_memory(obj.user, obj.persona_lineage_id, obj.content, obj.tags))

    def delete_model(self, request: HttpRequest, obj: PersonalMemory) -> None:
        actions.delete_personal_memory(obj)


class ServerMemoryForm(NewMemoryForm):
    class Meta:
        model = ServerMemory
        fields = ["server", "persona", "persona_lineage_id", "user", "content", "tags"]

    def check_new(self, data: dict[str, Any]) -> None:
        actions.check_new_server_memory(data["server"], data["persona_lineage_id"], data["content"])


@admin.register(ServerMemory)
class ServerMemoryAdmin(JSONTextFieldsMixin, ServerScopedAdminMixin, LineageColumnMixin, admin.ModelAdmin):
    """Server memories, written through ``personas.actions`` (lineage, length and per-lineage limit);
    a memory's server and lineage never change once stored."""

    form = ServerMemoryForm
    list_display = ["id", "memory", "server", "lineage", "persona", "user", "created_at"]
    list_display_links = ["id", "memory"]
    list_select_related = ["server", "persona", "user"]
    list_filter = [LineageListFilter, ("server", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["content", "=server__server_disc_id"]
    autocomplete_fields = ["server", "persona", "user"]
    date_hierarchy = "created_at"
    show_full_result_count = False
    list_per_page = 50

    def get_readonly_fields(self, request: HttpRequest, obj: ServerMemory | None = None) -> list[str]:
        # Who taught and learned it is history (a field limited to the reader's users would blank an
        # author it cannot list); moving it to another lineage is forgetting and teaching anew.
        return ["server", "persona", "persona_lineage_id", "user"] if obj is not None else []

    @admin.display(description="memory")
    def memory(self, obj: ServerMemory) -> str:
        return excerpt(obj.content)

    def save_model(self, request: HttpRequest, obj: ServerMemory, form: forms.ModelForm, change: bool) -> None:
        if change:
            actions.update_server_memory(obj, content=obj.content, tags=obj.tags)
        else:
            saved = actions.add_server_memory(
                obj.server, obj.persona_lineage_id, obj.content, obj.tags, persona=obj.persona, user=obj.user
            )
            adopt(obj, saved)
