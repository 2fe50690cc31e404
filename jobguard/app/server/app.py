"""The ASGI app (`jobguard.app.server.app:app`).

POST /validate and /mutate take the request path of `endpoints` (raw body, one orjson parse, the
admission chain); /healthz, /readyz and /metrics are served by FastAPI behind it. With a health
port, /metrics is served there only, not on the webhook's port. A thin shell: no rule logic.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

import uvicorn
from fastapi import FastAPI
from fastapi.responses import PlainTextResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.datastructures import State
from starlette.types import Receive, Scope, Send

from jobguard.app.config import CONFIG_ENV, FileConfig, load_config
from jobguard.app.server.endpoints import ServerOptions, ThreadBudget, WebhookApp
from jobguard.app.server.observability import Metrics
from jobguard.app.server.reload import ConfigReloader
from jobguard.app.server.tls import TLSManager
from jobguard.validators import Settings

if TYPE_CHECKING:  # the kubernetes client is imported only when the background audit runs
    from jobguard.app.cluster.audit import BackgroundAuditOptions
    from jobguard.app.cluster.certrotator import CertificateSync
    from jobguard.app.cluster.client import Cluster
    from jobguard.app.cluster.registrar import RegistrarOptions

__all__ = ["ServerOptions", "WebhookApp", "app", "create_app"]


class _HealthServer(uvicorn.Server):
    """The plain-HTTP probe listener: it runs inside the main server's loop, which owns the
    signal handling."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class _WithMetrics:
    """The health port's app: GET /metrics, then the probes of `api`."""

    def __init__(self, api: FastAPI, metrics: Metrics) -> None:
        self.api = api
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/metrics":
            response = _metrics_response(self.metrics)
            await response(scope, receive, send)
            return
        await self.api(scope, receive, send)


def _metrics_response(metrics: Metrics) -> Response:
    return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)


def _health_server(api: FastAPI, metrics: Metrics, options: ServerOptions) -> uvicorn.Server:
    config = uvicorn.Config(
        _WithMetrics(api, metrics),
        host=options.health_host,
        port=options.health_port,
        lifespan="off",
        log_config=None,
        access_log=False,
    )
    return _HealthServer(config)


def create_app(
    config: FileConfig | None = None,
    config_path: str | None = None,
    reload_interval: float = 2.0,
    options: ServerOptions | None = None,
    tls: TLSManager | None = None,
    cluster_version: str | None = None,
    audit: BackgroundAuditOptions | None = None,
    registrar: tuple[Callable[[], Cluster], RegistrarOptions] | None = None,
    certificate_sync: CertificateSync | None = None,
) -> WebhookApp:
    """Build the app. Without `config` it is read from `config_path`, $JOBGUARD_CONFIG or the
    defaults; with a file, the file is watched and reloaded (see app.reload). `cluster_version`
    is what `kubernetesVersion: auto` stands for; `audit` runs the background audit."""
    config_path = config_path or os.environ.get(CONFIG_ENV) or None
    server_options = options or ServerOptions()
    loaded = config if config is not None else load_config(config_path)
    settings = loaded.to_settings(cluster_version)
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(api: FastAPI) -> AsyncIterator[None]:
        tasks = [asyncio.create_task(api.state.reloader.run())] if api.state.reloader else []
        if tls is not None:
            tasks.append(asyncio.create_task(tls.run()))
        if api.state.audit is not None:
            tasks.append(asyncio.create_task(api.state.audit.run()))
        if api.state.registrar is not None:
            tasks.append(asyncio.create_task(api.state.registrar.run()))
        if certificate_sync is not None:
            tasks.append(asyncio.create_task(certificate_sync.run()))
        health = (
            _health_server(api, metrics, server_options) if server_options.health_port else None
        )
        sockets = list(server_options.health_sockets) or None
        health_task = (
            asyncio.create_task(health.serve(sockets=sockets)) if health is not None else None
        )
        api.state.ready = True
        try:
            yield
        finally:
            api.state.ready = False
            if health is not None and health_task is not None:
                health.should_exit = True
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(health_task, 5)
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    api = FastAPI(title="jobguard", lifespan=lifespan, docs_url=None, redoc_url=None)
    state: dict[str, Any] = {}
    api.state = State(state)
    api.state.ready = False
    api.state.settings = settings
    api.state.metrics = metrics
    api.state.tls = tls
    api.state.registrar = None
    if registrar is not None:
        from jobguard.app.cluster.registrar import Registrar

        def serving() -> bool:
            return bool(api.state.ready) and (tls is None or tls.serving)

        api.state.registrar = Registrar(
            registrar[0], lambda: api.state.settings, registrar[1], ready=serving
        )
    api.state.audit = None
    if audit is not None:
        from jobguard.app.cluster.audit import AuditMetrics, BackgroundAudit

        api.state.audit = BackgroundAudit(
            audit.connect,
            lambda: api.state.settings,
            AuditMetrics(metrics.registry),
            audit.interval,
            audit.options,
            audit.write_reports,
            audit.report_api,
            audit.report_scope,
            leading=_leading(api.state.registrar),
        )
    if tls is not None:
        metrics.set_certificate(tls.not_after)

        def certificate_reloaded(ok: bool, not_after: Any) -> None:
            metrics.certificate_reloads.labels("success" if ok else "failure").inc()
            if ok:
                metrics.set_certificate(not_after)

        tls.observer = certificate_reloaded

    def apply(new_settings: Settings) -> None:
        api.state.settings = new_settings

    def reloaded(ok: bool) -> None:
        metrics.config_reloads.labels("success" if ok else "failure").inc()

    api.state.reloader = (
        ConfigReloader(
            config_path, apply, reload_interval, observer=reloaded, cluster_version=cluster_version
        )
        if config_path
        else None
    )

    @api.get("/healthz")
    async def healthz() -> Response:
        return PlainTextResponse("ok")

    @api.get("/readyz")
    async def readyz() -> Response:
        # With TLS: ready only once the listener serves a valid, unexpired certificate.
        if not api.state.ready:
            return PlainTextResponse("not ready", status_code=503)
        if tls is not None and not (tls.serving and tls.valid_now()):
            return PlainTextResponse("not ready: TLS not serving a valid certificate", 503)
        return PlainTextResponse("ok")

    if not server_options.health_port:
        # Without a health port the webhook's port serves /metrics; with one, only it does.
        @api.get("/metrics")
        async def metrics_endpoint() -> Response:
            return _metrics_response(metrics)

    app = WebhookApp(api, server_options, metrics, state)
    if api.state.audit is not None:
        # The audit's pages draw on the request bodies' budget (ThreadBudget).
        api.state.audit.memory = partial(ThreadBudget, app.memory)
    return app


app = create_app()


def _leading(registrar: Any) -> Callable[[], bool] | None:
    """Whether this replica leads, when the registrations' Lease elects one (None: no Lease, every
    replica audits)."""
    if registrar is None:
        return None

    def leading() -> bool:
        return registrar.elector is not None and bool(registrar.elector.leading)

    return leading
