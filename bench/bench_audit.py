"""The audit's memory against Jobs near etcd's object limit, on the real control plane
(tests/controlplane.py: etcd with its default --max-request-bytes, 1.5 MiB; kube-apiserver with
its 3 MiB limit on a request body).

Jobs of each shape are stored as large as the control plane accepts them (suspended: no pods),
`--jobs` of each in a namespace of its own:

- `env`: one container whose env lists `{"name": "E"}` entries (the most Python objects per
  stored byte known: one dict and one string per 13 bytes of JSON);
- `containers`: small containers (`{"name": "c1a", "image": "i"}`), each of which the API
  server stores with its defaults (about 150 bytes of JSON listed, 50 stored);
- `ordinary`: `--ordinary` Jobs of one container, as users write them.

Then `jobguard audit --namespace NS` per shape (peak RSS of the process, `ru_maxrss`), and
`jobguard serve --audit-interval 60` over all of them (peak RSS, VmHWM, once the first pass has
ended), each with the default page size, for this tree and, with `--baseline REF`, a revision.
The chart's memory limit is 384Mi (charts/jobguard/values.yaml).

Run: `.venv/bin/python -m bench.bench_audit --baseline 0c9f47a`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import httpx
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_stop import jobguard_command, source_tree  # noqa: E402
from tests.controlplane import ControlPlane, build, create_namespace  # noqa: E402
from tests.realapi.kube import job_manifest  # noqa: E402
from tests.servers import free_port, rss_mib, wait_ready  # noqa: E402


def shaped(name: str, shape: str, count: int) -> dict[str, Any]:
    body = job_manifest(name, suspend=True)
    pod = body["spec"]["template"]["spec"]
    if shape == "env":
        pod["containers"][0]["env"] = [{"name": "E"}] * count
    elif shape == "containers":
        pod["containers"] = [{"name": f"c{i:x}", "image": "i"} for i in range(count)]
    return body


def create(admin: httpx.Client, namespace: str, body: dict[str, Any]) -> httpx.Response:
    return admin.post(
        f"/apis/batch/v1/namespaces/{namespace}/jobs",
        content=orjson.dumps(body),
        headers={"Content-Type": "application/json"},
    )


def largest(admin: httpx.Client, namespace: str, shape: str) -> int:
    """The largest count of `shape` the control plane stores (a binary search by creating)."""
    # Above these the request is refused anyway (3 MiB of JSON; validating 100,000 containers
    # outlasts the API server's request timeout).
    low, high = 1, {"env": 300_000, "containers": 40_000}[shape]
    while high - low > max(low // 200, 1):
        middle = (low + high) // 2
        answer = create(admin, namespace, shaped(f"probe-{middle}", shape, middle))
        if answer.status_code == 201:
            low = middle
            admin.delete(f"/apis/batch/v1/namespaces/{namespace}/jobs/probe-{middle}")
        elif answer.status_code in (413, 422, 500) or "too large" in answer.text:
            high = middle
        else:
            raise RuntimeError(f"{shape} {middle}: {answer.status_code} {answer.text[:300]}")
    return low


def populate(plane: ControlPlane, jobs: int, ordinary: int) -> dict[str, str]:
    """Namespaces of each shape, filled; what each holds."""
    held: dict[str, str] = {}
    with plane.http(timeout=120) as admin:
        for shape in ("env", "containers"):
            namespace = f"big-{shape}"
            create_namespace(admin, namespace)
            count = largest(admin, namespace, shape) * 98 // 100
            for i in range(jobs):
                answer = create(admin, namespace, shaped(f"{shape}-{i}", shape, count))
                if answer.status_code != 201:
                    raise RuntimeError(f"{shape}-{i}: {answer.status_code} {answer.text[:300]}")
            listed = admin.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/{shape}-0")
            held[namespace] = (
                f"{jobs} Jobs of {count} {shape} entries, {len(listed.content) / 2**20:.2f} MiB"
                " of JSON each"
            )
        create_namespace(admin, "ordinary")
        for i in range(ordinary):
            answer = create(admin, "ordinary", job_manifest(f"ordinary-{i}", suspend=True))
            if answer.status_code != 201:
                raise RuntimeError(f"ordinary-{i}: {answer.status_code} {answer.text[:300]}")
        held["ordinary"] = f"{ordinary} Jobs of one container"
    return held


def audit_rss(tree: Path, kubeconfig: Path, namespace: str) -> tuple[float, int, float, str]:
    """`jobguard audit -n NAMESPACE`: peak RSS (MiB), exit code, seconds, its last line of
    stderr."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [
                *jobguard_command(tree),
                "audit",
                "--kubeconfig",
                str(kubeconfig),
                "--namespace",
                namespace,
                "--output",
                "json",
            ],
            cwd=tree,
            env={**os.environ, "JOBGUARD_CONFIG": ""},
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        lines = err.read().decode(errors="replace").strip().splitlines()
    seconds = time.perf_counter() - started
    return usage.ru_maxrss / 1024, proc.returncode, seconds, (lines or [""])[-1][:160]


def server_rss(tree: Path, kubeconfig: Path) -> str:
    """`jobguard serve --audit-interval 60`: RSS before the first pass ends and peak after."""
    port = free_port()
    command = [*jobguard_command(tree), "serve", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--log-level", "warning", "--shutdown-delay", "0"]
    command += ["--kubeconfig", str(kubeconfig), "--audit-interval", "60"]
    proc = subprocess.Popen(
        command,
        cwd=tree,
        env={**os.environ, "JOBGUARD_CONFIG": ""},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_ready(f"http://127.0.0.1:{port}", proc=proc, seconds=60)
        started = time.perf_counter()
        outcome = ""
        while not outcome and time.perf_counter() - started < 600:
            time.sleep(0.5)
            if proc.poll() is not None:
                return f"exited {proc.returncode}"
            metrics = (
                urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=60)
                .read()
                .decode()
            )
            for line in metrics.splitlines():
                if line.startswith("jobguard_audit_runs_total{") and not line.endswith(" 0.0"):
                    outcome = line
        seconds = time.perf_counter() - started
        return (
            f"peak RSS {rss_mib(proc.pid, 'VmHWM'):.0f} MiB, RSS after the pass"
            f" {rss_mib(proc.pid):.0f} MiB, pass {seconds:.0f} s ({outcome or 'not ended'})"
        )
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=12, help="large Jobs of each shape")
    parser.add_argument("--ordinary", type=int, default=1000, help="ordinary Jobs")
    parser.add_argument("--baseline", metavar="REF")
    args = parser.parse_args()
    trees: list[tuple[str, str | None]] = [("this tree", None)]
    if args.baseline:
        trees.append((f"baseline {args.baseline}", args.baseline))
    with tempfile.TemporaryDirectory() as scratch:
        plane = ControlPlane(Path(scratch) / "plane", build())
        plane.start()
        try:
            started = time.perf_counter()
            held = populate(plane, args.jobs, args.ordinary)
            print(f"stored in {time.perf_counter() - started:.0f} s")
            for name, ref in trees:
                with source_tree(ref) as tree:
                    for namespace, what in held.items():
                        rss, code, seconds, last = audit_rss(tree, plane.kubeconfig, namespace)
                        print(
                            f"  {name}: audit -n {namespace} ({what}): peak RSS {rss:.0f} MiB,"
                            f" exit {code}, {seconds:.1f} s {last}"
                        )
                    print(
                        f"  {name}: serve, background audit of all: "
                        f"{server_rss(tree, plane.kubeconfig)}"
                    )
        finally:
            plane.stop()


if __name__ == "__main__":
    main()
