"""Form fields for the JSON columns a moderator types into (issue 16): tags, trigger words,
appearance tags, channel ids, sample dialogue and per-style naming.

The columns stay JSON (lists and objects, the shape ``chatcontext`` reads); only the admin's input
changes, from a JSON textarea (``music, jazz`` gave "Enter a valid JSON.") to text a person writes:

- ``TextListField``: a list of strings typed as ``music, jazz`` (commas or new lines); blanks and
  repeats are dropped, each item may be checked (``channel_id_list_field``: digits only).
- ``LabelledLinesField``: one ``label: text`` per line, for sample dialogue (a list of
  ``{"role", "text"}``) and naming by addressing style (an object keyed by style).

No library is used: Django's ``SimpleArrayField`` (``django.contrib.postgres``) splits a delimited
string but refuses a trailing comma ("Item 3 in the array did not validate") and only lists; the
admin JSON editors (django-jsonform) edit one input per item with buttons and need their own
JavaScript, not the typed lists asked for. ``json_form_field`` maps each column to its field, so
every admin page that shows the column (a model page or an inline) uses the same one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Field

from personas.values.naming import ADDRESSING_STYLES

_SEPARATORS = re.compile(r"[,\n]")
_CHANNEL_ID = re.compile(r"\d{1,20}")


def with_hint(kwargs: dict[str, Any], hint: str) -> dict[str, Any]:
    """The field's keyword arguments with how to type it appended to what the column means."""
    return {**kwargs, "help_text": " ".join(p for p in (str(kwargs.get("help_text") or ""), hint) if p)}


class TextListField(forms.CharField):
    """A JSON list of strings written as one line of comma-separated items (new lines separate too,
    so a pasted one-per-line list reads the same)."""

    def __init__(
        self,
        *,
        hint: str = "Separate them with commas.",
        item_check: Callable[[str], str | None] | None = None,
        **kwargs: Any,
    ) -> None:
        self.item_check = item_check
        kwargs.setdefault("widget", forms.TextInput(attrs={"size": 60}))
        super().__init__(strip=True, **with_hint(kwargs, hint))

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return ", ".join(str(v) for v in value)
        return value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        if isinstance(value, list | tuple):
            return [str(v) for v in value]
        text = super().to_python(value)
        items: list[str] = []
        for part in _SEPARATORS.split(text or ""):
            item = part.strip()
            if item and item not in items:
                items.append(item)
        return items

    def validate(self, value: Any) -> None:
        if self.required and not value:
            raise ValidationError(self.error_messages["required"], code="required")
        if self.item_check is None:
            return
        problems = [problem for item in value if (problem := self.item_check(item))]
        if problems:
            raise ValidationError(problems)

    def has_changed(self, initial: Any, data: Any) -> bool:
        return self.to_python(initial or []) != self.to_python(data)


def channel_id_problem(item: str) -> str | None:
    if _CHANNEL_ID.fullmatch(item):
        return None
    return (
        f"“{item}” is not a channel ID. A channel ID is the number Discord copies with “Copy Channel ID” "
        "(turn on Developer Mode under Settings → Advanced), e.g. 1234567890123456789."
    )


def channel_id_list_field(**kwargs: Any) -> TextListField:
    return TextListField(hint="Channel IDs (numbers), separated by commas.", item_check=channel_id_problem, **kwargs)


def approved_endpoint_problem(item: str) -> str | None:
    if item in settings.LLM_APPROVED_ENDPOINTS:
        return None
    known = ", ".join(settings.LLM_APPROVED_ENDPOINTS) or "none are configured"
    return f"“{item}” is not an endpoint the operator approved (LLM_APPROVED_ENDPOINTS: {known})."


def approved_endpoint_list_field(**kwargs: Any) -> TextListField:
    return TextListField(
        hint="Names of approved endpoints, separated by commas, in the order they are tried.",
        item_check=approved_endpoint_problem,
        **kwargs,
    )


class LabelledLinesField(forms.CharField):
    """JSON written as one ``label: text`` per line; ``labels`` maps what a person types to the key
    stored (``persona`` → ``model``), ``display`` the other way. Subclasses say how lines become JSON."""

    def __init__(self, *, labels: Mapping[str, str], display: Mapping[str, str], hint: str, **kwargs: Any) -> None:
        self.labels = dict(labels)
        self.display = dict(display)
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 4, "cols": 60}))
        super().__init__(strip=False, **with_hint(kwargs, hint))

    def pairs(self, text: str) -> list[tuple[str, str]]:
        """(key, text) per labelled line; an unlabelled line continues the previous one."""
        pairs: list[tuple[str, str]] = []
        allowed = ", ".join(f"“{label}:”" for label in dict.fromkeys(self.display.values()))
        for number, line in enumerate(text.splitlines(), start=1):
            label, colon, rest = line.partition(":")
            key = self.labels.get(label.strip().lower()) if colon else None
            if key is not None:
                pairs.append((key, rest.strip()))
            elif pairs and line.strip():
                key, previous = pairs[-1]
                pairs[-1] = (key, f"{previous}\n{line.strip()}")
            elif line.strip():
                raise ValidationError(f"Line {number} does not start with {allowed}: “{line.strip()[:60]}”.")
        return pairs

    def lines(self, pairs: Iterable[tuple[str, str]]) -> str:
        return "\n".join(f"{self.display.get(key, key)}: {text}" for key, text in pairs)

    def has_changed(self, initial: Any, data: Any) -> bool:
        try:
            return self.to_python(initial) != self.to_python(data)
        except ValidationError:
            return True


