"""Faults on demand, which a real jobguard does not produce when asked: a webhook endpoint on
127.0.0.1 over TLS that answers after a delay (slower than the registration's timeoutSeconds), and
a port nothing listens on (connection refused)."""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.controlplane import free_port


@contextmanager
def slow_webhook(cert: Path, key: Path, delay: float) -> Iterator[str]:
    """An endpoint that reads the review, waits `delay` seconds, then allows it; yields its URL.
    It counts nothing and patches nothing: the API server gives up on it first."""

    class Slow(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            review = json.loads(self.rfile.read(length) or b"{}")
            time.sleep(delay)
            uid = review.get("request", {}).get("uid", "")
            body = json.dumps(
                {
                    "apiVersion": "admission.k8s.io/v1",
                    "kind": "AdmissionReview",
                    "response": {"uid": uid, "allowed": True},
                }
            ).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass  # the API server hung up after its timeout

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def refusing_url() -> str:
    """A loopback URL nothing listens on: every connection is refused."""
    return f"https://127.0.0.1:{free_port()}"
