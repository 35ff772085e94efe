"""Admin for personal and server memories, written through ``personas.actions``."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import Exists, Model, OuterRef, QuerySet
from django.http import HttpRequest

from personas import actions
from personas.admin.common import (
    LineageColumnMixin,
    LineageListFilter,
    ProvenanceMixin,
    ReadOnlyRows,
    adopt,
    lineage_holder,
    refusal,
)
from personas.admin.fields import JSONTextFieldsMixin
from personas.admin.history import AuditedAdmin, RecordedAdmin, admin_actor
from personas.admin.navigation import ReturnToNextMixin
from personas.admin.scoping import (
    LineageScopedAdminMixin,
    ServerScopedAdminMixin,
)
from personas.memory_text import ANY_USER, GONE_USER, memory_title, user_name
from personas.models import DeletedPersonalMemory, DeletedServerMemory, PersonalMemory, ServerMemory

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


class PersonalMemoryInline(JSONTextFieldsMixin, LineageScopedAdminMixin, LineageColumnMixin, admin.TabularInline):
    """The user's memories, newest first; new ones are added on the memory page where limits are checked.
    A moderator sees (and edits) only the memories of their servers' lineages."""

    model = PersonalMemory
    form = PersonalMemoryInlineForm
    fields = ["persona_lineage_id", "content", "tags", "created_at"]
    readonly_fields = ["created_at"]
    ordering = ["-created_at", "-personal_memory_id"]
    show_change_link = True
    extra = 0

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        # With its user, so each row's title names them (the page is theirs) without a query per row.
        return super().get_queryset(request).select_related("user")

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class NamedVersionsMixin:
    """The history page titles each version with names from the reader's scope, loaded by the version
    list's one query (a version's ``__str__`` knows no reader, so it names nobody)."""

    admin_site: Any
    history_list_display = ["named"]

    def get_history_queryset(self, request: HttpRequest, *args: Any) -> QuerySet[Any]:
        versions: QuerySet[Any] = super().get_history_queryset(request, *args)  # type: ignore[misc]
        if any(field.name == "user" for field in versions.model._meta.get_fields()):
            versions = versions.select_related("user")
        return versions.annotate(lineage_persona=lineage_holder(self.admin_site, request, versions.model))

    def named(self, version: Any) -> str:
        return memory_title(version)


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
class PersonalMemoryAdmin(
    ReturnToNextMixin,
    JSONTextFieldsMixin,
    LineageScopedAdminMixin,
    LineageColumnMixin,
    ProvenanceMixin,
    NamedVersionsMixin,
    AuditedAdmin,
):
    """Personal memories. A moderator sees, adds and edits those of their servers' lineages only, for the
    users their servers know; global (lineage 0) memories are superusers' alone (``moderated_lineages``)."""

    form = PersonalMemoryForm
    restorable = True
    list_display = ["personal_memory_id", "memory", "user", "lineage", "tag_list", "origin", "created_at"]
    list_display_links = ["personal_memory_id", "memory"]
    list_select_related = ["user"]
    list_filter = [LineageListFilter, "user__privacy_level"]
    search_fields = ["content", "=user__user_disc_id", "user__username", "user__global_name"]
    # Not a raw id widget: it would print the name of any user id typed into the URL.
    autocomplete_fields = ["user"]
    date_hierarchy = "created_at"
    show_full_result_count = False
    list_per_page = 50

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        # With its user: the change page's title and breadcrumbs name them without another query.
        return super().get_queryset(request).select_related("user")

    def get_readonly_fields(self, request: HttpRequest, obj: PersonalMemory | None = None) -> list[str]:
        return ["user", "persona_lineage_id", "source", "created_at", "updated_at"] if obj is not None else []

    @admin.display(description="memory")
    def memory(self, obj: PersonalMemory) -> str:
        return self.memory_text(obj, user_name(obj.user))

    @admin.display(description="tags")
    def tag_list(self, obj: PersonalMemory) -> str:
        return ", ".join(str(t) for t in obj.tags or [])

    def save_model(self, request: HttpRequest, obj: PersonalMemory, form: forms.ModelForm, change: bool) -> None:
        if change:
            actions.update_personal_memory(obj, content=obj.content, tags=obj.tags, actor=admin_actor(request))
        else:
            saved = actions.add_personal_memory(
                obj.user, obj.persona_lineage_id, obj.content, obj.tags, actor=admin_actor(request)
            )
            adopt(obj, saved)

    def delete_model(self, request: HttpRequest, obj: PersonalMemory) -> None:
        actions.delete_personal_memory(obj, actor=admin_actor(request))


