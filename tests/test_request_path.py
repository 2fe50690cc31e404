"""The webhook's own work around each judgement: the shortcuts of the request path agree with the
general code they stand in for (answers, requesters, metrics, log lines, the stop's
Connection: close)."""

from __future__ import annotations

import asyncio
import copy
import logging
import random
import re
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from jobguard.app.admission import review as admission
from jobguard.app.admission.review import (
    MAX_REQUESTER_CHARS,
    MAX_REQUESTERS,
    BadReview,
    bounded,
    handle_validate,
    parse_review,
    response_for,
)
from jobguard.app.server.app import ServerOptions, create_app
from jobguard.app.server.observability import (
    LATENCY_BUCKETS,
    VERDICT_CODES,
    JsonFormatter,
    RequestMetrics,
    log_fields,
    utc_milliseconds,
)
from jobguard.app.server.uvicorn_server import CONNECTION, _Connection, _Guard
from jobguard.validators import Enforcement, Settings, Stage, admit
from tests.asgi import drive
from tests.builders import job
from tests.reviews import review

# --- the answer when nothing fired --------------------------------------------------------------


def general_response(body: bytes, settings: Settings) -> tuple[int, dict[str, Any]]:
    """(violations, response) as the general code builds them: bounded, response_for, finish."""
    parsed = parse_review(body)
    verdict = admit(parsed.request, settings, Stage.VALIDATING).verdict
    assert verdict is not None
    shown = bounded(verdict)
    response = response_for(parsed.uid, shown.verdict)
    shown.finish(response)
    return len(verdict.violations), dict(response)


def _reviews() -> list[dict[str, Any]]:
    created = job()
    resumed, suspended = job(suspend=False), job(suspend=True)
    running = copy.deepcopy(created)
    running["status"] = {"active": 1, "startTime": "2026-01-01T10:00:00Z"}
    progressed = copy.deepcopy(running)
    progressed["status"]["succeeded"] = 1
    bad = job(
        completionMode="Indexed",
        completions=2,
        parallelism=2,
        successPolicy={"rules": [{"succeededCount": 3}]},
    )
    return [
        review(created),
        review(resumed, suspended, operation="UPDATE"),
        review(progressed, running, operation="UPDATE", sub="status"),
        review({"kind": "Deployment"}, resource="deployments"),
        review(created, operation="DELETE"),
        review(bad),
        review(bad, bad, operation="UPDATE"),
    ]


@pytest.mark.parametrize("enforcement", list(Enforcement))
def test_the_answer_without_violations_is_the_general_one(enforcement: Enforcement) -> None:
    settings = Settings(enforcement=enforcement)
    judged = {"without": 0, "with": 0}
    for body in map(orjson.dumps, _reviews()):
        violations, expected = general_response(body, settings)
        outcome = handle_validate(body, settings)
        assert outcome.review is not None
        assert outcome.review["response"] == expected
        if violations == 0:
            assert expected == {"uid": "uid-1", "allowed": True}
        judged["with" if violations else "without"] += 1
    # Both paths ran: the shortcut (nothing fired) and the general one (the bad Job).
    assert judged["without"] >= 5
    assert judged["with"] >= (0 if enforcement is Enforcement.DRYRUN else 2)


# --- requesters kept between reviews -------------------------------------------------------------


def user_review(username: Any, groups: Any) -> bytes:
    body = review(job())
    body["request"]["userInfo"] = {"username": username, "groups": groups}
    return orjson.dumps(body)


def test_a_requester_is_read_once_and_kept() -> None:
    first = parse_review(user_review("kueue", ["system:authenticated", "kueue"]))
    again = parse_review(user_review("kueue", ["system:authenticated", "kueue"]))
    assert first.request.requester is again.request.requester
    assert first.request.requester.username == "kueue"
    assert first.request.requester.groups == ("system:authenticated", "kueue")
    other = parse_review(user_review("kueue", ["system:authenticated"]))
    assert other.request.requester.groups == ("system:authenticated",)
    nobody = review(job())
    del nobody["request"]["userInfo"]
    assert parse_review(orjson.dumps(nobody)).request.requester.username == ""


@pytest.mark.parametrize("groups", [[1], [True], [None], [1.5], [{"a": 1}], [["kueue"]], "kueue"])
def test_groups_that_are_not_strings_are_refused_after_a_kept_requester(groups: Any) -> None:
    parse_review(user_review("kueue", ["kueue"]))  # kept
    with pytest.raises(BadReview, match="username or groups of the wrong type"):
        parse_review(user_review("kueue", groups))
    with pytest.raises(BadReview, match="username or groups of the wrong type"):
        parse_review(user_review("kueue", ["kueue", *groups] if isinstance(groups, list) else 7))
    with pytest.raises(BadReview, match="username or groups of the wrong type"):
        parse_review(user_review(["kueue"], ["kueue"]))


