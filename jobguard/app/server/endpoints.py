"""The webhook endpoints on the request path (`WebhookApp`): POST /validate and /mutate with a
raw body, one orjson parse and the admission chain; everything else goes to the FastAPI app
that `jobguard.app.server.app.create_app` builds around it.

The code every Job write runs through, kept apart from FastAPI's routing: one coroutine per
request, no dependency injection.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import logging
import re
import socket
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from time import perf_counter
from typing import Any, TypeVar

import orjson
from fastapi import FastAPI

from jobguard.app.admission.review import (
    LOW_MEMORY_PARSE_BYTES,
    RULE_AND_ENFORCEMENT,
    Outcome,
    handle_mutate,
    handle_mutate_envelope,
    handle_mutate_full,
    handle_validate,
)
from jobguard.app.server.heap import give_back
from jobguard.app.server.observability import Metrics, log_fields
from jobguard.validators import Enforcement, Operation, Settings, Violation

request_log = logging.getLogger("jobguard.requests")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_KNOWN_RESOURCES = frozenset({"jobs", "cronjobs"})
_KNOWN_SUBRESOURCES = frozenset({"", "status"})
_OPERATION_LABELS = {operation: operation.value for operation in Operation}
_ENFORCEMENT_LABELS = {enforcement: enforcement.value for enforcement in Enforcement}
_TIMEOUT_PARAM = re.compile(rb"(?:^|&)timeout=(\d+)s(?:&|$)")
INLINE_BODY_BYTES = 256 * 1024
"""Bodies up to this size (every real Job and most status updates) are judged on the event
loop; larger ones in `_LARGE` (see bench/README.md, "pathological bodies") unless they hold
at most INLINE_STRINGS strings."""
INLINE_STRINGS = 20_000
"""What rules iterate over is strings (UIDs, labels, names): a body with few of them, such as
a status update with 64 KiB index lists in both objects, is judged on the loop whatever its
size (a worker thread costs such a request more than judging it: two hand-overs of the
interpreter lock); 20,000 strings are judged in a few milliseconds."""
INLINE_VALUES = 50_000
"""And at most this many commas (values in arrays and objects, commas inside strings such as
index lists): a large body of numbers has no strings, yet a list of 3,500,000 zeros ending in
`1e400` or `NaN` takes the exact decoder a second or more (bench/README.md, "decoder
paths"), which on the event loop every other request would wait for."""
_LARGE = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jobguard-large")
HANDLERS: dict[str, Callable[[bytes, Settings], Outcome]] = {
    "/validate": handle_validate,
    "/mutate": handle_mutate,
}


@dataclass(frozen=True, slots=True)
class ServerOptions:
    max_body_bytes: int = 7 * 1024 * 1024
    """Larger bodies get 413 without being read (etcd keeps objects under 1.5 MiB)."""
    body_timeout: float = 10.0
    """Seconds a client may take to send a body (less when the API server's budget is less)."""
    log_bodies: bool = False
    """Log request objects (they can hold secrets in env values): for debugging only."""
    health_port: int = 0
    """Serve /healthz, /readyz and /metrics over plain HTTP on this port (0: off), for probes
    and scrapers that cannot present the client certificate TLS may require; with it, /metrics
    is served there only."""
    health_host: str = "127.0.0.1"
    """The health port's address (`serve --health-host`, else `--host`)."""
    health_sockets: tuple[socket.socket, ...] = ()
    """The health port's listening sockets, bound by `serve` before it starts (a busy port is
    then named at once); bound at start-up from health_host and health_port without them."""
    memory_budget: int = 96 * 1024 * 1024
    """Bytes the bodies being read and judged may cost at once, decoded (see MemoryBudget);
    beyond it a request waits at most BUDGET_WAIT seconds, then gets 503."""


class WebhookApp:
    """ASGI entry point: the webhook endpoints directly, everything else through FastAPI."""

    def __init__(
        self, api: FastAPI, options: ServerOptions, metrics: Metrics, state: dict[str, Any]
    ) -> None:
        self.api = api
        self.options = options
        self.metrics = metrics
        self._state = state
        """What `api.state` holds (`State(state)`): `settings` is read from it as a dict item,
        as Starlette's State looks attributes up in Python (a third of a microsecond)."""
        self._deadlines = _BodyDeadlines()
        self._too_large = f"body exceeds {options.max_body_bytes} bytes"
        self._budgets: dict[bytes, float] = {}
        self.memory = MemoryBudget(options.memory_budget)

    @property
    def state(self) -> Any:
        return self.api.state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The webhook endpoints in this one coroutine: every await of a helper coroutine and
        # every message built per request is paid on every Job write.
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in HANDLERS:
            await self.api(scope, receive, send)
            return
        endpoint = scope["path"]
        started = perf_counter()
        options = self.options
        declared = _content_length(scope)
        if declared is not None and declared > options.max_body_bytes:
            await self._refuse(send, endpoint, 413, "too_large", self._too_large, started)
            return
        budget = self._budget(scope)
        # The memory the body will cost, decoded, is held from before it is read (from its
        # Content-Length; as its chunks arrive without one) until it is answered.
        hold = _Hold(endpoint)
        memory = self.memory
        in_flight = self.metrics.in_flight
        in_flight[endpoint] += 1
        try:
            if declared is not None and not memory.try_acquire(hold, declared):
                waited = min(BUDGET_WAIT, budget / 2)
                if not await memory.acquire(hold, declared, waited):
                    await self._busy(send, endpoint, waited, started)
                    return
            await self._serve(send, receive, endpoint, budget, hold, declared is None, started)
        finally:
            large = hold.size > INLINE_BODY_BYTES
            memory.release(hold)
            in_flight[endpoint] -= 1
        if large:
            # The body and what was decoded from it are freed now (`_serve` returned): the
            # allocator's free pages go back to the system, in the worker, after any judgement.
            asyncio.get_running_loop().run_in_executor(_LARGE, give_back)

    async def _serve(
        self,
        send: Send,
        receive: Receive,
        endpoint: str,
        budget: float,
        hold: _Hold,
        unsized: bool,
        started: float,
    ) -> None:
        options = self.options
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        assert task is not None  # ASGI apps run in a task
        deadlines = self._deadlines
        deadlines.watch(task, loop, budget)
        try:
            try:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise _Disconnected
                body = message.get("body", b"")
                if len(body) > options.max_body_bytes:
                    raise _TooLarge
                if unsized:
                    await self._account(hold, len(body), budget)
                if message.get("more_body", False):
                    body = await self._read_rest(receive, body, hold if unsized else None, budget)
            finally:
                timed_out = deadlines.done(task)
        except asyncio.CancelledError:
            if not timed_out:
                raise
            task.uncancel()
            reason = f"body not received within {budget:g}s"
            await self._refuse(send, endpoint, 408, "timeout", reason, started)
            return
        except _TooLarge:
            await self._refuse(send, endpoint, 413, "too_large", self._too_large, started)
            return
        except _Busy as busy:
            await self._busy(send, endpoint, busy.waited, started)
            return
        except _Disconnected:
            return
        handler, settings = HANDLERS[endpoint], self._state["settings"]
        if endpoint == "/mutate" and len(body) > LOW_MEMORY_PARSE_BYTES:
            await self._mutate_large(send, endpoint, body, settings, hold, budget, started)
            return
        if judged_inline(body):
            outcome = handler(body, settings)
            await _respond(send, outcome.status, outcome.payload)
            self._observe(endpoint, outcome, perf_counter() - started, body)
            return
        # A large body can take up to a second: judged off the event loop, so other requests
        # wait milliseconds, not the whole judgement; one at a time, so memory stays bounded.
        outcome = await loop.run_in_executor(_LARGE, _without_collector, handler, body, settings)
        await _respond(send, outcome.status, outcome.payload)
        seconds = perf_counter() - started
        await loop.run_in_executor(_LARGE, self._observe, endpoint, outcome, seconds, body)

    async def _mutate_large(
        self,
        send: Send,
        endpoint: str,
        body: bytes,
        settings: Settings,
        hold: _Hold,
        budget: float,
        started: float,
    ) -> None:
        """/mutate of a body over LOW_MEMORY_PARSE_BYTES: its envelope read (charged at
        MUTATE_LARGE_COST); when that cannot read it, the whole body decoded as /validate
        decodes it, charged at that cost before it starts (503 when the budget has no room)."""
        outcome = await _judge(handle_mutate_envelope, body, settings)
        if outcome is None:
            hold.path = FULL_PARSE
            waited = min(BUDGET_WAIT, budget / 2)
            if not await self.memory.acquire(hold, hold.size, waited):
                await self._busy(send, endpoint, waited, started)
                return
            outcome = await _judge(handle_mutate_full, body, settings)
        await _respond(send, outcome.status, outcome.payload)
        seconds = perf_counter() - started
        if judged_inline(body):
            self._observe(endpoint, outcome, seconds, body)
        else:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(_LARGE, self._observe, endpoint, outcome, seconds, body)

    async def _account(self, hold: _Hold, size: int, budget: float) -> None:
        """Hold the memory of a body without a Content-Length, now `size` bytes read."""
        if not self.memory.try_acquire(hold, size):
            waited = min(BUDGET_WAIT, budget / 2)
            if not await self.memory.acquire(hold, size, waited):
                raise _Busy(waited)

    async def _busy(self, send: Send, endpoint: str, waited: float, started: float) -> None:
        memory = self.memory
        reason = (
            f"server busy: the bodies being read and judged hold its memory budget "
            f"({memory.used >> 20} of {memory.capacity >> 20} MiB, decoded) and none was "
            f"freed for this one within {waited:g}s; retry"
        )
        await self._refuse(send, endpoint, 503, "busy", reason, started)

    async def _refuse(
        self, send: Send, endpoint: str, status: int, verdict: str, reason: str, started: float
    ) -> None:
        """Answer a body that was not read (413, 408, 503): counted and logged with its reason. The
        connection is closed after it (the rest of the body would be read as a request)."""
        await _respond(send, status, {"error": reason}, close=True)
        seconds = perf_counter() - started
        self.metrics.count_request(endpoint.strip("/"), "", "other", "", verdict, seconds)
        fields = {"endpoint": endpoint.strip("/"), "verdict": verdict, "reason": reason}
        request_log.info("admission request refused", extra={"fields": fields})

    def _budget(self, scope: Scope) -> float:
        """The API server's `?timeout=Ns` (time left for the call), capped by our own limit."""
        query = scope.get("query_string", b"")
        budget = self._budgets.get(query)
        if budget is None:
            match = _TIMEOUT_PARAM.search(query)
            limit = self.options.body_timeout
            budget = min(limit, float(match.group(1))) if match else limit
            # An API server sends one query per webhook: kept, and never more than a few.
            if len(self._budgets) < 64:
                self._budgets[query] = budget
        return budget

    async def _read_rest(
        self, receive: Receive, first: bytes, hold: _Hold | None, budget: float
    ) -> bytes:
        """The body after its first message (`first`), which said more was coming; its memory
        held as it arrives when `hold` is given (a body without a Content-Length)."""
        chunks = [first]
        size = len(first)
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Disconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.options.max_body_bytes:
                raise _TooLarge
            if hold is not None:
                await self._account(hold, size, budget)
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    def _observe(self, endpoint: str, outcome: Outcome, seconds: float, body: bytes) -> None:
        parsed = outcome.parsed
        request = parsed.request if parsed is not None else None
        verdict = outcome.result
        if parsed is None or request is None:
            self.metrics.count_request(endpoint.strip("/"), "", "other", "", verdict, seconds)
        else:
            # Label values from the request are bounded to known ones: a client must not be
            # able to create series at will.
            resource, subresource = parsed.resource, request.subresource
            self.metrics.count_request(
                endpoint.strip("/"),
                _OPERATION_LABELS[request.operation],
                resource if resource in _KNOWN_RESOURCES else "other",
                subresource if subresource in _KNOWN_SUBRESOURCES else "other",
                verdict,
                seconds,
            )
        # Counted per rule (a request can carry 250,000 violations of one rule); the log names
        # each rule that fired once.
        judged = outcome.verdict
        fired: dict[tuple[str, Enforcement, str], int] = {}
        violations: list[Violation] = []
        if judged is not None and judged.violations:
            # A single violation is its own unique list (as response_for has it).
            violations = judged.violations if len(judged.violations) == 1 else judged.unique()
            for violation in violations:
                key = (*RULE_AND_ENFORCEMENT(violation), violation.error.policy)
                fired[key] = fired.get(key, 0) + violation.error.stands_for
            operation = _OPERATION_LABELS[request.operation] if request is not None else ""
            for (rule, enforcement, policy), count in fired.items():
                self.metrics.count_violations(
                    rule, _ENFORCEMENT_LABELS[enforcement], policy, operation, count
                )
        if not request_log.isEnabledFor(logging.INFO):
            return
        rules = list(dict.fromkeys(rule for rule, _, _ in fired))
        fields: dict[str, Any] = {
            "endpoint": endpoint.strip("/"),
            "verdict": verdict,
            "latency_ms": round(seconds * 1000, 3),
        }
        if request is not None and parsed is not None:
            fields.update(
                uid=parsed.uid,
                kind=request.kind,
                namespace=request.namespace,
                name=outcome.verdict.name if outcome.verdict is not None else request.name,
                operation=request.operation.value,
                subresource=request.subresource,
                user=request.requester.username,
                dry_run=request.dry_run,
                rules=rules,
            )
        if request is not None and violations:
            # What an operator answers a user with: each rule's first message, its field and
            # policy, and who asked (groups decide exemptions and controllers).
            fields["violations"] = _logged_violations(violations)
            fields["groups"] = list(request.requester.groups)
        if outcome.error is not None:
            fields["reason"] = outcome.error
        if outcome.patched:
            fields["patched"] = True
        if self.options.log_bodies:
            fields["body"] = body.decode("utf-8", "replace")
        log_fields(request_log, "admission request", fields)
        if request_log.isEnabledFor(logging.DEBUG) and request is not None and parsed is not None:
            request_log.debug(
                "admission request details",
                extra={
                    "fields": {
                        "uid": parsed.uid,
                        "body_bytes": len(body),
                        "judged_in": "thread" if not judged_inline(body) else "loop",
                        "groups": list(request.requester.groups),
                        "old_object": request.old_object is not None,
                        "violations": _logged_violations(violations, limit=100, every=True),
                        "allowed": outcome.review["response"]["allowed"]
                        if outcome.review is not None
                        else None,
                    }
                },
            )


LOGGED_VIOLATIONS = 10
"""A denial's log line names at most this many distinct rules' messages (the response has all)."""


def _logged_violations(
    violations: list[Violation], limit: int = LOGGED_VIOLATIONS, every: bool = False
) -> list[dict[str, str]]:
    """Each rule's first violation (every violation with `every`): rule, enforcement, field,
    message and policy."""
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for violation in violations:
        error = violation.error
        if not every and error.rule in seen:
            continue
        seen.add(error.rule)
        entry = {
            "rule": error.rule,
            "enforcement": _ENFORCEMENT_LABELS[violation.enforcement],
            "field": error.path,
            "message": error.body(),
        }
        if error.policy:
            entry["policy"] = error.policy
        out.append(entry)
        if len(out) >= limit:
            break
    return out


def judged_inline(body: bytes) -> bool:
    """Whether a body is judged on the event loop (see INLINE_BODY_BYTES, INLINE_STRINGS,
    INLINE_VALUES)."""
    # Counting runs in C (about 0.3 ms a MiB); escaped quotes only make it safer.
    return len(body) <= INLINE_BODY_BYTES or (
        body.count(b'"') <= 2 * INLINE_STRINGS and body.count(b",") <= INLINE_VALUES
    )


T = TypeVar("T")


async def _judge(handler: Callable[[bytes, Settings], T], body: bytes, settings: Settings) -> T:
    """`handler(body, settings)` on the event loop when `judged_inline`, else in `_LARGE`."""
    if judged_inline(body):
        return handler(body, settings)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_LARGE, _without_collector, handler, body, settings)


