"""Pathological bodies and silent clients against `jobguard serve` on loopback.

1. Pathological bodies, each sent to a new server (the peak RSS is the process's high-water
   mark): the status update that lists 250,000 pod UIDs in both `uncountedTerminatedPods`
   lists (4.8 MiB; 250,000 ST-006 duplicates), the same with 365,000 (just under the 7 MiB
   body cap), an Indexed Job's status update with 980,000 single indexes in completedIndexes,
   and a 7 MiB Job of empty objects: time to answer, HTTP status, answer size, causes, the
   server's peak RSS growth, and how long small reviews sent meanwhile (one every 5 ms on a
   kept-alive connection) waited at most. Run with large bodies judged in the worker thread
   (the default) and on the event loop (`inline`: INLINE_BODY_BYTES raised), which is the
   measurement behind the choice.
2. 150 requests with distinct 1 MiB label keys: the server's RSS growth.
   (`--concurrent-only`: instead, 20 Job CREATEs of ~105,000 small containers, 6.9 MiB each,
   sent at once with small reviews beside them: the peak RSS and the answers.)
3. A silent connection and one that trickles its headers: when the server closes them.

`--decoders`: instead, the shapes that send a body to the exact decoder (7 MiB of zeros in
`request.options` ending in `1e400` to /validate, in `NaN` to /mutate, and a 6.9 MiB Job of
small containers ending in `NaN` to /mutate), each to a new server with small reviews every
5 ms beside it: peak RSS, the small reviews' p99 and longest wait, the answer; then the RSS of
an idle server before and after 20 such bodies, one after another (memory given back).

`--idle-flood`: 1,000 connections opened and left idle (plain TCP on loopback; `--tls`: over
TLS, each handshaken), then small reviews, each on a new connection, for 5 s: how many got 200
and how many 503, their p99.

`--mixed`: every shape at once against one server: 20 concurrent requests of each large and
decoder shape above, 20 slow bodies (a 256 KiB review trickled 1 KiB every 0.2 s), 1,000
idle connections and a SIGHUP every 20 ms with a valid 1 MiB configuration, while small reviews
are sent every 5 ms on a kept-alive connection by a process of their own (`--no-reloads`:
without the SIGHUPs): the peak RSS against the chart's 384Mi, the
small reviews' p99 and failures, and what each large request was answered (`--tls`: all of it
over TLS).

`--reloads`: a server whose configuration file is a valid 1 MiB one (1,400 suspend policies),
sent 50 SIGHUPs 20 ms apart while small reviews are sent every 5 ms: the small reviews' p99
and longest wait, and how many times the file was read (`jobguard_config_reloads_total`).

`--baseline REF` runs 1 and 2 against the server of a git revision too.

Run: `.venv/bin/python -m bench.bench_hostile --repeat 3`.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import multiprocessing
import os
import select
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_stop import jobguard_command, source_tree  # noqa: E402
from tests.builders import job  # noqa: E402
from tests.loads import http_request, read_response  # noqa: E402
from tests.reviews import review  # noqa: E402
from tests.servers import free_port, rss_mib, wait_ready  # noqa: E402

INLINE = (
    # The request path is jobguard.app.server.endpoints's; a revision from before it, main's.
    "import sys, importlib, importlib.util as u; "
    "m = importlib.import_module('jobguard.app.server.endpoints' if u.find_spec('jobguard.app.server.endpoints') "
    "else 'jobguard.app.server.app'); m.INLINE_BODY_BYTES = 1 << 40; "
    "from jobguard.app.cli.main import main; sys.exit(main(sys.argv[1:]))"
)


@dataclass(frozen=True)
class Tls:
    """The server's certificate and key, and the client's context trusting its CA."""

    cert: str
    key: str
    context: ssl.SSLContext
    ca: str


@contextlib.contextmanager
def tls_files() -> Iterator[Tls]:
    from jobguard.app.certs import generate

    with tempfile.TemporaryDirectory() as tmp:
        files = generate("jobguard", "bench", Path(tmp), dev=True)
        context = ssl.create_default_context(cafile=str(files.ca_crt))
        yield Tls(str(files.tls_crt), str(files.tls_key), context, str(files.ca_crt))


@contextlib.contextmanager
def server(
    tree: Path, inline: bool, extra: list[str], tls: Tls | None = None
) -> Iterator[tuple[int, int]]:
    port = free_port()
    start = [sys.executable, "-c", INLINE] if inline else jobguard_command(tree)
    command = [*start, "serve", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--log-level", "warning", "--shutdown-delay", "0", *extra]
    if tls is not None:
        command += ["--tls-cert-file", tls.cert, "--tls-private-key-file", tls.key]
    env = {**os.environ, "JOBGUARD_CONFIG": ""}
    proc = subprocess.Popen(
        command, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        if tls is None:
            wait_ready(f"http://127.0.0.1:{port}", proc=proc, seconds=60)
        else:
            wait_ready(f"https://127.0.0.1:{port}", verify=tls.context, proc=proc, seconds=60)
        yield port, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            print("  (the server did not stop within 30 s of SIGTERM: killed)")
            proc.kill()
            proc.wait(timeout=30)


def connect(port: int, tls: Tls | None = None) -> socket.socket:
    """A connection to the server; over TLS, handshaken."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if tls is None:
        return sock
    return tls.context.wrap_socket(sock, server_hostname="127.0.0.1")


