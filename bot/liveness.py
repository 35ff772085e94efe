"""``GET /healthz`` of a bot process on a loopback port (``runbot --health-port``), for the container's
health check: the bot has no web server of its own. It answers while the process runs, and says
whether the Discord gateway is connected, still connecting, or not used at all (``--offline``)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def serve_liveness(port: int, gateway: Callable[[], str]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found = self.path == "/healthz"
            body = json.dumps({"status": "ok", "gateway": gateway()} if found else {"detail": "Not Found"}).encode()
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            """Probes every few seconds would flood the log; the bot logs its own state changes."""

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, name="bot-liveness", daemon=True).start()
    return server
