"""Reloading the configuration file when it changes on disk, and on SIGHUP.

The file is polled like a mounted ConfigMap must be (`app.polling`), read in a worker thread once
it has settled, and SIGHUPs coalesced. A bad new version is
rejected, logged and counted; the last good settings stay in force, whatever went wrong in
reading it (a file caught empty mid-write, nested too deep, too large, or one the loader fails
on). Requests read the settings once, so none is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import signal
from collections.abc import Callable

from jobguard.app.config import (
    ConfigError,
    config_warnings,
    log_fields,
    parse_config,
    read_config_text,
)
from jobguard.app.server.polling import FilePoller, Polled
from jobguard.validators import Settings

log = logging.getLogger("jobguard.config")


SETTLE_SECONDS = 0.5
"""A changed file is read once it has stayed unchanged this long: an editor or `kubectl cp`
rewriting it in place is not caught at a valid prefix (all policies dropped until the write
ends). A ConfigMap's symlink swap is atomic and only waits this long."""
MIN_GAP_SECONDS = 1.0
"""At most one read per this many seconds, however many SIGHUPs arrive (50 SIGHUPs parsed 50
times stalled a request 16 s)."""


class ConfigReloader(Polled):
    def __init__(
        self,
        path: str,
        apply: Callable[[Settings], None],
        interval: float = 2.0,
        observer: Callable[[bool], None] | None = None,
        cluster_version: str | None = None,
        settle: float = SETTLE_SECONDS,
        min_gap: float = MIN_GAP_SECONDS,
    ) -> None:
        """`observer` is told the result of every reload attempt (metrics); `cluster_version`
        is what `kubernetesVersion: auto` means (read from the cluster at start); `settle` and
        `min_gap` as in `polling.FilePoller` (SETTLE_SECONDS, MIN_GAP_SECONDS)."""
        self.path = path
        self.cluster_version = cluster_version
        self.apply = apply
        self._applied_digest: bytes | None = None
        """The SHA-256 of the text last applied: a SIGHUP storm over an unchanged file parses it
        once, not once a second (each parse of a 1 MiB file holds the interpreter ~1 s)."""
        self.poller = FilePoller(
            [path],
            self._reload,
            (ConfigError,),
            interval,
            "new configuration",
            log,
            observer,
            settle=settle,
            min_gap=min_gap,
            in_thread=True,
        )

    def _reload(self) -> None:
        text = read_config_text(self.path)
        digest = hashlib.sha256(text.encode()).digest()
        if digest == self._applied_digest:
            log.debug("configuration %s unchanged since it was applied", self.path)
            return
        settings = parse_config(text, self.path).to_settings(self.cluster_version)
        self.apply(settings)
        self._applied_digest = digest
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
            # The polling task reads the file (coalesced, off the loop); its checks never raise:
            # no file, however broken, may take the server down.
            loop.add_signal_handler(signal.SIGHUP, self.poller.force)
        try:
            await super().run()
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signal.SIGHUP)