def status_update(count: int = 250_000) -> bytes:
    uids = [f"{i:07d}" for i in range(count)]
    old = job()
    old["status"] = {"active": 1, "startTime": "2026-01-01T10:00:00Z"}
    new = copy.deepcopy(old)
    new["status"]["uncountedTerminatedPods"] = {"succeeded": uids, "failed": uids}
    return orjson.dumps(review(new, old, operation="UPDATE", sub="status"))


def long_index_list(count: int = 980_000) -> bytes:
    """A status update of an Indexed Job whose completedIndexes lists `count` single indexes
    (every other one: no ranges), 6.9 MiB."""
    old = job(completionMode="Indexed", completions=10_000_000, parallelism=10)
    old["status"] = {"active": 1, "startTime": "2026-01-01T10:00:00Z"}
    new = copy.deepcopy(old)
    new["status"]["completedIndexes"] = ",".join(str(i) for i in range(0, 2 * count, 2))
    return orjson.dumps(review(new, old, operation="UPDATE", sub="status"))


def empty_objects(count: int = 2_400_000) -> bytes:
    """A Job review whose spec carries `count` empty objects (7 MiB): refused before reading."""
    obj = job()
    obj["spec"]["x-filler"] = [{}] * count
    return orjson.dumps(review(obj))


def send_small_reviews(port: int, stop: threading.Event, waits: list[float], pause: float) -> None:
    """Small reviews on one connection until `stop`, each answer's wait added to `waits`."""
    small = http_request("/validate", orjson.dumps(review(job())))
    with connect(port) as sock:
        while not stop.is_set():
            started = time.perf_counter()
            sock.sendall(small)
            read_response(sock)
            waits.append(time.perf_counter() - started)
            time.sleep(pause)


def options_numbers(last: bytes, size: int = 7 * 1024 * 1024 - 4096) -> bytes:
    """A Job review whose `request.options` lists zeros up to `size` bytes, then `last`."""
    head = orjson.dumps(review(job()))
    head = head.replace(b'"request":{', b'"request":{"options":"@@",', 1)
    count = (size - len(head)) // 2
    return head.replace(b'"@@"', b"[" + b"0," * count + last + b"]")


def costly_job_ending_in(last: bytes) -> bytes:
    """`costly_job` with `last` as the value of a field after its containers."""
    return costly_job().replace(b'"spec":{', b'"spec":{"x":' + last + b",", 1)


def decoder_attack(port: int, pid: int, endpoint: str, body: bytes) -> dict[str, float]:
    """`body` to `endpoint` with small reviews every 5 ms beside it."""
    waits: list[float] = []
    stop = threading.Event()
    others = threading.Thread(target=send_small_reviews, args=(port, stop, waits, 0.005))
    rss = rss_mib(pid)
    others.start()
    time.sleep(0.2)
    with connect(port) as sock:
        started = time.perf_counter()
        sock.sendall(http_request(endpoint + "?timeout=10s", body))
        status, _, _ = read_response(sock)
        seconds = time.perf_counter() - started
    time.sleep(0.3)
    stop.set()
    others.join()
    ordered = sorted(waits)
    return {
        "http_status": status,
        "seconds": seconds,
        "rss_before_mib": rss,
        "peak_rss_mib": rss_mib(pid, "VmHWM"),
        "small_p99_ms": ordered[int(len(ordered) * 0.99)] * 1000,
        "small_max_ms": ordered[-1] * 1000,
        "small_count": len(ordered),
    }


