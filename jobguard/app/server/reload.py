"""Reloading the configuration file when it changes on disk, and on SIGHUP.

The file is polled like a mounted ConfigMap must be (`app.polling`). A bad new version is
rejected, logged and counted; the last good settings stay in force, whatever went wrong in
reading it (a file caught empty mid-write, nested too deep, too large, or one the loader fails
on). Requests read the settings once, so none is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable

from jobguard.app.config import ConfigError, config_warnings, load_config, log_fields
from jobguard.app.server.polling import FilePoller, Polled
from jobguard.validators import Settings

log = logging.getLogger("jobguard.config")


class ConfigReloader(Polled):
    def __init__(
        self,
        path: str,
        apply: Callable[[Settings], None],
        interval: float = 2.0,
        observer: Callable[[bool], None] | None = None,
        cluster_version: str | None = None,
    ) -> None:
        """`observer` is told the result of every reload attempt (metrics); `cluster_version`
        is what `kubernetesVersion: auto` means (read from the cluster at start)."""
        self.path = path
        self.cluster_version = cluster_version
        self.apply = apply
        self.poller = FilePoller(
            [path], self._reload, (ConfigError,), interval, "new configuration", log, observer
        )

    def _reload(self) -> None:
        settings = load_config(self.path).to_settings(self.cluster_version)
        self.apply(settings)
        for warning in config_warnings(settings):
            log.warning("configuration %s: %s", self.path, warning)
        log.info(
            "configuration reloaded from %s",
            self.path,
            extra={"fields": log_fields(settings, self.path)},
        )

    async def run(self) -> None:
        """Poll until cancelled; SIGHUP forces a reload when the loop can take signals."""
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            # safe_check never raises: no file, however broken, may take the server down.
            loop.add_signal_handler(signal.SIGHUP, lambda: self.poller.safe_check(force=True))
        try:
            await super().run()
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signal.SIGHUP)