def test_kept_requesters_are_bounded_in_number_and_size() -> None:
    long_name = "x" * (MAX_REQUESTER_CHARS + 1)
    parsed = parse_review(user_review(long_name, []))
    assert parsed.request.requester.username == long_name
    assert (long_name, ()) not in admission._REQUESTERS
    for i in range(MAX_REQUESTERS + 10):
        assert parse_review(user_review(f"user-{i}", ["g"])).request.requester.username == (
            f"user-{i}"
        )
        assert len(admission._REQUESTERS) <= MAX_REQUESTERS


def test_a_requester_of_many_empty_groups_is_not_kept() -> None:
    """Each group holds a place in the kept tuple, however short its name: many empty ones
    would otherwise keep megabytes a requester under the size bound."""
    groups = [""] * (MAX_REQUESTER_CHARS + 1)
    parsed = parse_review(user_review("many-groups", groups))
    assert parsed.request.requester.groups == tuple(groups)
    assert ("many-groups", tuple(groups)) not in admission._REQUESTERS


# --- one typed decoder for every body ------------------------------------------------------------


WRONGLY_TYPED: list[tuple[str, Any, str]] = [
    ("uid", 7, "request.uid is missing or not a string"),
    ("operation", 5, "request.operation must be a string"),
    ("namespace", ["team-a"], "request.namespace must be a string"),
    ("subResource", {}, "request.subResource must be a string"),
    ("resource", [], "request.resource must be an object"),
    ("resource", {"group": 1}, "request.resource fields must be strings"),
    ("userInfo", "root", "request.userInfo must be an object"),
    ("userInfo", {"groups": ["a", 3]}, "username or groups of the wrong type"),
    ("dryRun", "yes", "request.dryRun must be a boolean"),
]


@pytest.mark.parametrize(("field", "value", "reason"), WRONGLY_TYPED)
def test_every_body_is_read_by_the_one_decoder_with_the_same_reasons(
    field: str, value: Any, reason: str
) -> None:
    """Small bodies (orjson), large ones (exact_json) and /mutate's envelope of a large body
    are refused alike, naming the field."""
    body = review(job())
    body["request"][field] = value
    small = orjson.dumps(body)
    body["request"]["object"]["metadata"]["annotations"] = {"pad": "x" * (1 << 20)}
    large = orjson.dumps(body)
    assert len(large) > admission.LOW_MEMORY_PARSE_BYTES
    for read in (parse_review, admission.parse_mutation_review):
        for sent in (small, large):
            with pytest.raises(BadReview) as refused:
                read(sent)
            assert reason in str(refused.value)


# --- metrics counted in plain Python -------------------------------------------------------------


OBSERVED: list[tuple[str, str, str, str, str, float]] = [
    ("validate", "UPDATE", "jobs", "", "allowed", 0.00007),
    ("validate", "UPDATE", "jobs", "", "allowed", 0.0001),  # on a bound: in that bucket
    ("validate", "UPDATE", "jobs", "status", "denied", 0.0),
    ("validate", "CREATE", "cronjobs", "", "allowed", 0.00100001),
    ("mutate", "CREATE", "jobs", "", "allowed", 30.0),
    ("mutate", "", "other", "", "bad_request", 31.5),  # beyond the last bound: +Inf only
    ("validate", "UPDATE", "jobs", "", "allowed", 2.5),
]
VIOLATIONS = [
    ("ST-040", "deny", "", "UPDATE", 1),
    ("SUS-002", "warn", "queued", "UPDATE", 3),
    ("ST-040", "deny", "", "UPDATE", 250_000),
]


