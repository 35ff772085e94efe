"""The admin's forms as a superuser's request sees them."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import RequestFactory


def root_request() -> Any:
    request = RequestFactory().get("/")
    request.user = get_user_model().objects.get(username="root")
    return request


def form_fields(model: type, obj: Any, inline: type | None = None) -> dict[str, forms.Field]:
    model_admin = admin.site._registry[model]
    request = root_request()
    if inline is None:
        return dict(model_admin.get_form(request, obj).base_fields)
    formset = next(i for i in model_admin.get_inline_instances(request, obj) if isinstance(i, inline))
    return dict(formset.get_formset(request, obj).form.base_fields)
