"""The django-ninja API: one NinjaAPI, routers added by the apps that own them."""

from ninja import NinjaAPI

api = NinjaAPI(title="Tomori Platform API", version="1", docs_url="/docs", urls_namespace="api")


@api.get("/v1/health", tags=["health"], auth=None)
def health(request):  # type: ignore[no-untyped-def]
    """Liveness: the process answers and the database is reachable."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return {"status": "ok"}
