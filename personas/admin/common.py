"""Helpers every personas admin module shares: excerpts, lineage labels and filters, action refusals."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin import AdminSite
from django.core.exceptions import ValidationError
from django.db.models import Field, Model, OuterRef, QuerySet, Subquery, URLField
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from personas import actions
from personas.admin.scoping import (
    scoped_like_admin,
)
from personas.memory_text import ANY_PERSONA, HOLDER_ORDER, lineage_persona_names
from personas.models import (
    GLOBAL_LINEAGE_ID,
    Persona,
    PersonaLineage,
)
from personas.values.placeholders import fill_placeholders

EXCERPT_CHARS = 90
# Typed-in URLs without a scheme are https (Django 6's default, set now to skip the transition warning).
URL_FIELD_OVERRIDES: dict[type[Field[Any, Any]], dict[str, Any]] = {URLField: {"assume_scheme": "https"}}


class ConsoleMedia:
    """The console's stylesheet, for pages with tabular inlines (they must fit the window)."""

    css = {"all": ["personas/console.css"]}


def excerpt(text: str | None) -> str:
    text = (text or "").replace("\n", " ")
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


# Lineage 0 read by every persona of every server (personal memories), or of the row's own server.
EVERY_PERSONA = "global (every persona)"
EVERY_PERSONA_OF_SERVER = "every persona of this server"


def server_bound(model: type[Model]) -> bool:
    """Rows with a server (server memories): their lineage is read on that server only."""
    return any(field.name == "server" for field in model._meta.get_fields())


def lineage_label(lineage_id: int, name: str | None, every: str = EVERY_PERSONA) -> str:
    """The console's one label of a lineage: its persona (else its registry label), then its id."""
    if lineage_id == GLOBAL_LINEAGE_ID:
        return f"{every} · {lineage_id}"
    return f"{name} · {lineage_id}" if name else str(lineage_id)


def unheld(registry_label: str | None) -> str | None:
    return f"{registry_label} (no persona)" if registry_label else None


def lineage_names(
    lineage_ids: set[int], request: HttpRequest, site: AdminSite, personas: QuerySet[Persona] | None = None
) -> dict[int, str]:
    """Lineage id → name for labels: its persona among ``personas`` (default all) that the reader sees
    (``lineage_persona_names``, the rule of the column's annotation too), else its registry label (two
    queries). A lineage shared with another server's persona must not tell a moderator that persona's name."""
    holders = Persona.objects.all() if personas is None else personas
    names = lineage_persona_names(lineage_ids, scoped_like_admin(site, request, holders))
    missing = lineage_ids - names.keys() - {GLOBAL_LINEAGE_ID}
    registry = scoped_like_admin(site, request, PersonaLineage.objects.filter(id__in=missing))
    for lid, label in registry.values_list("id", "label"):
        names[lid] = unheld(label) or "no persona"
    return names


class LineageListFilter(admin.SimpleListFilter):
    """Filter rows by the lineage ids present in the table (0 = global), labelled with their personas."""

    title = "lineage"
    parameter_name = "lineage"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
        # The rows the reader may see, not the whole table: other servers' lineages stay unnamed.
        rows = model_admin.get_queryset(request).order_by()
        present = set(rows.values_list("persona_lineage_id", flat=True).distinct())
        if server_bound(model_admin.model):  # a server's lineage is read by that server's personas only
            holders, every = Persona.objects.filter(server__in=rows.values("server")), EVERY_PERSONA_OF_SERVER
        else:
            holders, every = Persona.objects.all(), EVERY_PERSONA
        names = lineage_names(present, request, model_admin.admin_site, holders)
        return [(str(lid), lineage_label(lid, names.get(lid), every)) for lid in sorted(present)]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if value is None:
            return queryset
        try:
            return queryset.filter(persona_lineage_id=int(value))
        except ValueError:
            return queryset.none()