def test_request_metrics_are_exposed_as_prometheus_client_would() -> None:
    lean_registry = CollectorRegistry()
    lean = RequestMetrics(lean_registry)
    requests, latency, violations = lean.describe()
    reference = CollectorRegistry()
    counter = Counter(
        "jobguard_requests_total",
        requests.documentation,
        [
            "endpoint",
            "operation",
            "resource",
            "subresource",
            "verdict",
        ],
        registry=reference,
    )
    histogram = Histogram(
        "jobguard_request_duration_seconds",
        latency.documentation,
        ["endpoint", "verdict", "code"],
        buckets=LATENCY_BUCKETS,
        registry=reference,
    )
    violated = Counter(
        "jobguard_violations_total",
        violations.documentation,
        ["rule", "enforcement", "policy", "operation"],
        registry=reference,
    )
    for endpoint, operation, resource, subresource, verdict, seconds in OBSERVED:
        lean.count(endpoint, operation, resource, subresource, verdict, seconds)
        counter.labels(endpoint, operation, resource, subresource, verdict).inc()
        histogram.labels(endpoint, verdict, VERDICT_CODES[verdict]).observe(seconds)
    for rule, enforcement, policy, operation, count in VIOLATIONS:
        lean.count_violations(rule, enforcement, policy, operation, count)
        violated.labels(rule, enforcement, policy, operation).inc(count)
    expected = generate_latest(reference).decode()
    exposed = generate_latest(lean_registry).decode()
    assert exposed == expected
    assert "_created" not in exposed
    bucket = "jobguard_request_duration_seconds_bucket"
    allowed = 'code="200",endpoint="validate"'
    assert f'{bucket}{{{allowed},le="0.0001",verdict="allowed"}} 2.0' in exposed
    assert f'{bucket}{{{allowed},le="0.0001",verdict="denied"}} 1.0' in exposed
    assert f'{bucket}{{code="200",endpoint="mutate",le="30.0",verdict="allowed"}} 1.0' in exposed
    total = "jobguard_request_duration_seconds_count"
    assert f'{total}{{code="400",endpoint="mutate",verdict="bad_request"}} 1.0' in exposed
    family = "jobguard_violations_total"
    assert (
        f'{family}{{enforcement="deny",operation="UPDATE",policy="",rule="ST-040"}} 250001.0'
        in exposed
    )
    assert (
        f'{family}{{enforcement="warn",operation="UPDATE",policy="queued",rule="SUS-002"}} 3.0'
        in exposed
    )


# --- the body, the answer and the refusals at the ASGI level ------------------------------------


def test_a_body_in_one_message_or_many_gets_the_same_answer() -> None:
    app = create_app()
    body = orjson.dumps(review(job()))
    whole = drive(app, [{"type": "http.request", "body": body, "more_body": False}])
    parts = [body[:1], body[1:100], b"", body[100:]]
    split = drive(
        app,
        [
            {"type": "http.request", "body": part, "more_body": i < len(parts) - 1}
            for i, part in enumerate(parts)
        ],
    )
    assert whole == split
    start, answer = whole
    assert start["status"] == 200
    assert start["headers"] == [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(answer["body"])).encode()),
    ]
    assert orjson.loads(answer["body"])["response"] == {"uid": "uid-1", "allowed": True}


def test_a_client_gone_before_its_body_gets_no_answer() -> None:
    assert drive(create_app(), [{"type": "http.disconnect"}]) == []
    body = orjson.dumps(review(job()))
    gone = [{"type": "http.request", "body": body[:10], "more_body": True}]
    assert drive(create_app(), [*gone, {"type": "http.disconnect"}]) == []


def test_refusals_close_the_connection() -> None:
    app = create_app(options=ServerOptions(max_body_bytes=1000))
    declared = drive(app, [], headers=[(b"content-length", b"5000")])
    streamed = drive(app, [{"type": "http.request", "body": b"x" * 1001, "more_body": False}])
    for start, answer in (declared, streamed):
        assert start["status"] == 413
        assert (b"connection", b"close") in start["headers"]
        assert orjson.loads(answer["body"]) == {"error": "body exceeds 1000 bytes"}


def test_the_body_budget_follows_each_query() -> None:
    app = create_app(options=ServerOptions(body_timeout=30))
    queries = [b"timeout=1s", b"", b"timeout=45s", b"a=b&timeout=2s", b"timeout=1s"]
    queries += [f"timeout={n}s".encode() for n in range(3, 200)]  # more than are kept
    for query in queries * 2:
        match = re.search(rb"(?:^|&)timeout=(\d+)s(?:&|$)", query)
        expected = min(30.0, float(match.group(1))) if match else 30.0
        assert app._budget({"query_string": query}) == expected


# --- what the server learns of each request; Connection: close once the stop began -------------------------------------------------------


