"""Reloading the configuration file when it changes on disk, and on SIGHUP.

Kubernetes updates a mounted ConfigMap by swapping a symlink (`..data`), which emits no useful
event on the file itself, so the file is polled: `os.stat` follows the symlinks, and a new
inode, size or mtime means a new version. A bad new version is rejected, logged and counted;
the last good settings stay in force. Requests read the settings once, so none is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass, field

from jobguard.app.config import ConfigError, load_config
from jobguard.validators import Settings

log = logging.getLogger("jobguard.config")

Signature = tuple[int, int, int, int]


def _signature(path: str) -> Signature | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass
class ConfigReloader:
    path: str
    apply: Callable[[Settings], None]
    interval: float = 2.0
    observer: Callable[[bool], None] | None = None
    """Told the result of every reload attempt (metrics)."""
    reloads: int = 0
    failures: int = 0
    last_error: str | None = None
    _signature: Signature | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._signature = _signature(self.path)

    def check(self, force: bool = False) -> bool:
        """Reload if the file changed (or `force`); True when new settings were applied."""
        signature = _signature(self.path)
        if not force and signature == self._signature:
            return False
        self._signature = signature
        try:
            settings = load_config(self.path).to_settings()
        except ConfigError as exc:
            self.failures += 1
            self.last_error = str(exc)
            log.error("configuration reload rejected, keeping the last good one: %s", exc)
            if self.observer is not None:
                self.observer(False)
            return False
        self.apply(settings)
        self.reloads += 1
        self.last_error = None
        if self.observer is not None:
            self.observer(True)
        log.info("configuration reloaded from %s", self.path)
        return True

    async def run(self) -> None:
        """Poll until cancelled; SIGHUP forces a reload when the loop can take signals."""
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGHUP, lambda: self.check(force=True))
        try:
            while True:
                await asyncio.sleep(self.interval)
                self.check()
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signal.SIGHUP)