def memory_given_back(port: int, pid: int, endpoint: str, body: bytes, count: int = 20) -> str:
    """The idle RSS before and after `count` bodies sent one after another."""
    small = http_request("/validate", orjson.dumps(review(job())))
    with connect(port) as sock:
        sock.sendall(small)
        read_response(sock)
        time.sleep(0.5)
        before = rss_mib(pid)
        for _ in range(count):
            sock.sendall(http_request(endpoint + "?timeout=10s", body))
            read_response(sock)
        time.sleep(1.0)
        return f"idle RSS {before:.0f} -> {rss_mib(pid):.0f} MiB after {count} bodies"


def idle_flood(baseline: str | None, tls: Tls | None, count: int = 1000) -> None:
    """`count` connections held idle (over TLS: handshaken), then small reviews on new
    connections for 5 s. The header timeout is raised to 60 s so that none of the idle ones is
    closed for its silence during the run: only the connection bound is measured."""
    over = " over TLS (handshaken)" if tls else " (plain TCP)"
    print(f"{count} idle connections held{over}, then small reviews on new connections for 5 s")
    small = http_request("/validate", orjson.dumps(review(job())))
    trees: list[tuple[str, str | None]] = [("this tree", None)]
    if baseline:
        trees.append((f"baseline {baseline}", baseline))
    for name, ref in trees:
        with (
            source_tree(ref) as tree,
            server(tree, False, ["--header-timeout", "60"], tls) as (port, pid),
        ):
            started = time.perf_counter()
            held = [connect(port, tls) for _ in range(count)]
            opened = time.perf_counter() - started
            time.sleep(0.5)
            statuses: list[int] = []
            waits: list[float] = []
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                started = time.perf_counter()
                try:
                    with connect(port, tls) as sock:
                        sock.sendall(small)
                        statuses.append(read_response(sock)[0])
                except OSError:
                    statuses.append(0)
                waits.append(time.perf_counter() - started)
                time.sleep(0.02)
            rss = rss_mib(pid, "VmHWM")
            still_open = sum(1 for sock in held if _open(sock))
            for sock in held:
                sock.close()
            ordered = sorted(waits)
            print(
                f"  {name}: {statuses.count(200)} of {len(statuses)} answered 200,"
                f" {statuses.count(503)} got 503, {statuses.count(0)} failed;"
                f" p99 {ordered[int(len(ordered) * 0.99)] * 1000:.0f} ms,"
                f" longest {ordered[-1] * 1000:.0f} ms; {count} opened in {opened:.1f} s,"
                f" {still_open} still open; peak RSS {rss:.0f} MiB"
            )


def _open(sock: socket.socket) -> bool:
    """Whether the server has not closed `sock` (nothing to read and no end of file)."""
    try:
        sock.settimeout(0)
        return sock.recv(1) != b""
    except (BlockingIOError, ssl.SSLWantReadError):
        return True
    except OSError:
        return False


def large_config(limit: int = 1024 * 1024) -> str:
    """A valid configuration of just under `limit` bytes: suspend policies over long namespace
    names (within the 20,000 values a configuration may hold)."""
    text = "suspendPolicies:\n"
    i = 0
    while True:
        names = ", ".join(f"'team-{i:05d}-{n:02d}-" + "x" * 49 + "'" for n in range(40))
        policy = (
            f"  - name: queued-{i:05d}\n"
            f"    match: {{namespaces: [{names}]}}\n"
            f"    controllers: {{serviceAccounts: ['kueue-system:kueue']}}\n"
        )
        if len(text) + len(policy) > limit:
            return text
        text += policy
        i += 1


