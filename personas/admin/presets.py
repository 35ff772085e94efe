"""A persona's sampling settings and its SillyTavern preset (imported from a file), each on a page of
its own (issue 31 items 4 and 5)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.utils.html import format_html, format_html_join

from personas import actions
from personas.admin.common import ConsoleMedia
from personas.admin.fields import JSONTextFieldsMixin
from personas.admin.history import RecordedAdmin, admin_actor
from personas.admin.scoping import ServerScopedAdminMixin
from personas.models import PersonaPreset, PersonaSampling
from personas.presets import MAX_PRESET_BYTES, PresetError, parse_preset
from personas.values.sampling import SamplingError, check_stop


class PersonaSamplingForm(forms.ModelForm):
    class Meta:
        model = PersonaSampling
        fields = [
            "persona",
            "temperature",
            "top_p",
            "max_reply_tokens",
            "presence_penalty",
            "frequency_penalty",
            "stop",
            "seed",
        ]

    def clean_stop(self) -> list[str]:
        stop: list[str] = self.cleaned_data.get("stop") or []
        try:
            check_stop(stop)
        except SamplingError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return stop


@admin.register(PersonaSampling)
class PersonaSamplingAdmin(JSONTextFieldsMixin, ServerScopedAdminMixin, RecordedAdmin):
    """One row per persona at most; an empty field is not sent (the provider's default applies).
    Importing a preset sets the fields it carries."""

    Media = ConsoleMedia
    form = PersonaSamplingForm
    server_field = "persona__server"
    list_display = ["persona", "temperature", "top_p", "max_reply_tokens", "updated_at"]
    list_select_related = ["persona__server"]
    search_fields = ["persona__persona_nickname"]
    autocomplete_fields = ["persona"]


class PresetImportForm(forms.ModelForm):
    """Only on the add page: the persona and the file; the file is read and checked whole here, so an
    unusable one is a form error and nothing is written."""

    file = forms.FileField(
        label="SillyTavern preset",
        help_text="A chat-completion preset (.json) as SillyTavern exports it. Its prompt order and its sampling "
        "settings become the persona's; keys this platform does not use are kept and ignored.",
    )

    class Meta:
        model = PersonaPreset
        fields = ["persona"]

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        if upload.size > MAX_PRESET_BYTES:
            raise forms.ValidationError(f"The file is larger than {MAX_PRESET_BYTES // (1024 * 1024)} MiB.")
        try:
            self.parsed = parse_preset(upload.read(), name=upload.name or "preset.json")
        except PresetError as exc:
            raise forms.ValidationError(f"Not imported: {exc}.") from exc
        return upload


@admin.register(PersonaPreset)
class PersonaPresetAdmin(ServerScopedAdminMixin, admin.ModelAdmin):
    Media = ConsoleMedia
    server_field = "persona__server"
    list_display = ["persona", "name", "imported_at"]
    list_select_related = ["persona__server"]
    search_fields = ["persona__persona_nickname", "name"]
    readonly_fields = ["persona", "name", "prompt_order", "imported_at"]

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is None:
            kwargs["form"] = PresetImportForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ["persona", "file"] if obj is None else list(self.readonly_fields)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [] if obj is None else list(self.readonly_fields)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a preset is replaced by importing another, never edited field by field

    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        # Not in the admin's own transaction: the import is an action in a transaction of its own.
        return self._changeform_view(request, *args, **kwargs)  # type: ignore[attr-defined]

    def save_model(self, request: HttpRequest, obj: PersonaPreset, form: Any, change: bool) -> None:
        actions.import_preset(obj.persona, form.parsed, actor=admin_actor(request))

    @admin.display(description="prompt order")
    def prompt_order(self, obj: PersonaPreset) -> str:
        rows = [
            (
                node["identifier"],
                "slot" if node["marker"] else f"{node['role']} text",
                "" if node.get("enabled", True) else "off",
                node.get("content", "")[:200],
            )
            for node in obj.nodes
        ]
        body = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", rows)
        return format_html("<table><tr><th>prompt</th><th>kind</th><th></th><th>text</th></tr>{}</table>", body)