def _without_collector(
    handler: Callable[[bytes, Settings], T], body: bytes, settings: Settings
) -> T:
    """Judge a large body with the cyclic garbage collector paused: such a body can make
    hundreds of thousands of objects (an error per UID of a 250,000-UID list) that all live
    until the answer, and the collector would walk them again and again (about half of that
    judgement's time); they form no cycles it would have to find. Only this one worker thread
    pauses it, for one judgement at a time."""
    if not gc.isenabled():
        return handler(body, settings)
    gc.disable()
    try:
        return handler(body, settings)
    finally:
        gc.enable()


DECODED_COST = 28
"""Bytes of memory a body's byte can cost while it is judged, whichever decoder reads it
(orjson up to LOW_MEMORY_PARSE_BYTES, the standard library's beyond, the exact decoder for
values orjson refuses): 28 measured for the costliest shape known, a Job of small containers
(`{"name":"c1","image":"i"}`, 270,000 in 6.7 MiB: a `tracemalloc` peak of 189 MiB for
`handle_validate`), against 13 for a status update of UIDs, less for string-heavy objects, and
6 for the exact decoder's list of zeros ending in `1e400` (bench/README.md, "decoder paths":
`bench.bench_memory` measures each path's worst shapes)."""
MUTATE_LARGE_COST = 3
"""The same for /mutate's bytes beyond LOW_MEMORY_PARSE_BYTES when its envelope alone reads
them (`review.handle_mutate_envelope`): the body and its chunks while being read. A body the
envelope cannot read is charged DECODED_COST (FULL_PARSE) before it is decoded whole."""
FULL_PARSE = "/validate"
"""The path whose cost a /mutate body is charged when it is decoded whole."""
BUDGET_WAIT = 3.0
"""Seconds at most a request waits for memory (less when the API server's `?timeout=` is
shorter: half of it), then 503: within the API server's budget for the call, so it can apply
the webhook's failurePolicy or retry instead of timing out."""