def reloads(baseline: str | None, count: int = 50) -> None:
    config = large_config()
    print(f"{count} SIGHUPs 20 ms apart, a valid {len(config) / 2**20:.2f} MiB configuration")
    trees: list[tuple[str, str | None]] = [("this tree", None)]
    if baseline:
        trees.append((f"baseline {baseline}", baseline))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.yaml"
        path.write_text(config)
        for name, ref in trees:
            with (
                source_tree(ref) as tree,
                server(tree, False, ["--config", str(path)]) as (
                    port,
                    pid,
                ),
            ):
                waits: list[float] = []
                stop = threading.Event()
                others = threading.Thread(
                    target=send_small_reviews, args=(port, stop, waits, 0.005)
                )
                others.start()
                time.sleep(0.3)
                started = time.perf_counter()
                for _ in range(count):
                    os.kill(pid, signal.SIGHUP)
                    time.sleep(0.02)
                time.sleep(3.0)
                seconds = time.perf_counter() - started
                stop.set()
                others.join()
                metrics = (
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=300)
                    .read()
                    .decode()
                )
                reads = [
                    line
                    for line in metrics.splitlines()
                    if line.startswith("jobguard_config_reloads_total{")
                ]
                ordered = sorted(waits)
                print(
                    f"  {name}: small reviews p99 {ordered[int(len(ordered) * 0.99)] * 1000:.0f}"
                    f" ms, longest {ordered[-1] * 1000:.0f} ms ({len(ordered)} in"
                    f" {seconds:.1f} s); {'; '.join(reads)}"
                )


def slow_body(port: int, tls: Tls | None, body: bytes, seconds: float = 15.0) -> int:
    """`body` to /validate, its Content-Length declared and its bytes trickled (1 KiB every
    0.2 s, for at most `seconds`): the status the server answers with (0: no answer)."""
    request = http_request("/validate?timeout=10s", body)
    head = request[: len(request) - len(body)]
    with connect(port, tls) as sock:
        sock.sendall(head)
        sock.settimeout(0.2)
        deadline = time.monotonic() + seconds
        offset = 0
        while time.monotonic() < deadline and offset < len(body):
            try:
                sock.sendall(body[offset : offset + 1024])
            except OSError:
                break
            offset += 1024
            # An answer or a close is waiting (a peek is refused on a TLS socket: select it).
            if select.select([sock], [], [], 0)[0]:
                break
        sock.settimeout(30)
        try:
            return read_response(sock)[0]
        except Exception:  # closed without an answer
            return 0


def mixed(
    baseline: str | None, tls: Tls | None, reloads: bool = True, each: int = 20, idle: int = 1000
) -> None:
    """Every hostile shape at once: `each` concurrent requests of every large and decoder shape
    and `each` slow bodies, `idle` idle connections held, and a SIGHUP every 20 ms with a valid
    1 MiB configuration, while small reviews are sent every 5 ms on a kept-alive connection:
    the server's peak RSS, the small reviews' p99 and failures, the large ones' answers."""
    shapes = {
        "zeros ending in 1e400 -> /validate": ("/validate", options_numbers(b"1e400")),
        "zeros ending in NaN -> /mutate": ("/mutate", options_numbers(b"NaN")),
        "small containers ending in NaN -> /mutate": ("/mutate", costly_job_ending_in(b"NaN")),
        "small containers -> /validate": ("/validate", costly_job()),
        "250,000 UIDs -> /validate": ("/validate", status_update()),
        "980,000 indexes -> /validate": ("/validate", long_index_list()),
        "2,400,000 empty objects -> /validate": ("/validate", empty_objects()),
    }
    over = " over TLS" if tls else ""
    print(
        f"mixed load{over}: {each} concurrent requests of each of {len(shapes)} large shapes,"
        f" {each} slow bodies, {idle} idle connections, a SIGHUP every 20 ms (1 MiB"
        " configuration); small reviews every 5 ms"
    )
    trees: list[tuple[str, str | None]] = [("this tree", None)]
    if baseline:
        trees.append((f"baseline {baseline}", baseline))
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.yaml"
        config.write_text(large_config())
        for name, ref in trees:
            extra = ["--config", str(config), "--header-timeout", "60"]
            with source_tree(ref) as tree, server(tree, False, extra, tls) as (port, pid):
                mixed_run(name, port, pid, tls, shapes, each, idle, reloads)


