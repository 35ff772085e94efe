"""The ``bot`` app's models, defined in the package they belong to (the playground's channels in
``bot.playground.models``, the bot's status in ``bot.discord.status``) and imported here, where
Django looks for an app's models. The app label stays ``bot``, so the migrations and table names
are those of the models' first home."""

from bot.discord.status import BotStatus
from bot.playground.models import PlaygroundChannel, PlaygroundMessage, PlaygroundSequence

__all__ = ["BotStatus", "PlaygroundChannel", "PlaygroundMessage", "PlaygroundSequence"]
