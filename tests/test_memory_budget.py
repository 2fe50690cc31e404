"""The memory budget of the bodies being read and judged (`webhook.MemoryBudget`): its
accounting and its bounded waiting (the server under load: test_server_limits)."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from collections.abc import Callable

import orjson
import pytest

from jobguard.app.admission import exact_json as jsonfallback
from jobguard.app.admission.review import (
    LOW_MEMORY_PARSE_BYTES,
    Outcome,
    handle_mutate,
    handle_validate,
)
from jobguard.app.server.app import create_app
from jobguard.app.server.endpoints import (
    DECODED_COST,
    FULL_PARSE,
    INLINE_BODY_BYTES,
    MUTATE_LARGE_COST,
    MemoryBudget,
    _Hold,
    body_cost,
)
from jobguard.validators import Settings
from tests.asgi import drive
from tests.builders import job
from tests.reviews import review

MIB = 1024 * 1024


def test_a_body_costs_its_size_times_the_decoded_cost() -> None:
    assert body_cost("/validate", 1000) == 1000 * DECODED_COST
    assert body_cost("/mutate", 1000) == 1000 * DECODED_COST
    # /mutate decodes only a few fields of a body over LOW_MEMORY_PARSE_BYTES.
    beyond = LOW_MEMORY_PARSE_BYTES + 5 * MIB
    assert body_cost("/mutate", beyond) == (
        LOW_MEMORY_PARSE_BYTES * DECODED_COST + 5 * MIB * MUTATE_LARGE_COST
    )


def test_holds_are_accounted_and_given_back() -> None:
    budget = MemoryBudget(64 * MIB)
    small, large = _Hold("/validate"), _Hold("/validate")
    assert budget.try_acquire(small, 10_000)
    assert budget.used == 10_000 * DECODED_COST and budget.large_used == 0
    assert budget.try_acquire(large, MIB)
    assert budget.large_used == MIB * DECODED_COST
    assert budget.used == (MIB + 10_000) * DECODED_COST
    # A body read in chunks grows its hold: only the difference is added.
    assert budget.try_acquire(small, 20_000)
    assert budget.used == (MIB + 20_000) * DECODED_COST
    budget.release(small)
    budget.release(large)
    assert (budget.used, budget.large_used) == (0, 0)
    budget.release(large)  # nothing held: nothing given back twice
    assert budget.used == 0


def test_large_bodies_leave_room_for_small_ones() -> None:
    budget = MemoryBudget(64 * MIB)
    assert budget.large_capacity == 56 * MIB
    first, second = _Hold("/validate"), _Hold("/validate")
    assert budget.try_acquire(first, 3 * MIB // 2)  # 42 MiB
    assert not budget.try_acquire(second, MIB)  # 28 MiB more: over the large share
    assert second.size == 0 and budget.used == 3 * MIB // 2 * DECODED_COST
    smalls = [_Hold("/validate") for _ in range(3)]
    assert all(budget.try_acquire(hold, INLINE_BODY_BYTES) for hold in smalls)  # 7 MiB each
    assert budget.used == budget.large_used + 3 * INLINE_BODY_BYTES * DECODED_COST


def test_a_body_costing_more_than_the_large_share_holds_all_of_it() -> None:
    budget = MemoryBudget(64 * MIB)
    huge = _Hold("/validate")
    assert budget.try_acquire(huge, 7 * MIB)  # 196 MiB, capped: judged alone
    assert budget.large_used == budget.large_capacity == huge.large
    assert not budget.try_acquire(_Hold("/validate"), INLINE_BODY_BYTES + 1)
    assert budget.try_acquire(_Hold("/validate"), 4096)
    budget.release(huge)
    assert budget.large_used == 0


def test_waiters_are_granted_when_memory_is_given_back() -> None:
    async def scenario() -> list[str]:
        budget = MemoryBudget(64 * MIB)
        order: list[str] = []
        first = _Hold("/validate")
        assert budget.try_acquire(first, 2 * MIB)  # holds the large share

        async def request(name: str, size: int, timeout: float) -> None:
            hold = _Hold("/validate")
            granted = await budget.acquire(hold, size, timeout)
            order.append(f"{name} {'granted' if granted else 'refused'}")
            if granted:
                budget.release(hold)

        waiting = [
            asyncio.create_task(request("large", 2 * MIB, 5.0)),
            asyncio.create_task(request("late", 2 * MIB, 0.05)),
        ]
        await asyncio.sleep(0.01)
        # A small body passes the large ones waiting.
        await request("small", 1000, 0.0)
        assert budget.waiting == 2
        await asyncio.sleep(0.1)  # "late" gave up
        budget.release(first)
        await asyncio.gather(*waiting)
        assert budget.used == 0 and budget.waiting == 0
        return order

    assert asyncio.run(scenario()) == ["small granted", "late refused", "large granted"]


def test_the_audit_holds_the_large_share_and_requests_pass_it() -> None:
    """A page of the background audit is held in the large share whatever its size: a large
    body waits for it (then 503, BUDGET_WAIT), a small one does not; given back, a request
    waiting is granted before the audit even when the audit waited first."""

    async def scenario() -> list[str]:
        budget = MemoryBudget(64 * MIB)
        audit = _Hold(FULL_PARSE, background=True)
        assert budget.try_acquire(audit, 1000)  # a small page: still the large share
        assert budget.large_used == budget.used == 1000 * DECODED_COST
        budget.release(audit)
        assert budget.try_acquire(audit, 3 * MIB)  # one Job near etcd's limit: the share
        assert budget.large_used == budget.large_capacity
        large = _Hold("/validate")
        assert not await budget.acquire(large, INLINE_BODY_BYTES + 1, 0.05)
        small = _Hold("/validate")
        assert budget.try_acquire(small, 4096)
        budget.release(small)
        budget.release(audit)
        # Vice versa: a large body holds the share; the audit waits, and a later request
        # passes it.
        order: list[str] = []
        assert budget.try_acquire(large, 2 * MIB)

        async def take(name: str, hold: _Hold) -> None:
            granted = await budget.acquire(hold, 2 * MIB, 5.0)
            order.append(f"{name} {'granted' if granted else 'refused'}")

        later = _Hold("/validate")
        waiting = [asyncio.create_task(take("audit", audit))]
        await asyncio.sleep(0.01)
        assert not budget.try_acquire(_Hold("/validate"), INLINE_BODY_BYTES + 1)
        waiting.append(asyncio.create_task(take("request", later)))
        await asyncio.sleep(0.01)
        assert budget.waiting == 2
        budget.release(large)
        await asyncio.sleep(0.01)
        assert order == ["request granted"] and budget.waiting == 1
        budget.release(later)
        await asyncio.gather(*waiting)
        budget.release(audit)
        assert (budget.used, budget.large_used, budget.waiting) == (0, 0, 0)
        return order

    assert asyncio.run(scenario()) == ["request granted", "audit granted"]


def test_a_small_body_waits_only_when_the_whole_budget_is_held() -> None:
    async def scenario() -> tuple[bool, bool]:
        budget = MemoryBudget(8 * MIB)
        holds = [_Hold("/validate") for _ in range(100)]
        held = [budget.try_acquire(hold, 4096) for hold in holds]  # 112 KiB each
        assert held.count(True) == 8 * MIB // (4096 * DECODED_COST)
        refused = await budget.acquire(_Hold("/validate"), 4096, 0.01)
        budget.release(holds[0])
        granted = await budget.acquire(_Hold("/validate"), 4096, 0.01)
        return refused, granted

    assert asyncio.run(scenario()) == (False, True)


# --- what each decoder path costs, and what it is charged ---------------------------------------


def numbers_review(count: int, last: bytes) -> bytes:
    """A Job review whose `request.options` lists `count` zeros and then `last` (a value orjson
    refuses sends the body to the exact decoder)."""
    body = orjson.dumps(review(job()) | {"x": "@@"})
    return body.replace(b'"@@"', b"[" + b"0," * count + last + b"]")


def peak_bytes(call: Callable[[], object]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def place_in_request(body: bytes) -> bytes:
    """`numbers_review`'s list moved into `request.options`, where the attack put it."""
    data_start = body.index(b',"x":[')
    numbers = body[data_start + len(b',"x":') : -1]
    rest = body[:data_start] + b"}"
    return rest.replace(b'"request":{', b'"request":{"options":' + numbers + b",", 1)


