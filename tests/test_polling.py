"""The file poller behind certificate and configuration reload."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest

from jobguard.app.server.polling import FilePoller, signature

log = logging.getLogger("tests.polling")


class Rejected(ValueError):
    pass


def test_signature_follows_each_file_and_marks_missing_ones(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("one")
    first = signature([str(a), str(b)])
    assert first[0] is not None and first[0][2] == 3 and first[1] is None
    b.write_text("two!")
    second = signature([str(a), str(b)])
    assert second[0] == first[0] and second[1] is not None and second[1][2] == 4


def test_reloads_once_per_new_version_and_counts_rejections(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    cert.write_text("v1")
    key.write_text("k1")
    seen: list[str] = []
    results: list[bool] = []

    def reload() -> None:
        text = cert.read_text()
        if text == "bad":
            raise Rejected("cannot use 'bad'")
        seen.append(text)

    poller = FilePoller(
        [str(cert), str(key)], reload, (Rejected,), 60, "new pair", log, results.append
    )
    assert poller.check() is False and seen == [] and results == []
    key.write_text("k2 longer")  # either file counts
    assert poller.check() is True and seen == ["v1"]
    assert poller.check() is False  # same version: not read again
    cert.write_text("bad")
    with caplog.at_level(logging.ERROR, "tests.polling"):
        assert poller.check() is False
    assert caplog.messages == ["new pair rejected, keeping the current one: cannot use 'bad'"]
    assert (poller.reloads, poller.failures, poller.last_error) == (1, 1, "cannot use 'bad'")
    assert poller.check() is False and poller.failures == 1  # a rejected version is not retried
    assert poller.check(force=True) is False and poller.failures == 2
    cert.write_text("v3")
    assert poller.check() is True and seen == ["v1", "v3"]
    assert (poller.reloads, poller.failures, poller.last_error) == (2, 2, None)
    assert results == [True, False, False, True]


def test_any_other_error_rejects_the_version_too_with_its_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "f"
    path.write_text("x")
    results: list[bool] = []

    def reload() -> None:
        raise KeyError("a bug")

    poller = FilePoller([str(path)], reload, (Rejected,), 60, "new file", log, results.append)
    with caplog.at_level(logging.ERROR, "tests.polling"):
        assert poller.check(force=True) is False
    assert caplog.messages == [
        f"new file rejected, keeping the current one: {path}: KeyError('a bug')"
    ]
    assert caplog.records[0].exc_info is not None  # a bug: its traceback is logged
    assert (poller.reloads, poller.failures, results) == (0, 1, [False])
    assert poller.last_error == f"{path}: KeyError('a bug')"


def test_safe_check_never_raises(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "f"
    path.write_text("x")

    def observer(ok: bool) -> None:
        raise RuntimeError("metrics broke")

    poller = FilePoller([str(path)], lambda: None, (), 60, "new file", log, observer)
    with pytest.raises(RuntimeError):
        poller.check(force=True)
    with caplog.at_level(logging.ERROR, "tests.polling"):
        assert poller.safe_check(force=True) is False
    assert caplog.messages == ["checking for a new file failed"]


def test_run_survives_every_failure(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_text("1")
    seen: list[str] = []

    def reload() -> None:
        text = path.read_text()
        if text == "22":
            raise RecursionError("maximum recursion depth exceeded")
        seen.append(text)

    poller = FilePoller([str(path)], reload, (), 0.01, "f", log)

    async def scenario() -> None:
        task = asyncio.create_task(poller.run())
        path.write_text("22")
        os.utime(path, ns=(1, 1))
        for _ in range(500):
            if poller.failures:
                break
            await asyncio.sleep(0.01)
        path.write_text("333")
        os.utime(path, ns=(2, 2))
        for _ in range(500):
            if seen:
                break
            await asyncio.sleep(0.01)
        assert not task.done()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())
    assert seen == ["333"] and (poller.reloads, poller.failures) == (1, 1)


def test_run_polls_at_its_interval(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_text("1")
    seen: list[str] = []
    poller = FilePoller([str(path)], lambda: seen.append(path.read_text()), (), 0.01, "f", log)

    async def scenario() -> None:
        task = asyncio.create_task(poller.run())
        path.write_text("22")
        os.utime(path, ns=(1, 1))
        for _ in range(500):
            if seen:
                break
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())
    assert seen == ["22"] and poller.reloads == 1
