from django.apps import AppConfig


class CommunityConfig(AppConfig):
    """An app without models: installed for its admin module and Celery tasks, which Django and
    Celery find by the app's name."""

    name = "community"