class ServerMemoryForm(NewMemoryForm):
    class Meta:
        model = ServerMemory
        fields = ["server", "persona", "persona_lineage_id", "user", "content", "tags"]

    def check_new(self, data: dict[str, Any]) -> None:
        actions.check_new_server_memory(data["server"], data["persona_lineage_id"], data["content"])


@admin.register(ServerMemory)
class ServerMemoryAdmin(
    JSONTextFieldsMixin, ServerScopedAdminMixin, LineageColumnMixin, ProvenanceMixin, NamedVersionsMixin, AuditedAdmin
):
    """Server memories, written through ``personas.actions`` (lineage, length and per-lineage limit);
    a memory's server and lineage never change once stored."""

    form = ServerMemoryForm
    restorable = True
    list_display = ["id", "memory", "server", "lineage", "persona", "user", "origin", "created_at"]
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
        return ["server", "persona", "persona_lineage_id", "user", "source"] if obj is not None else []

    @admin.display(description="memory")
    def memory(self, obj: ServerMemory) -> str:
        return self.memory_text(obj, ANY_USER)

    def save_model(self, request: HttpRequest, obj: ServerMemory, form: forms.ModelForm, change: bool) -> None:
        if change:
            actions.update_server_memory(obj, content=obj.content, tags=obj.tags, actor=admin_actor(request))
        else:
            saved = actions.add_server_memory(
                obj.server,
                obj.persona_lineage_id,
                obj.content,
                obj.tags,
                persona=obj.persona,
                user=obj.user,
                actor=admin_actor(request),
            )
            adopt(obj, saved)


class DeletedMemoryAdmin(LineageColumnMixin, RecordedAdmin):
    """Memories deleted and not restored since, from the audit trail: the last version of each, read
    only, with a restore action that stores it again through the memory's action (lineage and limit
    are checked as for a new memory). Scoped like the memory pages by the mixin before it."""

    live_model: type[Model]
    restore: Any  # the action: actions.restore_personal_memory or restore_server_memory
    list_display = ["memory", "lineage", "deleted_at", "actor"]
    list_filter = [LineageListFilter]
    search_fields = ["content"]
    show_full_result_count = False
    actions = ["restore_memories"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        pk = self.live_model._meta.pk.attname
        later = self.model._default_manager.filter(**{pk: OuterRef(pk), "history_date__gt": OuterRef("history_date")})
        alive = self.live_model._default_manager.filter(pk=OuterRef(pk))
        deleted = super().get_queryset(request).filter(history_type="-")
        return deleted.filter(~Exists(alive), ~Exists(later)).order_by("-history_date")

    def has_restore_permission(self, request: HttpRequest) -> bool:
        # moderates_any comes from the scoping mixin each subclass puts before this class.
        return self.moderates_any(request)  # type: ignore[attr-defined]

    @admin.display(description="memory")
    def memory(self, obj: Any) -> str:
        return self.memory_text(obj, ANY_USER)

    @admin.display(description="deleted", ordering="history_date")
    def deleted_at(self, obj: Any) -> Any:
        return obj.history_date

    @admin.action(description="Restore selected memories", permissions=["restore"])
    def restore_memories(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        restored = 0
        for version in queryset:
            try:
                self.restore(version, actor=admin_actor(request))
                restored += 1
            except actions.ActionError as exc:
                self.message_user(request, f"Not restored: {exc}", messages.WARNING)
        self.message_user(request, f"Restored {restored} memor{'y' if restored == 1 else 'ies'}.")


@admin.register(DeletedPersonalMemory)
class DeletedPersonalMemoryAdmin(ReadOnlyRows, LineageScopedAdminMixin, DeletedMemoryAdmin):
    lineage_choice_fields = ()
    live_model = PersonalMemory
    restore = staticmethod(actions.restore_personal_memory)
    list_display = ["memory", "user", "lineage", "deleted_at", "actor"]
    list_select_related = ["user"]

    @admin.display(description="memory")
    def memory(self, obj: Any) -> str:
        # A version keeps its user id after the user row is gone (the join then gives none).
        return self.memory_text(obj, user_name(obj.user) if obj.user is not None else GONE_USER)


@admin.register(DeletedServerMemory)
class DeletedServerMemoryAdmin(ReadOnlyRows, ServerScopedAdminMixin, DeletedMemoryAdmin):
    live_model = ServerMemory
    restore = staticmethod(actions.restore_server_memory)
    list_display = ["memory", "server", "lineage", "deleted_at", "actor"]