class SampleDialogueField(LabelledLinesField):
    """``[{"role": "user"|"model", "text": ...}]`` as ``user: …`` and ``persona: …`` lines."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            labels={"user": "user", "persona": "model", "model": "model"},
            display={"user": "user", "model": "persona"},
            hint=(
                "One line per message: “user: …” for what a person says, “persona: …” for the persona's answer. "
                "A line without a label continues the message above it."
            ),
            **kwargs,
        )

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list):
            return self.lines((str(m.get("role")), str(m.get("text") or "")) for m in value if isinstance(m, Mapping))
        return value

    def to_python(self, value: Any) -> list[dict[str, str]]:  # type: ignore[override]
        if isinstance(value, list):
            return value
        return [{"role": role, "text": text} for role, text in self.pairs(str(value or "")) if text]


class StyleMapField(LabelledLinesField):
    """``{"masculine"|"feminine"|"neutral": text}`` as ``feminine: Lady`` lines. ``neutral:`` with
    nothing after it is kept as an empty value: no prefix for that style, rather than the fallback."""

    def __init__(self, **kwargs: Any) -> None:
        styles = {style: style for style in ADDRESSING_STYLES}
        super().__init__(
            labels=styles,
            display=styles,
            hint=(
                "One line per addressing style: “masculine: …”, “feminine: …”, “neutral: …”. A user whose style "
                "has no line gets the neutral one; a style written with nothing after the colon gets none."
            ),
            **kwargs,
        )

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, dict):
            return self.lines((str(k), "" if v is None else str(v)) for k, v in value.items())
        return value

    def to_python(self, value: Any) -> dict[str, str]:  # type: ignore[override]
        if isinstance(value, dict):
            return value
        pairs = self.pairs(str(value or ""))
        repeated = sorted({k for k, _ in pairs if [key for key, _ in pairs].count(k) > 1})
        if repeated:
            raise ValidationError(f"Each style once: {', '.join(repeated)} is written more than once.")
        return dict(pairs)


def tags_field(**kwargs: Any) -> TextListField:
    return TextListField(hint="Separate tags with commas, e.g. music, jazz, #art.", **kwargs)


# Which JSON column gets which field: (model label, field name) → factory of the form field.
JSON_FORM_FIELDS: dict[tuple[str, str], Callable[..., forms.Field]] = {
    ("personas.personalmemory", "tags"): tags_field,
    ("personas.servermemory", "tags"): tags_field,
    ("personas.persona", "trigger_words"): lambda **kw: TextListField(
        hint="Separate them with commas, e.g. tomori, tomo.", **kw
    ),
    ("personas.persona", "physical_appearance_tags"): tags_field,
    ("personas.discorduser", "physical_appearance_tags"): tags_field,
    ("personas.persona", "sample_dialogue"): SampleDialogueField,
    ("personas.persona", "naming_prefixes"): StyleMapField,
    ("personas.persona", "naming_suffixes"): StyleMapField,
    ("personas.persona", "naming_address_terms"): StyleMapField,
    ("personas.serversettings", "rp_channel_ids"): channel_id_list_field,
    ("personas.serversettings", "llm_fallback_endpoints"): approved_endpoint_list_field,
    ("personas.personasampling", "stop"): lambda **kw: TextListField(
        hint="Separate them with commas or new lines.", **kw
    ),
}


def json_form_field(db_field: Field[Any, Any]) -> forms.Field | None:
    """The typed-text form field of a JSON column a moderator edits; None for any other column."""
    factory = JSON_FORM_FIELDS.get((db_field.model._meta.label_lower, db_field.name))
    if factory is None:
        return None
    return factory(
        required=not db_field.blank, label=str(db_field.verbose_name).capitalize(), help_text=db_field.help_text
    )


class JSONTextFieldsMixin:
    """For a ModelAdmin or inline: the columns of ``JSON_FORM_FIELDS`` get their typed-text field."""

    def formfield_for_dbfield(self, db_field: Field[Any, Any], request: Any, **kwargs: Any) -> Any:
        field = json_form_field(db_field)
        if field is not None:
            return field
        return super().formfield_for_dbfield(db_field, request, **kwargs)  # type: ignore[misc]
