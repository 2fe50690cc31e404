"""The floor: a bare ASGI handler on the same stack (uvicorn, TLS) that only parses the body
and answers allowed. jobguard's /validate is measured against it in the same run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson

Message = MutableMapping[str, Any]


async def app(
    scope: MutableMapping[str, Any],
    receive: Callable[[], Awaitable[Message]],
    send: Callable[[Message], Awaitable[None]],
) -> None:
    if scope["type"] != "http":
        return
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    review = orjson.loads(b"".join(chunks))
    body = orjson.dumps(
        {
            "apiVersion": review["apiVersion"],
            "kind": "AdmissionReview",
            "response": {"uid": review["request"]["uid"], "allowed": True},
        }
    )
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})
