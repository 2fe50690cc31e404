"""Operating the server: metrics, request logs, body limits, budgets, graceful stop."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import subprocess
import threading
import time
from collections.abc import MutableMapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from fastapi.testclient import TestClient

import jobguard
from jobguard.app.config import parse_config
from jobguard.app.server.app import ServerOptions, create_app
from jobguard.app.server.observability import JsonFormatter
from tests.asgi import drive
from tests.builders import job
from tests.reviews import review
from tests.servers import (
    SERVE_ENV,
    free_port,
    loopback_args,
    serve_command,
    serving,
    wait_ready,
)


def bad_job() -> dict[str, Any]:
    return job(
        completionMode="Indexed",
        completions=2,
        parallelism=2,
        successPolicy={"rules": [{"succeededCount": 3}]},
    )


def metric(text: str, name: str, **labels: str) -> float:
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        if all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} {labels} not found")


def test_metrics_count_violations_past_the_listed_ones() -> None:
    uids = [str(i) for i in range(3000)]
    old = job()
    old["status"] = {"active": 1, "startTime": "2026-01-01T10:00:00Z"}
    new = {**old, "status": {**old["status"], "uncountedTerminatedPods": {"failed": uids * 2}}}
    with TestClient(create_app()) as client:
        answer = client.post(
            "/validate", json=review(new, old, operation="UPDATE", sub="status")
        ).json()
        text = client.get("/metrics").text
    # 3,000 duplicates: 1,000 listed, 2,000 counted in one MoreErrors; all 3,000 counted here.
    assert metric(text, "jobguard_violations_total", rule="ST-006", enforcement="deny") == 3000
    assert answer["response"]["status"]["details"]["causes"][-1]["message"] == "2901 more errors"


def test_metrics_count_requests_verdicts_violations_and_latency() -> None:
    app = create_app()
    with TestClient(app) as client:
        client.post("/validate", json=review(job()))
        client.post("/validate", json=review(bad_job()))
        client.post("/validate", json=review(bad_job()))
        client.post("/validate", content=b"nope")
        client.post("/mutate", json=review(job()))
        text = client.get("/metrics").text
    assert (
        metric(
            text,
            "jobguard_requests_total",
            endpoint="validate",
            operation="CREATE",
            resource="jobs",
            subresource="",
            verdict="allowed",
        )
        == 1
    )
    assert metric(text, "jobguard_requests_total", endpoint="validate", verdict="denied") == 2
    assert metric(text, "jobguard_requests_total", endpoint="validate", verdict="bad_request") == 1
    assert metric(text, "jobguard_requests_total", endpoint="mutate", verdict="allowed") == 1
    assert (
        metric(
            text,
            "jobguard_violations_total",
            rule="SP-008",
            enforcement="deny",
            policy="",
            operation="CREATE",
        )
        == 2
    )
    # The latency by verdict and HTTP status, as controller-runtime's histogram has `code`.
    count = "jobguard_request_duration_seconds_count"
    assert metric(text, count, endpoint="validate", verdict="allowed", code="200") == 1
    assert metric(text, count, endpoint="validate", verdict="denied", code="200") == 2
    assert metric(text, count, endpoint="validate", verdict="bad_request", code="400") == 1
    # Every request falls in the last bucket (the others depend on the machine's speed).
    bucket = "jobguard_request_duration_seconds_bucket"
    assert metric(text, bucket, endpoint="validate", verdict="denied", le="+Inf") == 2
    assert metric(text, bucket, endpoint="validate", verdict="denied", le="30.0") == 2
    assert "_created" not in text


def test_reload_counters_exist_before_the_first_reload() -> None:
    with TestClient(create_app()) as client:
        text = client.get("/metrics").text
    for name in ("jobguard_config_reloads_total", "jobguard_certificate_reloads_total"):
        assert metric(text, name, result="success") == 0
        assert metric(text, name, result="failure") == 0


def test_metrics_for_reloads_and_certificate_expiry(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("kubernetesVersion: '1.35'\n")
    app = create_app(config_path=str(config))
    app.metrics.set_certificate(datetime.now(UTC) + timedelta(days=10))
    config.write_text("kubernetesVersion: '9.9'\n")
    app.state.reloader.check(force=True)
    config.write_text("kubernetesVersion: '1.36'\n")
    app.state.reloader.check(force=True)
    with TestClient(app) as client:
        text = client.get("/metrics").text
    assert metric(text, "jobguard_config_reloads_total", result="success") == 1
    assert metric(text, "jobguard_config_reloads_total", result="failure") == 1
    seconds = metric(text, "jobguard_certificate_expiry_seconds")
    assert 9.9 * 86400 < seconds <= 10 * 86400
    # The NotAfter itself, as Unix time (alert on `... - time() < 7 * 86400`).
    expiry = metric(text, "jobguard_certificate_expiry_timestamp_seconds")
    assert abs(expiry - (time.time() + 10 * 86400)) < 60


def test_requests_in_flight() -> None:
    """The gauge counts a request from its arrival until it is answered."""

    def in_flight(registry: Any) -> float:
        value = registry.get_sample_value("jobguard_requests_in_flight", {"endpoint": "validate"})
        assert value is not None
        return float(value)

    app = create_app(parse_config("{}"))
    registry = app.metrics.registry
    body = orjson.dumps(review(job()))
    seen: list[float] = []

    async def scenario() -> None:
        arrived = asyncio.Event()
        release = asyncio.Event()

        async def receive() -> dict[str, Any]:
            arrived.set()
            await release.wait()
            return {"type": "http.request", "body": body, "more_body": False}

        sent: list[MutableMapping[str, Any]] = []

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "method": "POST",
            "path": "/validate",
            "headers": [(b"content-length", str(len(body)).encode())],
            "query_string": b"",
        }
        task = asyncio.create_task(app(scope, receive, send))
        await arrived.wait()
        seen.append(in_flight(registry))
        release.set()
        await task
        seen.append(in_flight(registry))
        assert sent[0]["status"] == 200

    asyncio.run(scenario())
    assert seen == [1.0, 0.0]
    with TestClient(app) as client:
        text = client.get("/metrics").text
    assert metric(text, "jobguard_requests_in_flight", endpoint="validate") == 0
    assert metric(text, "jobguard_requests_in_flight", endpoint="mutate") == 0


def test_metrics_only_on_the_health_port_when_there_is_one() -> None:
    health = free_port()
    options = ServerOptions(health_port=health, health_host="127.0.0.1")
    with TestClient(create_app(parse_config("{}"), options=options)) as client:
        assert client.get("/metrics").status_code == 404
        assert client.get("/healthz").text == "ok"
        deadline = time.monotonic() + 10
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{health}/metrics")
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        assert response.status_code == 200 and "jobguard_build_info" in response.text
        assert httpx.get(f"http://127.0.0.1:{health}/readyz").text == "ok"


def test_one_structured_log_line_per_request_without_bodies(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = review(bad_job(), user="alice")
    with (
        caplog.at_level(logging.INFO, logger="jobguard.requests"),
        TestClient(create_app()) as client,
    ):
        client.post("/validate", json=body)
    records = [r for r in caplog.records if r.name == "jobguard.requests"]
    assert len(records) == 1
    fields = records[0].fields  # type: ignore[attr-defined]
    assert {
        k: fields[k]
        for k in ("uid", "kind", "namespace", "name", "operation", "user", "verdict", "rules")
    } == {
        "uid": "uid-1",
        "kind": "Job",
        "namespace": "default",
        "name": "pi",
        "operation": "CREATE",
        "user": "alice",
        "verdict": "denied",
        "rules": ["SP-008"],
    }
    assert fields["latency_ms"] >= 0
    # A denial names each rule's message and field, and the requester's groups.
    assert fields["violations"] == [
        {
            "rule": "SP-008",
            "enforcement": "deny",
            "field": fields["violations"][0]["field"],
            "message": fields["violations"][0]["message"],
        }
    ]
    assert fields["violations"][0]["field"].startswith("spec.")
    assert fields["violations"][0]["message"]
    assert fields["groups"] == ["system:authenticated"]
    assert "body" not in fields
    line = JsonFormatter().format(records[0])
    assert "\n" not in line and json.loads(line)["verdict"] == "denied"
    assert "busybox" not in line  # nothing of the object is logged


def test_a_policy_denial_names_the_policy_in_its_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from tests.test_policy import KUEUE_CONFIG, body_for, queued_job

    app = create_app(parse_config(KUEUE_CONFIG))
    with (
        caplog.at_level(logging.DEBUG, logger="jobguard.requests"),
        TestClient(app) as client,
    ):
        client.post("/validate", json=body_for(queued_job()))
    info, debug = (
        [r for r in caplog.records if r.name == "jobguard.requests" and r.levelno == level]
        for level in (logging.INFO, logging.DEBUG)
    )
    (record,) = info
    fields = record.fields  # type: ignore[attr-defined]
    assert (fields["namespace"], fields["name"], fields["verdict"]) == ("team-a", "pi", "denied")
    (violation,) = fields["violations"]
    assert violation["rule"] == "SUS-001"
    assert violation["policy"] == "queued"
    assert violation["field"] == "spec.suspend"
    assert "matched by policy 'queued' must be created suspended" in violation["message"]
    # Debug adds a line with what the info line leaves out.
    (detail,) = debug
    extra = detail.fields  # type: ignore[attr-defined]
    assert extra["uid"] == fields["uid"] and extra["judged_in"] == "loop"
    assert extra["body_bytes"] > 0 and extra["allowed"] is False


def test_bodies_logged_only_when_asked(caplog: pytest.LogCaptureFixture) -> None:
    app = create_app(options=ServerOptions(log_bodies=True))
    with caplog.at_level(logging.INFO, logger="jobguard.requests"), TestClient(app) as client:
        client.post("/validate", json=review(job()))
    fields = next(r for r in caplog.records if r.name == "jobguard.requests").fields  # type: ignore[attr-defined]
    assert "busybox" in fields["body"]


# --- limits, driven at the ASGI level to control exactly what the client sends --------------


def call(
    app: Any,
    headers: list[tuple[bytes, bytes]],
    chunks: list[bytes],
    query: bytes = b"",
    delay: float = 0.0,
) -> tuple[int, dict[str, Any], int]:
    """Status, JSON body and how many body chunks the app read."""
    messages = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]
    sent = drive(app, messages, query, headers, delay)
    return sent[0]["status"], orjson.loads(sent[1]["body"]), len(chunks) - len(messages)


def test_declared_oversized_body_is_refused_unread() -> None:
    app = create_app(options=ServerOptions(max_body_bytes=1000))
    status, body, reads = call(app, [(b"content-length", b"5000")], [b"x" * 5000])
    assert (status, reads) == (413, 0)
    assert body == {"error": "body exceeds 1000 bytes"}


def test_streamed_oversized_body_is_refused_once_over() -> None:
    app = create_app(options=ServerOptions(max_body_bytes=1000))
    status, _, reads = call(app, [], [b"x" * 600] * 5)
    assert (status, reads) == (413, 2)


def test_slow_body_is_cut_at_the_api_servers_budget() -> None:
    app = create_app(options=ServerOptions(body_timeout=30))
    status, body, _ = call(app, [], [b"{}"], query=b"timeout=1s", delay=1.5)
    assert status == 408 and body == {"error": "body not received within 1s"}


def test_pathological_json_is_a_400() -> None:
    app = create_app()
    status, body, _ = call(app, [], [b"[" * 100_000 + b"]" * 100_000])
    assert status == 400 and "not valid JSON" in body["error"]


# --- graceful stop under load ------------------------------------------------------------------


@pytest.mark.slow  # a real `jobguard serve` process
def test_sigterm_drains_without_failing_a_request() -> None:
    port = free_port()
    # Its own process, not `serving()`: this test signals it and reads its stderr.
    proc = subprocess.Popen(
        serve_command(loopback_args(port, "--shutdown-delay", "1.5", "--grace-period", "5")),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=SERVE_ENV,
    )
    url = f"http://127.0.0.1:{port}"
    body = orjson.dumps(review(job()))
    try:
        wait_ready(url, proc=proc)
        results: list[int] = []
        failures: list[str] = []
        stop = threading.Event()

        def hammer() -> None:
            # A well-behaved client (the API server's view): stop sending once not ready.
            with httpx.Client(base_url=url, timeout=5) as http:
                while not stop.is_set():
                    try:
                        results.append(http.post("/validate", content=body).status_code)
                        if http.get("/readyz").status_code != 200:
                            return
                    except httpx.HTTPError as exc:
                        failures.append(repr(exc))
                        return

        threads = [threading.Thread(target=hammer) for _ in range(4)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        for t in threads:
            t.join(timeout=15)
        stop.set()
        assert failures == []
        assert results and set(results) == {200}
        # The stop is the signal's whole effect: a clean exit.
        assert proc.wait(timeout=15) == 0
        assert b"Traceback" not in (proc.stderr.read() if proc.stderr else b"")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def listening_addresses(port: int) -> set[str]:
    """The IPv4 addresses a socket listens on at `port`, from the kernel's table (/proc)."""
    found: set[str] = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, local_port = local.split(":")
        if state == "0A" and int(local_port, 16) == port:  # 0A: LISTEN
            found.add(".".join(str(b) for b in reversed(bytes.fromhex(address))))
    return found


