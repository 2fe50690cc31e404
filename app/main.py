"""The ASGI app (`app.main:app`): /validate, /healthz, /readyz. A thin shell over validators."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse, Response

from app.admission import review_body
from app.config import FileConfig, load_config

log = logging.getLogger("jobguard")

# Two full Job objects plus the review envelope stay far below this (etcd caps objects at 1.5 MiB).
MAX_BODY_BYTES = 4 * 1024 * 1024


def _json(payload: object, status: int) -> Response:
    return Response(orjson.dumps(payload), status_code=status, media_type="application/json")


def create_app(config: FileConfig | None = None) -> FastAPI:
    """Build the app; without `config` it is read from $JOBGUARD_CONFIG (or the defaults)."""
    loaded = config if config is not None else load_config()
    settings = loaded.to_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.ready = True
        log.info("jobguard ready (kubernetesVersion %s)", settings.semantics.version)
        yield
        app.state.ready = False

    app = FastAPI(title="jobguard", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.ready = False
    app.state.settings = settings

    @app.post("/validate")
    async def validate(request: Request) -> Response:
        body = await request.body()
        if len(body) > MAX_BODY_BYTES:
            return _json({"error": "body exceeds 4 MiB"}, 413)
        status, payload, _ = review_body(body, app.state.settings)
        return _json(payload, status)

    @app.get("/healthz")
    async def healthz() -> Response:
        return PlainTextResponse("ok")

    @app.get("/readyz")
    async def readyz() -> Response:
        if app.state.ready:
            return PlainTextResponse("ok")
        return PlainTextResponse("not ready", status_code=503)

    return app


app = create_app()
