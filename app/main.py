"""The ASGI app (`app.main:app`): /validate, /healthz, /readyz. A thin shell over validators."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse, Response

from app.admission import mutate_body, review_body
from app.config import CONFIG_ENV, FileConfig, load_config
from app.reload import ConfigReloader
from validators import Settings

log = logging.getLogger("jobguard")

# Two full Job objects plus the review envelope stay far below this (etcd caps objects at 1.5 MiB).
MAX_BODY_BYTES = 4 * 1024 * 1024


def _json(payload: object, status: int) -> Response:
    return Response(orjson.dumps(payload), status_code=status, media_type="application/json")


def create_app(
    config: FileConfig | None = None, config_path: str | None = None, reload_interval: float = 2.0
) -> FastAPI:
    """Build the app. Without `config` it is read from `config_path`, $JOBGUARD_CONFIG or the
    defaults; with a file, the file is watched and reloaded (see app.reload)."""
    config_path = config_path or os.environ.get(CONFIG_ENV) or None
    loaded = config if config is not None else load_config(config_path)
    settings = loaded.to_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        watcher = None
        if app.state.reloader is not None:
            watcher = asyncio.create_task(app.state.reloader.run())
        app.state.ready = True
        log.info("jobguard ready (kubernetesVersion %s)", settings.semantics.version)
        try:
            yield
        finally:
            app.state.ready = False
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher

    app = FastAPI(title="jobguard", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.ready = False
    app.state.settings = settings

    def apply(new_settings: Settings) -> None:
        app.state.settings = new_settings

    app.state.reloader = (
        ConfigReloader(config_path, apply, reload_interval) if config_path else None
    )

    @app.post("/validate")
    async def validate(request: Request) -> Response:
        body = await request.body()
        if len(body) > MAX_BODY_BYTES:
            return _json({"error": "body exceeds 4 MiB"}, 413)
        status, payload, _ = review_body(body, app.state.settings)
        return _json(payload, status)

    @app.post("/mutate")
    async def mutate(request: Request) -> Response:
        body = await request.body()
        if len(body) > MAX_BODY_BYTES:
            return _json({"error": "body exceeds 4 MiB"}, 413)
        status, payload = mutate_body(body, app.state.settings)
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