def body_cost(endpoint: str, size: int) -> int:
    """What a body of `size` bytes costs the budget on `endpoint` (see DECODED_COST)."""
    if endpoint == "/mutate" and size > LOW_MEMORY_PARSE_BYTES:
        large = size - LOW_MEMORY_PARSE_BYTES
        return DECODED_COST * LOW_MEMORY_PARSE_BYTES + MUTATE_LARGE_COST * large
    return DECODED_COST * size


class _Hold:
    """What one request holds of the budget: `small` under the small bodies' share, `large`
    under the large ones' (see MemoryBudget)."""

    __slots__ = ("background", "cost", "large", "path", "size", "small")

    def __init__(self, path: str, background: bool = False) -> None:
        self.path = path
        """How the body is decoded (`body_cost`): its endpoint, FULL_PARSE once /mutate's
        envelope could not read it."""
        self.background = background
        """The background audit's pages (`ThreadBudget`): held in the large share whatever
        their size, and behind every request."""
        self.size = 0
        """The body's bytes accounted for (its Content-Length, or what has arrived)."""
        self.cost = 0
        """`body_cost` of them on `path` (before the large share's cap)."""
        self.small = 0
        self.large = 0


class MemoryBudget:
    """The memory of the bodies being read and judged, decoded (`body_cost`), bounded at
    `capacity` bytes in total; requests beyond it wait (bounded by the caller) for others to be
    answered.

    A body over INLINE_BODY_BYTES counts as large, and large bodies together hold at most
    seven eighths of the capacity, so small reviews (every real Job) always have room beside
    them. One body costing more than the large share holds the whole share (it is judged with
    no other large body in memory) rather than never being judged. Waiters are served in
    arrival order among those that fit: a small body never waits behind a large one. Used on
    one event loop only (no lock).
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.large_capacity = capacity - capacity // 8
        self.used = 0
        self.large_used = 0
        self._waiters: deque[tuple[_Hold, int, asyncio.Future[None]]] = deque()

    def _grant(self, hold: _Hold, size: int) -> bool:
        """Account `hold` at `size` bytes of body if that fits now."""
        cost = body_cost(hold.path, size)
        added = cost - hold.cost
        if size > INLINE_BODY_BYTES or hold.background:
            # A large body's cost is capped at the large share (held alone, see above).
            large = min(hold.large + added, self.large_capacity)
            added = large - hold.large
            if added > 0 and (
                self.large_used + added > self.large_capacity or self.used + added > self.capacity
            ):
                return False
            hold.large += added
            self.large_used += added
        else:
            if added > 0 and self.used + added > self.capacity:
                return False
            hold.small += added
        self.used += added
        hold.size, hold.cost = size, cost
        return True

    def try_acquire(self, hold: _Hold, size: int) -> bool:
        """Without waiting: whether `hold` now holds a `size`-byte body's cost."""
        return not self._waiters_before(hold, size) and self._grant(hold, size)

    def _waiters_before(self, hold: _Hold, size: int) -> bool:
        """Whether a waiter was there first for the same share (a large body does not pass a
        large one already waiting; a small one passes any large one; a request passes the
        background audit, which passes nothing)."""
        if hold.background:
            return bool(self._waiters)
        large = size > INLINE_BODY_BYTES
        return any(
            (large or waiter_size <= INLINE_BODY_BYTES) and not waiter.background
            for waiter, waiter_size, _ in self._waiters
        )

    async def acquire(self, hold: _Hold, size: int, timeout: float) -> bool:
        """Wait at most `timeout` seconds for `hold` to hold a `size`-byte body's cost."""
        if self.try_acquire(hold, size):
            return True
        waiter = asyncio.get_running_loop().create_future()
        entry = (hold, size, waiter)
        self._waiters.append(entry)
        try:
            await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            return waiter.done() and not waiter.cancelled()  # granted as the wait ran out
        finally:
            if entry in self._waiters:
                self._waiters.remove(entry)
        return True

    def release(self, hold: _Hold) -> None:
        """Give back all `hold` holds, and grant the waiters that now fit, in order."""
        self.used -= hold.small + hold.large
        self.large_used -= hold.large
        hold.small = hold.large = hold.size = hold.cost = 0
        # Requests first, in arrival order; the background audit after them (stable sort).
        for entry in sorted(self._waiters, key=lambda entry: entry[0].background):
            waiter_hold, size, waiter = entry
            if waiter.done():
                continue
            if self._grant(waiter_hold, size):
                self._waiters.remove(entry)
                waiter.set_result(None)

    @property
    def waiting(self) -> int:
        return len(self._waiters)


