import os

from asgiref.typing import ASGI3Application, ASGIReceiveCallable, ASGISendCallable, ASGISendEvent, Scope
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "botplatform.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from botplatform.routing import websocket_urlpatterns  # noqa: E402
from personas.metrics import WEBSOCKETS  # noqa: E402


class CountedWebsockets:
    """Counts a websocket from its acceptance to its end, whichever consumer accepted it."""

    def __init__(self, app: ASGI3Application) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable) -> None:
        accepted = False

        async def counting_send(message: ASGISendEvent) -> None:
            nonlocal accepted
            if message["type"] == "websocket.accept" and not accepted:
                accepted = True
                WEBSOCKETS.inc()
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            if accepted:
                WEBSOCKETS.dec()


application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": CountedWebsockets(
            AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
        ),
    }
)