def small_review_process(port: int, ca: str | None, stop: Any, results: Any) -> None:
    """Small reviews every 5 ms on a kept-alive connection until `stop`; their waits and the
    failures (a status other than 200, or an error: then a new connection) sent on `results`."""
    tls = None
    if ca is not None:
        tls = Tls("", "", ssl.create_default_context(cafile=ca), ca)
    small = http_request("/validate", orjson.dumps(review(job())))
    waits: list[float] = []
    failures: list[str] = []
    sock = connect(port, tls)
    while not stop.is_set():
        started = time.perf_counter()
        try:
            sock.sendall(small)
            status = read_response(sock)[0]
            if status != 200:
                failures.append(str(status))
        except Exception as exc:  # counted, then on a new connection
            failures.append(type(exc).__name__)
            sock.close()
            sock = connect(port, tls)
        waits.append(time.perf_counter() - started)
        time.sleep(0.005)
    sock.close()
    results.send((waits, failures))


def mixed_run(
    name: str,
    port: int,
    pid: int,
    tls: Tls | None,
    shapes: dict[str, tuple[str, bytes]],
    each: int,
    idle: int,
    reloads: bool,
) -> None:
    """`mixed` against one server."""
    idle_rss = rss_mib(pid)
    held = [connect(port, tls) for _ in range(idle)]
    stop = threading.Event()
    statuses: dict[str, list[int]] = {what: [] for what in [*shapes, "slow bodies"]}
    padded = job()
    padded["metadata"]["annotations"] = {"pad": "x" * 256 * 1024}
    slow = orjson.dumps(review(padded))

    def large(what: str, endpoint: str, body: bytes) -> None:
        try:
            with connect(port, tls) as sock:
                sock.sendall(http_request(endpoint + "?timeout=10s", body))
                statuses[what].append(read_response(sock)[0])
        except Exception:  # no answer
            statuses[what].append(0)

    def slow_one() -> None:
        statuses["slow bodies"].append(slow_body(port, tls, slow))

    def sighups() -> None:
        while reloads and not stop.is_set():
            os.kill(pid, signal.SIGHUP)
            time.sleep(0.02)

    # Small reviews are sent and timed by a process of their own: in this one they would share
    # the interpreter lock with the 160 attacking threads.
    spawn = multiprocessing.get_context("spawn")
    results, child_end = spawn.Pipe(duplex=False)
    stopped = spawn.Event()
    timer = spawn.Process(
        target=small_review_process, args=(port, tls.ca if tls else None, stopped, child_end)
    )
    timer.start()
    others = [threading.Thread(target=sighups)]
    for thread in others:
        thread.start()
    time.sleep(1.5)
    started = time.perf_counter()
    attackers = [
        threading.Thread(target=large, args=(what, endpoint, body))
        for what, (endpoint, body) in shapes.items()
        for _ in range(each)
    ] + [threading.Thread(target=slow_one) for _ in range(each)]
    for thread in attackers:
        thread.start()
    for thread in attackers:
        thread.join()
    seconds = time.perf_counter() - started
    time.sleep(0.5)
    stop.set()
    stopped.set()
    for thread in others:
        thread.join()
    waits, small_failures = results.recv()
    timer.join(timeout=30)
    peak = rss_mib(pid, "VmHWM")
    for sock in held:
        sock.close()
    ordered = sorted(waits)
    print(
        f"  {name}: peak RSS {peak:.0f} MiB (idle {idle_rss:.0f}; the chart's limit 384);"
        f" small reviews: {len(ordered)}, p99 {ordered[int(len(ordered) * 0.99)] * 1000:.0f} ms,"
        f" longest {ordered[-1] * 1000:.0f} ms, failed {len(small_failures)}"
        f" {sorted(set(small_failures))}; all answered in {seconds:.1f} s"
    )
    for what, got in statuses.items():
        counts = ", ".join(f"{got.count(c)} x {c or 'none'}" for c in sorted(set(got)))
        print(f"    {what}: {counts}")


def decoders(baseline: str | None, repeat: int) -> None:
    attacks = {
        "zeros ending in 1e400 -> /validate": ("/validate", options_numbers(b"1e400")),
        "zeros ending in NaN -> /mutate": ("/mutate", options_numbers(b"NaN")),
        "small containers ending in NaN -> /mutate": ("/mutate", costly_job_ending_in(b"NaN")),
    }
    trees: list[tuple[str, str | None]] = [("this tree", None)]
    if baseline:
        trees.append((f"baseline {baseline}", baseline))
    for what, (endpoint, body) in attacks.items():
        print(f"{what}: {len(body) / 2**20:.2f} MiB")
        for name, ref in trees:
            with source_tree(ref) as tree:
                runs = []
                for _ in range(repeat):
                    with server(tree, False, []) as (port, pid):
                        runs.append(decoder_attack(port, pid, endpoint, body))
                report(name, runs)
                with server(tree, False, []) as (port, pid):
                    print(f"  {name}: {memory_given_back(port, pid, endpoint, body)}")