def _guarded(
    draining_at: str | None, refused: bool = False, body: bytes = b"x"
) -> tuple[list[dict[str, Any]], list[tuple[str, bool, bool]]]:
    """One request through `_Guard` on a `_Connection`: the messages sent, and the connection's
    (moment, busy, uploading) as the app saw it. The stop begins at `draining_at`: "before" the
    request, "between" its response's start and its end, or never (None)."""
    seen: list[tuple[str, bool, bool]] = []
    sent: list[dict[str, Any]] = []

    async def scenario() -> None:
        server = SimpleNamespace(draining=draining_at == "before", stopping=False, requests=set())
        connection = _Connection(server)  # type: ignore[arg-type]
        connection.refused = refused

        def note(moment: str) -> None:
            seen.append((moment, connection.busy, connection.uploading))

        async def app(scope: Any, receive: Any, send: Any) -> None:
            note("began")
            await receive()
            note("body read")
            await send({"type": "http.response.start", "status": 200, "headers": []})
            if draining_at == "between":
                server.draining = True
            await send({"type": "http.response.body", "body": b"{}"})
            note("answered")

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        scope = {
            "type": "http",
            "headers": [(b"content-length", str(len(body)).encode())],
            "state": {CONNECTION: connection},
        }
        await _Guard(app, server)(scope, receive, send)  # type: ignore[arg-type]
        note("done")
        assert server.requests == set()

    asyncio.run(scenario())
    return sent, seen


def test_the_guard_tells_the_connection_where_its_request_is() -> None:
    sent, seen = _guarded(None)
    assert seen == [
        ("began", True, True),
        ("body read", True, False),
        ("answered", False, False),
        ("done", False, False),
    ]
    assert sent[0]["headers"] == []  # nothing added before the stop
    _, seen = _guarded(None, body=b"")  # no body announced: nothing to upload
    assert seen[0] == ("began", True, False)


def test_responses_begun_once_the_stop_began_close_their_connection() -> None:
    """A response started after the stop began carries `Connection: close` (uvicorn's h11 and
    httptools then close the connection after it); one started before is left as it was."""
    sent, _ = _guarded("before")
    assert sent[0]["headers"] == [(b"connection", b"close")]
    sent, _ = _guarded("between")
    assert sent[0]["headers"] == []


def test_a_connection_over_the_bound_is_answered_503_without_the_app() -> None:
    sent, seen = _guarded(None, refused=True)
    assert seen == [("done", False, True)]  # the app never ran; the body was never read
    assert sent[0]["status"] == 503
    assert (b"connection", b"close") in sent[0]["headers"]
    assert (b"content-length", str(len(sent[1]["body"])).encode()) in sent[0]["headers"]
    assert sent[1]["body"] == b"Service Unavailable"


def test_the_guard_passes_requests_without_a_connection_straight_through() -> None:
    """The lifespan, and the app served by anything but GracefulServer (tests, the health
    port): the app gets the server's own `send`."""
    seen: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(send)

    async def send(message: Any) -> None:
        pass

    guard = _Guard(app, SimpleNamespace())  # type: ignore[arg-type]
    for scope in (
        {"type": "lifespan"},
        {"type": "http", "headers": []},
        {"type": "http", "state": {}},
    ):
        asyncio.run(guard(scope, send, send))  # type: ignore[arg-type]
        assert seen.pop() is send


# --- the request log line ---------------------------------------------------------------------


def test_log_times_are_datetimes_own() -> None:
    rng = random.Random(7)
    edges = [0.0, -0.0005, -1.5, 1.9995, 1.9999995, 1.0000005, 1700000000.9999995]
    edges += [1700000000.0005, 1700000000.0004999, -86400.25, 4102444800.123456]
    steps = [base + k * 5e-7 for base in (1700000000.0, 1.0) for k in range(-3000, 3000)]
    uniform = [rng.uniform(-2e9, 4e9) for _ in range(20_000)]
    for created in [*edges, *steps, *uniform]:
        expected = datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")
        assert utc_milliseconds(created) == expected, created


def test_log_fields_makes_the_record_logger_info_would(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("jobguard.requests")
    fields = {"endpoint": "validate", "verdict": "allowed"}
    with caplog.at_level(logging.INFO, logger="jobguard.requests"):
        log_fields(logger, "admission request", fields)
        logger.info("admission request", extra={"fields": fields})
    ours, theirs = (r for r in caplog.records if r.name == "jobguard.requests")
    formatter = JsonFormatter()
    assert orjson.loads(formatter.format(ours)) == orjson.loads(formatter.format(theirs)) | {
        "time": utc_milliseconds(ours.created)
    }
    logged = getattr(ours, "fields", None)
    assert (ours.levelno, ours.getMessage(), logged) == (logging.INFO, "admission request", fields)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="jobguard.requests"):
        log_fields(logger, "admission request", fields)
    assert [r for r in caplog.records if r.name == "jobguard.requests"] == []
