"""The API documents itself (issue 32 item 7): /api/openapi.json describes every operation and every
property of every schema, and every request and response body has an example that names only the
schema's properties and every required one. A new endpoint or field without words fails here."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

NO_BODY = {"204"}


def openapi() -> dict[str, Any]:
    response = Client().get("/api/openapi.json")
    assert response.status_code == 200
    return response.json()


def operations(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(f"{method.upper()} {path}", op) for path, item in doc["paths"].items() for method, op in item.items()]


def component(doc: dict[str, Any], schema: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    ref = schema.get("$ref", "")
    name = ref.rsplit("/", 1)[-1]
    return (name, doc["components"]["schemas"][name]) if ref else ("(inline)", schema)


def bodies(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every JSON body an operation takes or gives, as (where, media type object)."""
    found = []
    for where, op in operations(doc):
        for media in (op.get("requestBody") or {}).get("content", {}).values():
            found.append((f"{where} request", media))
        for status, response in op["responses"].items():
            for media in (response.get("content") or {}).values():
                if status not in NO_BODY:
                    found.append((f"{where} {status}", media))
    return found


def body_examples(doc: dict[str, Any], media: dict[str, Any]) -> list[Any]:
    """The body's own examples, its schema's, or for a list its items' (Swagger UI shows them as a list)."""
    _, schema = component(doc, media.get("schema") or {})
    listed = [media["example"]] if "example" in media else []
    listed += [e["value"] for e in (media.get("examples") or {}).values()]
    return listed + list(schema.get("examples") or [])


def item_schema(doc: dict[str, Any], media: dict[str, Any]) -> dict[str, Any]:
    """The schema the examples are of: a list's items, else the body's own."""
    schema = media.get("schema") or {}
    return component(doc, schema["items"] if schema.get("type") == "array" else schema)[1]


def test_every_operation_has_a_description() -> None:
    doc = openapi()
    assert len(operations(doc)) >= 21
    assert [where for where, op in operations(doc) if not op.get("description", "").strip()] == []


def test_every_property_of_every_schema_has_a_description() -> None:
    schemas = openapi()["components"]["schemas"]
    properties = [
        (f"{name}.{prop}", spec) for name, s in schemas.items() for prop, spec in s.get("properties", {}).items()
    ]
    assert len(properties) > 100
    assert [where for where, spec in properties if not str(spec.get("description", "")).strip()] == []


def test_every_request_and_response_body_has_an_example_of_its_schema() -> None:
    doc = openapi()
    found = bodies(doc)
    assert len(found) > 100  # every operation's bodies, errors included, were walked
    missing, wrong = [], []
    for where, media in found:
        schema = item_schema(doc, media)
        examples = body_examples(doc, media) or list(schema.get("examples") or [])
        if not examples:
            missing.append(where)
        properties, required = set(schema.get("properties") or ()), set(schema.get("required") or ())
        for example in examples:
            if properties and not (required <= set(example) <= properties):
                wrong.append((where, sorted(set(example) ^ properties)))
    assert missing == []
    assert wrong == []


def test_the_field_names_people_confuse_say_how_they_differ() -> None:
    schemas = openapi()["components"]["schemas"]
    lineage = schemas["PersonaOut"]["properties"]["persona_lineage_id"]["description"]
    assert "Not a persona_id" in lineage
    tokens = schemas["RecordSummaryOut"]["properties"]
    assert "estimate" in tokens["token_estimate"]["description"]
    assert "provider's count" in tokens["input_tokens"]["description"]


def test_the_document_has_no_key_twice_in_one_object() -> None:
    """Swagger UI refuses a document with a repeated key ("duplicated mapping key") and shows nothing:
    an example given under the status "200" beside ninja's own 200 made two "200" responses."""
    repeated: list[str] = []

    def keep_unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        repeated.extend(key for key in set(keys) if keys.count(key) > 1)
        return dict(pairs)

    json.loads(Client().get("/api/openapi.json").content, object_pairs_hook=keep_unique)

    assert repeated == []
