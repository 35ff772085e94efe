"""What the platform itself says in a channel, by locale: the same words on every surface."""

from __future__ import annotations

DEFAULT_LOCALE = "en-US"

# Posted when no reply could be generated; the prompt record keeps the details.
ERROR_MESSAGES: dict[str, str] = {
    "en-US": "Sorry, I couldn't come up with a reply just now. Please try again in a moment.",
    "en-GB": "Sorry, I couldn't come up with a reply just now. Please try again in a moment.",
    "ja": "ごめんなさい、いまは返事を作れませんでした。少ししてからもう一度試してください。",
}


def localized(catalog: dict[str, str], locale: str | None) -> str:
    """Exact locale, then its language (``ja-JP`` → ``ja``), then en-US."""
    if locale:
        if locale in catalog:
            return catalog[locale]
        language = locale.split("-")[0]
        if language in catalog:
            return catalog[language]
    return catalog[DEFAULT_LOCALE]
