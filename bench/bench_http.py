"""The webhook over TLS on loopback, one server worker, beside the floor (bench/floor.py: a
bare ASGI handler that only parses the body, on the stack `jobguard serve` picks).

Measures with wrk (saturating: throughput, p50/p99; --rounds runs alternating between the
servers, the ratio to the floor the median of the rounds' ratios) and hey (a fixed 500
requests/s: p50/p99; the run with the median p99 of --rounds runs, alternating likewise; hey's
ten workers fire together, so its latencies are those of bursts of ten) for five reviews: a Kueue Job
UPDATE (6 KB), an allowed and a denied status update (12.7 KB), a status update with 64 KiB
completed and failed index lists (274 KB), and a status stream whose 64 KiB completedIndexes
grows every request. `--baseline REF` adds a revision's server, `--asyncio-floor` the floor on
asyncio's loop. Writes bench/results/http-<date>.json.

Run: `make bench-http` (installs wrk and hey from the system packages when missing).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from bench.bench_stop import jobguard_command, source_tree
from bench.payloads import QUEUE_LABEL, kueue_job, review_bytes
from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
UID = "5f0c1d2e-0000-4000-8000-000000000001"


def _job(suspend: bool) -> dict[str, Any]:
    containers = [
        {
            "name": f"worker-{i}",
            "image": "registry.example/trainer:2.1",
            "command": ["python", "-m", "trainer", "--epochs", "10", "--batch-size", "256"],
            "env": [{"name": f"VAR_{j}", "value": f"value-{j}"} for j in range(8)],
            "resources": {
                "requests": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"},
                "limits": {"memory": "16Gi", "nvidia.com/gpu": "1"},
            },
            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
            "imagePullPolicy": "IfNotPresent",
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        }
        for i in range(2)
    ]
    pod = {
        "restartPolicy": "Never",
        "containers": containers,
        "volumes": [{"name": "data", "emptyDir": {}}],
        "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
    }
    obj = kueue_job(
        "train",
        UID,
        pod,
        suspend=suspend,
        parallelism=8,
        completions=8,
        completionMode="Indexed",
        manualSelector=False,
    )
    # What the API server adds to a stored object.
    obj["metadata"].update(
        generation=1, resourceVersion="123456", creationTimestamp="2026-01-01T10:00:00Z"
    )
    return obj


def _review(new: Any, old: Any, sub: str = "") -> bytes:
    return review_bytes(new, old, sub=sub, user="system:serviceaccount:kueue-system:kueue")


def _managed_fields(manager: str, subresource: str, fields: dict[str, Any]) -> dict[str, Any]:
    entry = {
        "manager": manager,
        "operation": "Update",
        "apiVersion": "batch/v1",
        "time": "2026-01-01T10:01:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    return {**entry, "subresource": subresource} if subresource else entry


def _as_stored(obj: dict[str, Any]) -> dict[str, Any]:
    """What the API server sends of a Job it stored: managedFields included (a third of a
    real Job's bytes)."""
    stored = copy.deepcopy(obj)
    for container in stored["spec"]["template"]["spec"]["containers"]:
        container["env"] += [
            {"name": f"TRAINER_OPT_{j}", "value": f"setting-{j}"} for j in range(4)
        ]
    container_fields = {
        f'k:{{"name":"{c["name"]}"}}': {
            ".": {},
            "f:command": {},
            "f:env": {
                f'k:{{"name":"{e["name"]}"}}': {".": {}, "f:name": {}, "f:value": {}}
                for e in c["env"]
            },
            "f:image": {},
            "f:imagePullPolicy": {},
            "f:name": {},
            "f:resources": {"f:limits": {}, "f:requests": {}},
            "f:volumeMounts": {},
        }
        for c in stored["spec"]["template"]["spec"]["containers"]
    }
    stored["metadata"]["managedFields"] = [
        _managed_fields(
            "kueue",
            "",
            {
                "f:metadata": {"f:labels": {".": {}, f"f:{QUEUE_LABEL}": {}}},
                "f:spec": {
                    "f:completionMode": {},
                    "f:completions": {},
                    "f:parallelism": {},
                    "f:suspend": {},
                    "f:template": {"f:spec": {"f:containers": container_fields}},
                },
            },
        ),
        _managed_fields(
            "kube-controller-manager",
            "status",
            {
                "f:status": {
                    "f:active": {},
                    "f:conditions": {
                        ".": {},
                        'k:{"type":"Suspended"}': {
                            ".": {},
                            "f:lastProbeTime": {},
                            "f:lastTransitionTime": {},
                            "f:message": {},
                            "f:reason": {},
                            "f:status": {},
                            "f:type": {},
                        },
                    },
                    "f:ready": {},
                    "f:startTime": {},
                    "f:terminating": {},
                    "f:uncountedTerminatedPods": {},
                }
            },
        ),
    ]
    stored["metadata"]["annotations"] = {
        "kueue.x-k8s.io/workload": f"job-{stored['metadata']['name']}-5f0c1",
        "kueue.x-k8s.io/admitted-by": "cluster-queue-a100",
    }
    return stored


def _indexes(start: int, size: int) -> list[str]:
    """Every other index from `start`: an interval list of about `size` bytes, as a large
    Indexed Job reports it (12,000 single indexes in 64 KiB)."""
    done = []
    length = 0
    i = start
    while length < size:
        text = str(i)
        done.append(text)
        length += len(text) + 1
        i += 2
    return done


def reviews() -> dict[str, bytes]:
    old = _job(True)
    new = copy.deepcopy(old)
    new["spec"]["suspend"] = False
    new["spec"]["template"]["spec"]["nodeSelector"] = {"pool": "a100"}
    running = copy.deepcopy(new)
    running["status"] = {
        "startTime": "2026-01-01T10:01:00Z",
        "active": 8,
        "ready": 6,
        "terminating": 0,
        "uncountedTerminatedPods": {},
        "conditions": [
            {
                "type": "Suspended",
                "status": "False",
                "reason": "JobResumed",
                "message": "Job resumed",
                "lastProbeTime": "2026-01-01T10:01:00Z",
                "lastTransitionTime": "2026-01-01T10:01:00Z",
            }
        ],
    }
    running = _as_stored(running)
    progressed = copy.deepcopy(running)
    progressed["status"].update(ready=8, succeeded=1, completedIndexes="0")
    # The same update from a controller that miscounts: succeeded goes down, more ready pods
    # than active ones (ST-020, ST-040).
    denied_old = copy.deepcopy(progressed)
    denied_old["status"].update(succeeded=3, completedIndexes="0-2")
    denied_new = copy.deepcopy(denied_old)
    denied_new["status"].update(active=7, ready=8, succeeded=2, completedIndexes="0-1")
    # A large Indexed Job with backoffLimitPerIndex: 64 KiB of completed (even) and of failed
    # (odd) indexes in both objects; one more index completes.
    big_old = copy.deepcopy(running)
    big_old["spec"]["completions"] = big_old["spec"]["parallelism"] = 100_000
    big_old["spec"]["backoffLimitPerIndex"] = 1
    completed = _indexes(0, 64 * 1024 - 16)
    big_old["status"]["completedIndexes"] = ",".join(completed[:-1])
    big_old["status"]["failedIndexes"] = ",".join(_indexes(1, 64 * 1024 - 16))
    big_old["status"]["succeeded"] = len(completed) - 1
    big_new = copy.deepcopy(big_old)
    big_new["status"]["completedIndexes"] = ",".join(completed)
    big_new["status"]["succeeded"] = len(completed)
    # A 64 KiB completedIndexes that grows with every request, as a real status stream does:
    # nothing can be served from the index-string cache. wrk fills in __N__.
    growing_old = copy.deepcopy(running)
    growing_old["spec"]["completions"] = growing_old["spec"]["parallelism"] = 2**31 - 1
    growing_old["status"]["completedIndexes"] = ",".join(completed[:-1])
    growing_new = copy.deepcopy(growing_old)
    growing_new["status"]["completedIndexes"] = ",".join(completed) + ",__N__"
    return {
        "status-64KiB-indexes-growing": _review(growing_new, growing_old, "status"),
        "job-update": _review(new, old),
        "status-update-allowed": _review(progressed, running, "status"),
        "status-update-denied": _review(denied_new, denied_old, "status"),
        "status-64KiB-indexes": _review(big_new, big_old, "status"),
    }


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.wait(timeout=30)


def _median(runs: list[dict[str, float]], key: str = "requests_per_second") -> dict[str, float]:
    """The run with the median `key` (its other figures come with it)."""
    ordered = sorted(runs, key=lambda r: r[key])
    return ordered[len(ordered) // 2]


class Cores:
    """Where the servers and the load generators run. By default (on 2 CPUs or more) every
    server on the last CPU and wrk and hey on the others: the servers are measured on one core,
    as the issue's figures are, and the scheduler cannot move a server onto the load generator's
    core mid-run (that drift made rounds differ by a fifth). `--no-pin` leaves it to the OS."""

    def __init__(self, pin: bool) -> None:
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        self.pinned = pin and len(cpus) >= 2
        self.server = {cpus[-1]} if self.pinned else set(cpus)
        self.load = set(cpus[:-1]) if self.pinned else set(cpus)

    def _pin(self, cpus: set[int]) -> Any:
        return (lambda: os.sched_setaffinity(0, cpus)) if self.pinned else None

    def for_server(self) -> Any:
        return self._pin(self.server)

    def for_load(self) -> Any:
        return self._pin(self.load)

    def describe(self) -> dict[str, Any]:
        return {"pinned": self.pinned, "servers": sorted(self.server), "load": sorted(self.load)}


CORES = Cores(pin=False)
"""Set by main() from --no-pin."""


def _start(command: list[str], url: str, ca: str, cwd: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "JOBGUARD_CONFIG": ""}
    proc = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=CORES.for_server(),
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.post(url, content=_review(_job(True), _job(True)), verify=ca, timeout=2)
            return proc
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"server did not start: {' '.join(command)}")


_WRK_LUA = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = io.open("{body}", "rb")
local body = f:read("*all")
f:close()
local head, tail = body:match("^(.*)__N__(.*)$")
if head == nil then
  wrk.body = body
else
  -- A new, larger last index on every request.
  local n = {start}
  request = function()
    n = n + 2
    return wrk.format(nil, nil, nil, head .. n .. tail)
  end
end
"""


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


def wrk(url: str, body_file: str, seconds: int, connections: int) -> dict[str, float]:
    script = Path(body_file).with_suffix(".lua")
    script.write_text(_WRK_LUA.replace("{body}", body_file).replace("{start}", "200000"))
    out = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script), url],
        preexec_fn=CORES.for_load(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p50 = _ms(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))  # type: ignore[union-attr]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "requests_per_second": rps,
        "p50_ms": p50,
        "p99_ms": p99,
        "non_2xx": float(errors.group(1)) if errors else 0.0,
    }


def hey(url: str, body_file: str, seconds: int, rate: int) -> dict[str, float]:
    workers = 10
    out = subprocess.run(
        [
            "hey",
            "-z",
            f"{seconds}s",
            "-c",
            str(workers),
            "-q",
            str(rate // workers),
            "-m",
            "POST",
            "-T",
            "application/json",
            "-D",
            body_file,
            url,
        ],
        preexec_fn=CORES.for_load(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    p50 = float(re.search(r"50% in ([\d.]+) secs", out).group(1)) * 1000  # type: ignore[union-attr]
    p99 = float(re.search(r"99% in ([\d.]+) secs", out).group(1)) * 1000  # type: ignore[union-attr]
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    return {"requests_per_second": rps, "p50_ms": p50, "p99_ms": p99}


def _serve_command(tree: Path, certs: Any) -> list[str]:
    """`jobguard serve` of this tree, or of a git revision's `jobguard` package in `tree`."""
    return [
        *jobguard_command(tree),
        "serve",
        "--host",
        "127.0.0.1",
        "--tls-cert-file",
        str(certs.tls_crt),
        "--tls-private-key-file",
        str(certs.tls_key),
        "--log-level",
        "warning",
        "--port",
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rate", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3, help="saturated runs per server")
    parser.add_argument(
        "--baseline", metavar="REF", help="also run the server of this git revision, alternating"
    )
    parser.add_argument("--only", nargs="*", help="review names to measure (default: all)")
    parser.add_argument(
        "--results-dir",
        type=Path,
        default=RESULTS,
        help="where the JSON record goes (make bench-http: the source tree's, measuring the "
        "compiled copy)",
    )
    parser.add_argument(
        "--asyncio-floor",
        action="store_true",
        help="also run the floor on asyncio's loop (the floor's stack before uvloop)",
    )
    parser.add_argument(
        "--no-pin",
        action="store_true",
        help="let the OS place servers and load generators (default: servers on the last CPU)",
    )
    args = parser.parse_args()
    global CORES
    CORES = Cores(pin=not args.no_pin)
    for tool in ("wrk", "hey"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is missing: apt-get install -y wrk hey (make bench-http)")
    from jobguard.app.certs import generate
    from jobguard.app.server.uvicorn_server import fast_stack

    # The floor runs on the stack `jobguard serve` picks by default.
    loop, http = fast_stack()
    bindir = Path(sys.executable).parent
    with (
        tempfile.TemporaryDirectory() as tmp,
        source_tree(args.baseline) as baseline_tree,
        contextlib.ExitStack() as stack,
    ):
        certs = generate("jobguard", "bench", Path(tmp) / "certs", dev=True)
        ca = str(certs.ca_crt)
        tls = ["--ssl-certfile", str(certs.tls_crt), "--ssl-keyfile", str(certs.tls_key)]
        bodies = {}
        for name, body in reviews().items():
            if args.only and name not in args.only:
                continue
            path = Path(tmp) / f"{name}.json"
            path.write_bytes(body)
            bodies[name] = (str(path), len(body))
        servers: dict[str, tuple[list[str], Path]] = {
            "floor": (
                [
                    str(bindir / "uvicorn"),
                    "bench.floor:app",
                    "--loop",
                    loop,
                    "--http",
                    http,
                    "--host",
                    "127.0.0.1",
                    "--log-level",
                    "warning",
                    "--no-access-log",
                    *tls,
                    "--port",
                ],
                ROOT,
            ),
            "jobguard": (_serve_command(ROOT, certs), ROOT),
        }
        if args.asyncio_floor:
            command = servers["floor"][0].copy()
            command[command.index("--loop") + 1] = "asyncio"
            servers["floor-asyncio"] = (command, ROOT)
        if args.baseline:
            servers["baseline"] = (_serve_command(baseline_tree, certs), baseline_tree)
        results: dict[str, Any] = {name: {"bytes": size} for name, (_, size) in bodies.items()}
        urls: dict[str, str] = {}
        # The servers run at once, idle but for the one being measured; saturated runs
        # alternate between them, so drift in the machine's speed hits all alike.
        for server, (command, cwd) in servers.items():
            port = free_port()
            urls[server] = f"https://127.0.0.1:{port}/validate"
            proc = _start([*command, str(port)], urls[server], ca, cwd)
            stack.callback(_stop, proc)
        for name, (body_path, _) in bodies.items():
            runs: dict[str, list[dict[str, float]]] = {server: [] for server in servers}
            for _ in range(args.rounds):
                for server in servers:
                    runs[server].append(
                        wrk(urls[server], body_path, args.seconds, args.connections)
                    )
            # The fixed rate alternates likewise (a tail latency moves more than a rate).
            fixed_runs: dict[str, list[dict[str, float]]] = {server: [] for server in servers}
            for _ in range(args.rounds if "growing" not in name else 0):
                for server in servers:
                    fixed_runs[server].append(hey(urls[server], body_path, args.seconds, args.rate))
            for server in servers:
                results[name][server] = {
                    "saturated": _median(runs[server]),
                    "saturated_runs": runs[server],
                    f"fixed_{args.rate}_rps": _median(fixed_runs[server], "p99_ms")
                    if fixed_runs[server]
                    else {},
                    f"fixed_{args.rate}_rps_runs": fixed_runs[server],
                }
            for server in servers:
                if server.startswith("floor"):
                    continue
                for floor_name in (f for f in servers if f.startswith("floor")):
                    suffix = "" if floor_name == "floor" else f"_{floor_name}"
                    # Each round's ratio: its two runs were seconds apart, so the machine's
                    # drift (the floor moving by a third between rounds here) hits both. The
                    # figure is the median of those; the ratio of the median runs, which can
                    # pair runs from different rounds, is kept beside it.
                    ratios = [
                        round(mine["requests_per_second"] / floor["requests_per_second"], 3)
                        for mine, floor in zip(runs[server], runs[floor_name], strict=True)
                    ]
                    results[name][f"{server}_round_ratios{suffix}"] = ratios
                    results[name][f"{server}_ratio_to_floor{suffix}"] = statistics.median(ratios)
                    results[name][f"{server}_ratio_of_medians{suffix}"] = round(
                        results[name][server]["saturated"]["requests_per_second"]
                        / results[name][floor_name]["saturated"]["requests_per_second"],
                        3,
                    )
    record = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "python -m bench.bench_http " + " ".join(sys.argv[1:]),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "load_average": os.getloadavg(),
        },
        "stack": {"loop": loop, "http": http},
        "cores": CORES.describe(),
        "settings": {**vars(args), "results_dir": str(args.results_dir)},
        "results": results,
    }
    args.results_dir.mkdir(parents=True, exist_ok=True)
    out = args.results_dir / f"http-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"stack: {loop} + {http} (floor and jobguard)")
    print(
        f"{'review':30} {'bytes':>7} {'server':9} {'req/s':>8} {'p50 ms':>7} {'p99 ms':>7}"
        f" {'@' + str(args.rate) + '/s p50':>10} {'p99':>7}"
    )
    for name, row in results.items():
        for server in servers:
            s, f = row[server]["saturated"], row[server][f"fixed_{args.rate}_rps"]
            fixed = f"{f['p50_ms']:10.2f} {f['p99_ms']:7.2f}" if f else f"{'-':>10} {'-':>7}"
            print(
                f"{name:30} {row['bytes']:7d} {server:9} {s['requests_per_second']:8.0f} "
                f"{s['p50_ms']:7.2f} {s['p99_ms']:7.2f} {fixed}"
            )
        for server in servers:
            if server.startswith("floor"):
                continue
            for floor_name in (f for f in servers if f.startswith("floor")):
                suffix = "" if floor_name == "floor" else f"_{floor_name}"
                rounds = ", ".join(f"{r:.2f}" for r in row[f"{server}_round_ratios{suffix}"])
                print(
                    f"{'':30} {'':7} {server} / {floor_name}:"
                    f" {row[f'{server}_ratio_to_floor{suffix}']:.2f} (median of the rounds:"
                    f" {rounds}; of the median runs"
                    f" {row[f'{server}_ratio_of_medians{suffix}']:.2f})"
                )
    print(f"written: {out}")


if __name__ == "__main__":
    main()
