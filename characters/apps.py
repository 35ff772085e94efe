from django.apps import AppConfig


class CharactersConfig(AppConfig):
    """SillyTavern cards and lorebooks: files in and out (the data lives in ``personas``)."""

    name = "characters"
    default_auto_field = "django.db.models.BigAutoField"
