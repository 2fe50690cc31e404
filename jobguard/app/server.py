"""uvicorn with a graceful stop for Kubernetes.

On SIGTERM the pod is removed from the Service endpoints only after readiness fails and the
endpoints controller catches up, so the server first turns `/readyz` false and keeps serving
for `shutdown_delay` seconds; then uvicorn closes the listener and lets in-flight requests
finish within its graceful-shutdown timeout. A second signal stops at once.
"""

from __future__ import annotations

import logging
import threading
from types import FrameType
from typing import Any

import uvicorn

log = logging.getLogger("jobguard")


class GracefulServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, app: Any, shutdown_delay: float) -> None:
        super().__init__(config)
        self.jobguard_app = app
        self.shutdown_delay = shutdown_delay
        self._draining = False

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        tls = getattr(self.jobguard_app.state, "tls", None)
        if tls is not None and self.started:
            tls.serving = True  # /readyz may now say ready
        if self.started:  # the port is bound: only now is the server ready
            settings = self.jobguard_app.state.settings
            log.info("jobguard ready (kubernetesVersion %s)", settings.semantics.version)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self._draining or self.shutdown_delay <= 0:
            self.jobguard_app.state.ready = False
            super().handle_exit(sig, frame)
            return
        self._draining = True
        self.jobguard_app.state.ready = False
        log.info("stopping: not ready, serving %.1fs more before closing", self.shutdown_delay)
        timer = threading.Timer(self.shutdown_delay, super().handle_exit, args=(sig, frame))
        timer.daemon = True
        timer.start()
