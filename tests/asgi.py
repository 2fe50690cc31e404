"""The ASGI app driven directly, to control exactly what a client sends and when."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any


def drive(
    app: Any,
    messages: list[dict[str, Any]],
    query: bytes = b"",
    headers: Iterable[tuple[bytes, bytes]] = (),
    delay: float = 0.0,
    path: str = "/validate",
) -> list[dict[str, Any]]:
    """What `app` sends for one POST to `path` (/validate unless told) whose receive() gives `messages` in turn (each
    after `delay` seconds). `messages` is consumed: what is left in it was never read."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if delay:
            await asyncio.sleep(delay)
        return messages.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": path,
        "headers": list(headers),
        "query_string": query,
    }
    asyncio.run(app(scope, receive, send))
    return sent
