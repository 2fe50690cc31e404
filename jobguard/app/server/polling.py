"""Files that Kubernetes mounts (ConfigMaps, Secrets), watched for a new version.

A mounted ConfigMap or Secret changes by a symlink swap (`..data`) that emits no useful file
event, so the files are polled: `os.stat` follows the symlinks, and a new device, inode, size or
mtime of any of them means a new version. The owner's `reload` takes it or raises; a rejected
version is logged and counted and the owner keeps the last good one. `rejects` are the expected
reasons (logged as one line); any other exception rejects the version too, logged with its
traceback: a file that trips up its reader must not stop the watching. Every attempt is told to
the observer (metrics).

`run` (the polling task) takes a changed version only once its files have kept the same
signature for `settle` seconds (a file rewritten in place is not read half-written), reads it
in a worker thread when `in_thread` (a 1 MiB configuration takes over a second to parse, which
on the event loop every request would wait for), and coalesces forced checks (SIGHUP): however
many arrive, at most one read per `min_gap` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Sequence

FileStat = tuple[int, int, int, int]
Signature = tuple[FileStat | None, ...]


def signature(paths: Sequence[str]) -> Signature:
    """(device, inode, size, mtime) of each file, None for one that cannot be read."""
    out: list[FileStat | None] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            out.append(None)
        else:
            out.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


class FilePoller:
    def __init__(
        self,
        paths: Sequence[str],
        reload: Callable[[], None],
        rejects: tuple[type[Exception], ...],
        interval: float,
        subject: str,
        logger: logging.Logger,
        observer: Callable[[bool], None] | None = None,
        settle: float = 0.0,
        min_gap: float = 0.0,
        in_thread: bool = False,
    ) -> None:
        self.paths = tuple(paths)
        self.settle = settle
        self.min_gap = min_gap
        self.in_thread = in_thread
        self._forced = False
        self._wake: asyncio.Event | None = None
        self.reload = reload
        self.rejects = rejects
        self.interval = interval
        self.subject = subject
        """What a new version is called in the log ("new certificate")."""
        self.log = logger
        self.observer = observer
        self.reloads = 0
        self.failures = 0
        self.last_error: str | None = None
        self._signature = signature(self.paths)

    def check(self, force: bool = False) -> bool:
        """Reload if a file changed (or `force`); True when the new version was taken."""
        current = signature(self.paths)
        if not force and current == self._signature:
            return False
        self._signature = current
        try:
            self.reload()
        except Exception as exc:  # every failure is a rejected version
            expected = isinstance(exc, self.rejects)
            reason = str(exc) if expected else f"{', '.join(self.paths)}: {exc!r}"
            self.failures += 1
            self.last_error = reason
            self.log.error(
                "%s rejected, keeping the current one: %s",
                self.subject,
                reason,
                exc_info=None if expected else exc,
            )
            if self.observer is not None:
                self.observer(False)
            return False
        self.reloads += 1
        self.last_error = None
        if self.observer is not None:
            self.observer(True)
        return True

    async def run(self) -> None:
        """Poll until cancelled (see the module's docstring: settled, coalesced, threaded)."""
        loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        next_poll = loop.time() + self.interval
        while True:
            if not self._forced:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), max(0.0, next_poll - loop.time()))
            self._wake.clear()
            force, self._forced = self._forced, False
            started = loop.time()
            if force or signature(self.paths) != self._signature:
                await self._settled()
                if self.in_thread:
                    await loop.run_in_executor(None, self.safe_check, force)
                else:
                    self.safe_check(force)
            next_poll = started + self.interval
            # Forced checks that arrive meanwhile wait for the gap, then are taken as one.
            await asyncio.sleep(max(0.0, started + self.min_gap - loop.time()))

    def force(self) -> None:
        """Ask the running `run` for a check now (a signal handler's call): coalesced."""
        self._forced = True
        if self._wake is not None:
            self._wake.set()

    async def _settled(self, rounds: int = 20) -> None:
        """Wait until the files have kept one signature for `settle` seconds (at most `rounds`
        waits: a file that never stops changing is read as it is then, and rejected if broken)."""
        if self.settle <= 0:
            return
        seen = signature(self.paths)
        for _ in range(rounds):
            await asyncio.sleep(self.settle)
            now = signature(self.paths)
            if now == seen:
                return
            seen = now

    def safe_check(self, force: bool = False) -> bool:
        """`check` that never raises (the polling task, a signal handler): an error of the
        check itself (the observer's, say) is logged, and the next check comes as usual."""
        try:
            return self.check(force)
        except Exception:
            self.log.exception("checking for a %s failed", self.subject)
            return False


class Polled:
    """An owner of a `FilePoller` (the configuration, the certificate): its counts and checks,
    read as the owner's own."""

    poller: FilePoller

    @property
    def reloads(self) -> int:
        return self.poller.reloads

    @property
    def failures(self) -> int:
        return self.poller.failures

    @property
    def last_error(self) -> str | None:
        return self.poller.last_error

    def check(self, force: bool = False) -> bool:
        """Reload if a file changed (or `force`); True when the new version was taken."""
        return self.poller.check(force)

    async def run(self) -> None:
        """Poll until cancelled."""
        await self.poller.run()