@pytest.mark.parametrize(
    ("handler", "count", "last", "field"),
    [
        (handle_validate, 100_000, b"1e400", "request.options[100000]"),
        (handle_validate, 100_000, b"NaN", "request.options[100000]"),
        # 1.2 MiB: past LOW_MEMORY_PARSE_BYTES, not read by /mutate's envelope, read by the
        # standard library's decoder, refused at its last value and read again by the exact one.
        (handle_mutate, 600_000, b"NaN", None),
    ],
)
def test_the_exact_decoder_costs_no_more_than_the_budget_charges(
    handler: Callable[[bytes, Settings], Outcome], count: int, last: bytes, field: str | None
) -> None:
    # The exact decoder cost 88 bytes a body byte: its search for the value it could not read
    # copied every list's items, with their indexes.
    body = place_in_request(numbers_review(count, last))
    outcomes: list[Outcome] = []
    peak = peak_bytes(lambda: outcomes.append(handler(body, Settings())))
    assert peak <= DECODED_COST * len(body)
    (outcome,) = outcomes
    response = outcome.payload["response"]  # type: ignore[typeddict-item]
    if field is None:  # /mutate leaves the Job alone (/validate denies it)
        assert response == {"uid": "uid-1", "allowed": True}
    else:
        assert response["allowed"] is False
        assert response["status"]["details"]["causes"][0]["field"] == field