def pathological(port: int, pid: int, body: bytes) -> dict[str, float]:
    waits: list[float] = []
    stop = threading.Event()

    def small_reviews() -> None:
        send_small_reviews(port, stop, waits, 0.005)

    before = rss_mib(pid, "VmHWM")
    others = threading.Thread(target=small_reviews)
    others.start()
    time.sleep(0.2)
    with connect(port) as sock:
        started = time.perf_counter()
        sock.sendall(http_request("/validate", body))
        status, _, answer = read_response(sock)
        seconds = time.perf_counter() - started
    time.sleep(0.1)
    stop.set()
    others.join()
    response = orjson.loads(answer)["response"] if status == 200 else {}
    causes = response.get("status", {}).get("details", {}).get("causes", [])
    return {
        "http_status": status,
        "seconds": seconds,
        "answer_mib": len(answer) / 2**20,
        "causes": len(causes),
        "peak_rss_growth_mib": rss_mib(pid, "VmHWM") - before,
        "small_max_ms": max(waits) * 1000,
        "small_median_ms": statistics.median(waits) * 1000,
    }


def label_keys(port: int, pid: int, count: int = 150) -> float:
    with connect(port) as sock:
        before = 0.0
        for i in range(count):
            obj = job()
            obj["metadata"]["labels"] = {f"{i:06d}" + "k" * (1024 * 1024): "v"}
            sock.sendall(http_request("/validate", orjson.dumps(review(obj))))
            read_response(sock)
            if i == 9:
                before = rss_mib(pid)
        return rss_mib(pid) - before


def closed_after(port: int, send: bytes, trickle: bool) -> float:
    with connect(port) as sock:
        sock.sendall(send)
        started = time.monotonic()
        try:
            while True:
                if trickle:
                    sock.sendall(b"X-Slow: yes\r\n")
                    sock.settimeout(0.5)
                    with contextlib.suppress(TimeoutError):
                        if not sock.recv(100):
                            break
                elif not sock.recv(100):
                    break
        except OSError:
            pass
        return time.monotonic() - started