def lineage_registry_label() -> Subquery:
    """The registry label of each row's lineage, as one correlated subquery (no query per row)."""
    return Subquery(PersonaLineage.objects.filter(id=OuterRef("persona_lineage_id")).values("label")[:1])


def adopt(target: Model, saved: Model) -> None:
    """Copy a row saved by an action onto the instance the admin form built, so logging and redirects work."""
    for field in target._meta.concrete_fields:
        setattr(target, field.attname, getattr(saved, field.attname))
    target._state.adding = False


def lineage_holder(site: AdminSite, request: HttpRequest, model: type[Model]) -> Subquery:
    """Each row's persona for its lineage as one correlated subquery: among the personas the reader sees,
    and of the row's own server where it has one (a server memory's lineage is read there only)."""
    holders = Persona.objects.filter(persona_lineage_id=OuterRef("persona_lineage_id"))
    if server_bound(model):
        holders = holders.filter(server=OuterRef("server"))
    holder = scoped_like_admin(site, request, holders).order_by(*HOLDER_ORDER)
    return Subquery(holder.values("persona_nickname")[:1])


class LineageColumnMixin:
    """``lineage`` column: the persona holding the lineage (among those the reader sees) or its registry
    label, with the id; and each row's ``lineage_persona`` for its text's `{bot}`. From annotations."""

    admin_site: AdminSite

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        rows: QuerySet[Any] = super().get_queryset(request)  # type: ignore[misc]
        return rows.annotate(
            lineage_name=lineage_registry_label(), lineage_persona=lineage_holder(self.admin_site, request, rows.model)
        )

    @admin.display(description="lineage", ordering="persona_lineage_id")
    def lineage(self, obj: Any) -> str:
        every = EVERY_PERSONA_OF_SERVER if server_bound(type(obj)) else EVERY_PERSONA
        name = getattr(obj, "lineage_persona", None) or unheld(getattr(obj, "lineage_name", None))
        return lineage_label(obj.persona_lineage_id, name, every)

    def memory_text(self, obj: Any, user: str) -> str:
        """The row's memory, one line, with ``user`` for `{user}` and the lineage's persona for `{bot}`."""
        return excerpt(fill_placeholders(obj.content, user, getattr(obj, "lineage_persona", None) or ANY_PERSONA))


class ProvenanceMixin:
    """Where a memory or reminder came from (``personas.provenance``): a persona's tool call links its
    prompt record in the inspector (which checks who may read it) and names the message it answered."""

    @admin.display(description="source")
    def source(self, obj: Any) -> str:
        record_id, message_id = obj.source_prompt_record_id, obj.source_message_disc_id
        if record_id is None and not message_id:
            return "a moderator, the API or an import (no tool call)"
        about = format_html(", answering message {}", message_id) if message_id else ""
        if record_id is None:  # the record was pruned or forgotten, or the turn stored none
            return format_html("a persona's tool call{} (its prompt record is gone)", about)
        url = reverse("admin:chatcontext_promptrecord_change", args=[record_id])
        return format_html('a persona\'s tool call in <a href="{}">prompt record {}</a>{}', url, record_id, about)

    @admin.display(description="origin")
    def origin(self, obj: Any) -> str:
        return "tool call" if obj.source_prompt_record_id or obj.source_message_disc_id else "moderator"


def refusal(exc: actions.ActionError) -> ValidationError:
    """An action's refusal as a form error, next to the field it is about when it names one."""
    return ValidationError({exc.field: str(exc)} if exc.field else str(exc))


class PersonaOfServerForm(forms.ModelForm):
    """Rows that name both a server and a persona must name a persona of that server."""

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        server, persona = data.get("server"), data.get("persona")
        if server is not None and persona is not None and persona.server_id != server.pk:
            raise ValidationError({"persona": f"{persona} is not a persona of {server}."})
        return data


class ReadOnlyRows:
    """Rows nobody adds, edits or deletes by hand (audit-trail versions, what a command posted). First in
    the bases, so the scoping mixins' own answers (a moderator may change their server's live rows) do
    not apply."""

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False