AUDIT_WAIT = 60.0
"""Seconds at most a page of the background audit waits for memory held by requests (then
the pass fails, counted and logged; the next one starts afresh)."""


class ThreadBudget:
    """`budget`, on the event loop `loop`, as the background audit's worker thread draws on it
    (`client.PageMemory`): a list page's decoded cost (DECODED_COST a byte) is held before the
    page is decoded and given back once its objects are judged, so the audit and the request
    bodies together stay within the budget. The audit holds the large share (as a large body
    would) and waits behind every request: small reviews never wait for it."""

    def __init__(self, budget: MemoryBudget, loop: asyncio.AbstractEventLoop) -> None:
        self._budget = budget
        self._loop = loop
        self._hold = _Hold(FULL_PARSE, background=True)

    def _on_loop(self, coroutine: Coroutine[Any, Any, T], seconds: float) -> T | None:
        """`coroutine`'s result, run on the loop; None when the loop is gone or too slow."""
        try:
            future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        except RuntimeError:  # the loop is closed (the server is stopping)
            coroutine.close()
            return None
        try:
            return future.result(seconds)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return None

    def take(self, size: int) -> bool:
        """Hold the decoded cost of a `size`-byte answer (instead of anything held before),
        waiting at most AUDIT_WAIT seconds; False when it could not be had."""
        self.give_back()
        budget, hold = self._budget, self._hold
        return bool(self._on_loop(budget.acquire(hold, size, AUDIT_WAIT), AUDIT_WAIT + 5))

    def give_back(self) -> None:
        """Give back what the audit holds (nothing held: nothing given back)."""

        async def release() -> None:
            self._budget.release(self._hold)

        self._on_loop(release(), 5.0)


