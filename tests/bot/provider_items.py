"""Context items the provider tests send through every provider."""

from __future__ import annotations

from chatcontext.core.types import ContextItem, ContextItemTag, ImagePart, TextPart

ITEMS = [
    ContextItem(role="system", parts=[TextPart("You are Tomori.")]),
    ContextItem(role="user", parts=[TextPart("Ann: hi there")], metadata_tag=ContextItemTag.DIALOGUE_HISTORY),
    ContextItem(role="model", parts=[TextPart("Tomori: hello!")], metadata_tag=ContextItemTag.DIALOGUE_HISTORY),
    ContextItem(
        role="user",
        parts=[TextPart("Ann: look"), ImagePart(uri="https://cdn/x.png", mime_type="image/png")],
        metadata_tag=ContextItemTag.DIALOGUE_HISTORY,
    ),
    ContextItem(role="user", parts=[ImagePart(uri="https://cdn/y.png", mime_type="image/png")]),
]