def test_markers_of_unreadable_values_are_shared() -> None:
    # 300,000 `NaN` built 300,000 markers and messages: 30 bytes a body byte.
    body = place_in_request(numbers_review(0, b",".join([b"NaN"] * 300_000)))
    peak = peak_bytes(lambda: handle_validate(body, Settings()))
    assert peak <= 8 * len(body)


def test_a_mutation_decoded_whole_is_charged_before_it_is_decoded() -> None:
    app = create_app()
    body = place_in_request(numbers_review(600_000, b"NaN"))
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    headers = [(b"content-length", str(len(body)).encode())]
    # Another body holds all but room for the envelope's charge, not the whole parse's.
    other = _Hold("/validate")
    envelope_cost = body_cost("/mutate", len(body))
    assert envelope_cost < body_cost(FULL_PARSE, len(body))
    assert app.memory.try_acquire(other, (app.memory.capacity - envelope_cost) // DECODED_COST)
    start, answer = drive(app, list(messages), query=b"timeout=1s", headers=headers, path="/mutate")
    assert start["status"] == 503
    assert orjson.loads(answer["body"])["error"].startswith("server busy")
    assert app.memory.used == other.cost
    app.memory.release(other)
    start, answer = drive(app, list(messages), headers=headers, path="/mutate")
    assert start["status"] == 200
    assert orjson.loads(answer["body"]) == handle_mutate(body, Settings()).payload
    assert app.memory.used == 0


@pytest.mark.parametrize(
    ("text", "location"),
    [
        (b'{"a": [1, [2, NaN]], "b": [NaN]}', ("a", 1, 1)),
        (b'{"a": [1, 2, 1e400, NaN], "b": NaN}', ("a", 2)),
        (b'{"a": [[], {}, 3], "b": [{"c": [0, 0, Infinity]}, NaN]}', ("b", 0, "c", 2)),
        (b'[{"x": 1}, [0, 0], [[NaN]]]', (2, 0, 0)),
        (b"NaN", ()),
        (b'{"a": [0, 1], "b": {}}', None),
    ],
)
def test_the_first_unreadable_value_is_found_in_document_order(
    text: bytes, location: tuple[str | int, ...] | None
) -> None:
    _, found = jsonfallback.loads(text)
    assert (found.location if found is not None else None) == location