DEADLINE_RESOLUTION = 0.1
"""Seconds between checks of the body deadlines: a body is cut at most this late."""


class _BodyDeadlines:
    """When the requests being read must have sent their bodies. One timer checks them all
    every DEADLINE_RESOLUTION seconds and cancels the late ones: a timer per request (what
    asyncio.timeout sets) costs, on uvloop, as much as reading a small review's metadata."""

    def __init__(self) -> None:
        self._reading: dict[asyncio.Task[Any], float] = {}
        self._expired: set[asyncio.Task[Any]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None

    def watch(
        self, task: asyncio.Task[Any], loop: asyncio.AbstractEventLoop, seconds: float
    ) -> None:
        """Cancel `task`, running on `loop`, if it is still watched in `seconds`."""
        if loop is not self._loop:  # another loop (tests run one per call): start afresh
            self._loop, self._timer = loop, None
            self._reading.clear()
            self._expired.clear()
        self._reading[task] = loop.time() + seconds
        if self._timer is None:
            self._timer = loop.call_later(DEADLINE_RESOLUTION, self._check)

    def done(self, task: asyncio.Task[Any]) -> bool:
        """Stop watching `task`; True when its deadline passed (and it was cancelled for it)."""
        self._reading.pop(task, None)
        if task in self._expired:
            self._expired.discard(task)
            return True
        return False

    def _check(self) -> None:
        assert self._loop is not None
        now = self._loop.time()
        for task, deadline in list(self._reading.items()):
            if deadline <= now:
                del self._reading[task]
                self._expired.add(task)
                task.cancel()
        self._timer = (
            self._loop.call_later(DEADLINE_RESOLUTION, self._check) if self._reading else None
        )


class _TooLarge(Exception):
    pass


class _Busy(Exception):
    def __init__(self, waited: float) -> None:
        self.waited = waited


class _Disconnected(Exception):
    pass


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


_JSON = (b"content-type", b"application/json")
_CLOSE = (b"connection", b"close")


async def _respond(send: Send, status: int, payload: object, close: bool = False) -> None:
    body = orjson.dumps(payload)
    headers = [_JSON, (b"content-length", b"%d" % len(body))]
    if close:
        headers.append(_CLOSE)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