@pytest.mark.slow  # a real `jobguard serve` process
def test_health_port_serves_probes_over_plain_http() -> None:
    port, health = free_port(), free_port()
    with serving(loopback_args(port, "--health-port", str(health))) as proc:
        wait_ready(f"http://127.0.0.1:{health}", proc=proc)
        # The health port listens where --host says, not on every address.
        assert listening_addresses(health) == {"127.0.0.1"} == listening_addresses(port)
        assert httpx.get(f"http://127.0.0.1:{health}/healthz").text == "ok"
        assert "jobguard_requests_total" in httpx.get(f"http://127.0.0.1:{health}/metrics").text
        # Metrics are on the metrics (health) port only, not on the webhook's.
        assert httpx.get(f"http://127.0.0.1:{port}/metrics").status_code == 404
        # The webhook itself is not served there.
        assert (
            httpx.post(f"http://127.0.0.1:{health}/validate", json=review(job())).status_code == 404
        )
        assert (
            httpx.post(f"http://127.0.0.1:{port}/validate", json=review(job())).status_code == 200
        )


# --- what operators see: refusals counted, build and process metrics, reasons, start-up logs ----


def test_refused_bodies_are_counted_and_logged_with_their_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = create_app(options=ServerOptions(max_body_bytes=1000, body_timeout=30))
    with caplog.at_level(logging.INFO, logger="jobguard.requests"):
        assert call(app, [(b"content-length", b"5000")], [b"x" * 5000])[0] == 413
        assert call(app, [], [b"x" * 600] * 5)[0] == 413
        assert call(app, [], [b"{}"], query=b"timeout=1s", delay=1.2)[0] == 408
    # Read before the next request: whether its line is captured depends on the logger's level,
    # which other tests in the same process may have set.
    reasons = [
        (r.fields["verdict"], r.fields["reason"])  # type: ignore[attr-defined]
        for r in caplog.records
        if r.name == "jobguard.requests"
    ]
    with TestClient(app) as client:
        client.post("/validate", content=b"nope")
        text = client.get("/metrics").text
    assert metric(text, "jobguard_requests_total", endpoint="validate", verdict="too_large") == 2
    assert metric(text, "jobguard_requests_total", endpoint="validate", verdict="timeout") == 1
    assert reasons == [
        ("too_large", "body exceeds 1000 bytes"),
        ("too_large", "body exceeds 1000 bytes"),
        ("timeout", "body not received within 1s"),
    ]