def costly_job(size: int = 6_900 * 1024 * 1024 // 1000) -> bytes:
    """A Job CREATE whose spec.template.spec.containers hold ~105,000 small containers (names
    padded to make 6.9 MiB; every name the same, so each is a duplicate)."""
    obj = job()
    container = {"name": "c1", "image": "registry.example/team/image:1.0.0", "args": ["run"]}
    base = len(orjson.dumps(review(obj))) - len(orjson.dumps(obj["spec"]["template"]["spec"]))
    count = (size - base) // (len(orjson.dumps(container)) + 1)
    obj["spec"]["template"]["spec"]["containers"] = [container] * count
    return orjson.dumps(review(obj))


def concurrent(port: int, pid: int, body: bytes, count: int = 20) -> dict[str, float]:
    """`count` copies of `body` sent at once (each on its own connection), and small reviews
    every 50 ms beside them: the peak RSS, the answers' statuses and the small ones' waits."""
    waits: list[float] = []
    statuses: list[int] = []
    stop = threading.Event()

    def small_reviews() -> None:
        send_small_reviews(port, stop, waits, 0.05)

    def large() -> None:
        with connect(port) as sock:
            sock.sendall(http_request("/validate?timeout=10s", body))
            statuses.append(read_response(sock)[0])

    before = rss_mib(pid)
    started = time.perf_counter()
    threads = [threading.Thread(target=large) for _ in range(count)]
    others = threading.Thread(target=small_reviews)
    others.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    stop.set()
    others.join()
    return {
        "rss_before_mib": before,
        "peak_rss_mib": rss_mib(pid, "VmHWM"),
        "answered_200": statuses.count(200),
        "refused_503": statuses.count(503),
        "other": len(statuses) - statuses.count(200) - statuses.count(503),
        "all_answered_s": seconds,
        "small_max_ms": max(waits) * 1000,
    }


def report(label: str, runs: list[dict[str, float]]) -> None:
    keys = list(runs[0])
    print(f"  {label}: " + ", ".join(f"{k} {[round(r[k], 2) for r in runs]}" for k in keys))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", metavar="REF")
    parser.add_argument("--header-timeout", type=float, default=10.0)
    parser.add_argument(
        "--concurrent-only",
        action="store_true",
        help="only the 20 concurrent 6.9 MiB Jobs of small containers (this tree, --baseline)",
    )
    parser.add_argument(
        "--decoders",
        action="store_true",
        help="only the bodies that take the exact decoder (this tree, --baseline)",
    )
    parser.add_argument(
        "--reloads", action="store_true", help="only the SIGHUP storm (this tree, --baseline)"
    )
    parser.add_argument(
        "--idle-flood",
        action="store_true",
        help="only the idle connections (this tree, --baseline)",
    )
    parser.add_argument(
        "--tls",
        action="store_true",
        help="--idle-flood and --mixed over TLS (handshaken connections)",
    )
    parser.add_argument(
        "--connections", type=int, default=1000, help="--idle-flood: idle connections held"
    )
    parser.add_argument(
        "--mixed", action="store_true", help="every shape at once (this tree, --baseline)"
    )
    parser.add_argument("--no-reloads", action="store_true", help="--mixed without the SIGHUPs")
    args = parser.parse_args()
    if args.mixed:
        with contextlib.ExitStack() as stack:
            tls = stack.enter_context(tls_files()) if args.tls else None
            mixed(args.baseline, tls, not args.no_reloads)
        return
    if args.idle_flood:
        with contextlib.ExitStack() as stack:
            tls = stack.enter_context(tls_files()) if args.tls else None
            idle_flood(args.baseline, tls, args.connections)
        return
    if args.reloads:
        reloads(args.baseline)
        return
    if args.decoders:
        decoders(args.baseline, args.repeat)
        return
    if args.concurrent_only:
        body = costly_job()
        print(f"20 concurrent Job CREATEs of small containers, {len(body) / 2**20:.2f} MiB each")
        trees: list[tuple[str, str | None]] = [("this tree", None)]
        if args.baseline:
            trees.append((f"baseline {args.baseline}", args.baseline))
        for name, ref in trees:
            with source_tree(ref) as tree:
                runs = []
                for _ in range(args.repeat):
                    with server(tree, False, []) as (port, pid):
                        runs.append(concurrent(port, pid, body))
                report(name, runs)
        return
    bodies = {
        "250,000 UIDs in both uncountedTerminatedPods lists": status_update(),
        "365,000 UIDs in both lists (just under the 7 MiB body cap)": status_update(365_000),
        "980,000 single indexes in completedIndexes": long_index_list(),
        "2,400,000 empty objects": empty_objects(),
    }
    trees = [("this tree", None)]
    if args.baseline:
        trees.append((f"baseline {args.baseline}", args.baseline))
    for name, ref in trees:
        with source_tree(ref) as tree:
            modes = [("thread", False), ("inline", True)] if ref is None else [("as is", False)]
            for what, body in bodies.items():
                print(f"{what}: {len(body) / 2**20:.2f} MiB")
                for mode, inline in modes:
                    # A new server for each run: the peak RSS is the process's high-water mark.
                    runs = []
                    for _ in range(args.repeat):
                        with server(tree, inline, []) as (port, pid):
                            runs.append(pathological(port, pid, body))
                    report(f"{name}, {mode}", runs)
            with server(tree, False, []) as (port, pid):
                growth = label_keys(port, pid)
            print(f"  {name}: RSS growth over 140 distinct 1 MiB label keys: {growth:.1f} MiB")
    with server(ROOT, False, ["--header-timeout", str(args.header_timeout)]) as (port, _):
        silent = closed_after(port, b"", trickle=False)
        trickling = closed_after(port, b"POST /validate HTTP/1.1\r\n", trickle=True)
    print(
        f"header timeout {args.header_timeout:g}s: silent connection closed after {silent:.2f}s,"
        f" trickling headers after {trickling:.2f}s"
    )


if __name__ == "__main__":
    main()
