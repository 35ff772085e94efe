"""Where a value still lives in the database: every text and JSON column that holds it."""

from __future__ import annotations

from collections.abc import Iterable

from django.apps import apps
from django.db import models
from django.db.models.functions import Cast


def traces(needle: str) -> set[str]:
    """Every `model.column` holding ``needle`` (JSON columns cast to text)."""
    found = set()
    for model, field in text_columns():
        rows = model._default_manager.all()
        if isinstance(field, models.JSONField):
            rows = rows.annotate(_as_text=Cast(field.name, models.TextField()))
            hit = rows.filter(_as_text__icontains=needle).exists()
        else:
            hit = rows.filter(**{f"{field.name}__icontains": needle}).exists()
        if hit:
            found.add(f"{model._meta.label}.{field.name}")
    return found


def text_columns() -> Iterable[tuple[type[models.Model], models.Field]]:
    for model in apps.get_models(include_auto_created=True):
        if model._meta.proxy or not model._meta.managed:
            continue
        for field in model._meta.concrete_fields:
            if isinstance(field, models.CharField | models.TextField | models.JSONField):
                yield model, field