def test_bad_request_log_lines_carry_the_reason(caplog: pytest.LogCaptureFixture) -> None:
    with (
        caplog.at_level(logging.INFO, logger="jobguard.requests"),
        TestClient(create_app()) as client,
    ):
        client.post("/validate", content=b"[]")
    (record,) = [r for r in caplog.records if r.name == "jobguard.requests"]
    fields = record.fields  # type: ignore[attr-defined]
    assert fields["verdict"] == "bad_request"
    assert fields["reason"] == "body must be a JSON object (an AdmissionReview)"


def test_build_info_and_process_metrics() -> None:
    with TestClient(create_app()) as client:
        text = client.get("/metrics").text
    assert metric(text, "jobguard_build_info", version="0.1.0") == 1
    assert metric(text, "process_resident_memory_bytes") > 0
    assert metric(text, "process_cpu_seconds_total") > 0
    assert metric(text, "process_open_fds") > 0


def test_reload_logs_the_file_and_digest(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from jobguard.app.config import digest, load_config

    config = tmp_path / "config.yaml"
    config.write_text("kubernetesVersion: '1.35'\n")
    app = create_app(config_path=str(config))
    config.write_text("kubernetesVersion: '1.36'\nrules: {NE-003: {enabled: true}}\n")
    with caplog.at_level(logging.INFO, logger="jobguard.config"):
        assert app.state.reloader.check(force=True)
    (record,) = [r for r in caplog.records if r.getMessage().startswith("configuration reloaded")]
    fields = record.fields  # type: ignore[attr-defined]
    assert fields["config"] == str(config)
    assert fields["digest"] == digest(load_config(str(config)).to_settings())
    assert (fields["kubernetesVersion"], fields["suspend_policies"]) == ("1.36", 0)


@pytest.mark.slow  # a real `jobguard serve` process
def test_serve_logs_its_configuration_then_ready_once_the_port_is_bound(tmp_path: Path) -> None:
    from jobguard.app.config import digest, load_config

    config = tmp_path / "config.yaml"
    config.write_text("kubernetesVersion: '1.34'\n")
    port = free_port()
    args = ["--log-level", "info", *loopback_args(port, "--config", str(config))]
    proc = subprocess.Popen(
        serve_command(args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=SERVE_ENV
    )
    try:
        wait_ready(f"http://127.0.0.1:{port}", proc=proc)
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    entries = [json.loads(line) for line in err.decode().splitlines() if line.startswith("{")]
    messages = [e["msg"] for e in entries]
    loaded = entries[messages.index("configuration loaded")]
    assert loaded["config"] == str(config)
    assert loaded["version"] == jobguard.__version__
    assert loaded["digest"] == digest(load_config(str(config)).to_settings())
    ready = messages.index("jobguard ready (kubernetesVersion 1.34)")
    bound = next(i for i, m in enumerate(messages) if m.startswith("Uvicorn running on"))
    assert messages.index("configuration loaded") < bound < ready


def test_large_bodies_are_judged_with_the_cyclic_collector_paused_and_resumed() -> None:
    import gc

    from jobguard.app.server.endpoints import _without_collector
    from jobguard.validators import Settings

    during: list[bool] = []

    def handler(body: bytes, settings: Settings) -> Any:
        during.append(gc.isenabled())
        raise ValueError(body.decode())

    assert gc.isenabled()
    with pytest.raises(ValueError, match="a body"):
        _without_collector(handler, b"a body", Settings())
    assert during == [False] and gc.isenabled()  # resumed even when judging failed


def test_large_bodies_with_few_strings_are_judged_on_the_loop() -> None:
    from jobguard.app.server.endpoints import INLINE_BODY_BYTES, judged_inline

    lists = {
        "completedIndexes": ",".join(str(i) for i in range(0, 24_000, 2)),  # 64 KiB each
        "failedIndexes": ",".join(str(i) for i in range(1, 24_000, 2)),
    }
    old = job(completionMode="Indexed", completions=100_000, parallelism=100_000)
    old["status"] = dict(lists)
    indexes = orjson.dumps(review(old, old, operation="UPDATE", sub="status"))
    assert len(indexes) > INLINE_BODY_BYTES and judged_inline(indexes)
    uids = orjson.dumps({"uids": [f"{i:07d}" for i in range(30_000)]})
    assert len(uids) > INLINE_BODY_BYTES and not judged_inline(uids)
    assert judged_inline(orjson.dumps(review(job())))
    # Few strings, but numbers by the hundred thousand (the exact decoder's seconds when the last
    # is `1e400`): judged off the loop.
    zeros = orjson.dumps(review(job()) | {"options": [0] * 150_000})
    assert len(zeros) > INLINE_BODY_BYTES and zeros.count(b'"') < 1000
    assert not judged_inline(zeros)
