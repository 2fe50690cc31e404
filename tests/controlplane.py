"""A real Kubernetes control plane on loopback: etcd, kube-apiserver and kube-controller-manager
built from the Go module proxy by `controlplane/build.sh`, and jobguard registered with it.

The real-control-plane suite (tests/realapi) and `make cluster` both use this module:

    python -m tests.controlplane up [--config FILE] [--dir .cluster]   # returns once all is ready
    python -m tests.controlplane down [--dir .cluster]

Identities are bearer tokens (`--token-auth-file`): `admin` (system:masters), `alice` and `bob`
(ordinary users, allowed to edit Jobs, CronJobs and pods everywhere) and `kueue` (the service
account kueue-system:kueue-controller-manager). The controller manager runs the job, cronjob and
garbage-collector controllers, each under its own service account, as in a real cluster.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from jobguard.app import certs
from jobguard.app.config import parse_config
from jobguard.validators.registrations import (
    ClientConfig,
    RegistrationOptions,
    webhook_configurations,
)

REPO = Path(__file__).resolve().parents[1]
BUILD_SCRIPT = REPO / "controlplane" / "build.sh"
KUEUE_SA = "system:serviceaccount:kueue-system:kueue-controller-manager"
CRONJOB_CONTROLLER = "system:serviceaccount:kube-system:cronjob-controller"
START_TIMEOUT = float(os.environ.get("JOBGUARD_CONTROLPLANE_START_TIMEOUT", "120"))
BUILD_TIMEOUT = 3600.0


@dataclass(frozen=True)
class User:
    name: str
    username: str
    groups: tuple[str, ...]

    @property
    def token(self) -> str:
        return f"jobguard-test-token-{self.name}"


USERS: dict[str, User] = {
    "admin": User("admin", "admin", ("system:masters",)),
    "alice": User("alice", "alice", ()),
    "bob": User("bob", "bob", ()),
    "kueue": User(
        "kueue", KUEUE_SA, ("system:serviceaccounts", "system:serviceaccounts:kueue-system")
    ),
}

# What the ordinary users and the queue may do: everything on Jobs, CronJobs and pods.
EDITOR_ROLE = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRole",
    "metadata": {"name": "jobguard-test-editor"},
    "rules": [
        {
            "apiGroups": ["batch"],
            "resources": ["jobs", "jobs/status", "cronjobs", "cronjobs/status"],
            "verbs": ["*"],
        },
        {"apiGroups": [""], "resources": ["pods", "pods/status", "events"], "verbs": ["*"]},
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list"]},
    ],
}


class ControlPlaneError(RuntimeError):
    """The control plane could not be built or started; the message says why in one line."""


def build() -> Path:
    """The directory holding etcd, kube-apiserver and kube-controller-manager (built once, then
    cached outside the repository; JOBGUARD_CONTROLPLANE_BIN names a prebuilt one)."""
    prebuilt = os.environ.get("JOBGUARD_CONTROLPLANE_BIN")
    if prebuilt:
        return Path(prebuilt)
    try:
        done = subprocess.run(
            ["bash", str(BUILD_SCRIPT)],
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ControlPlaneError(f"controlplane/build.sh did not finish: {error}") from error
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise ControlPlaneError(f"controlplane/build.sh failed ({done.returncode}): {last}")
    return Path(done.stdout.strip().splitlines()[-1])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(
    predicate: Callable[[], Any],
    timeout: float = 30.0,
    what: str = "condition",
    interval: float = 0.2,
) -> Any:
    """The predicate's first truthy value, polled; TimeoutError past `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:.0f} s")
        time.sleep(interval)


@dataclass
class Process:
    """A child process whose output goes to a log file; reaped by stop()."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def alive(self) -> bool:
        return self.popen.poll() is None

    def tail(self, lines: int = 5) -> str:
        try:
            text = self.log.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return " | ".join(text[-lines:])

    def stop(self, grace: float = 10.0) -> None:
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(grace)


OUTLIVE_CALLER = False
"""Whether spawned processes outlive the process that spawned them: only `make cluster`'s (its
command returns, the cluster stays up). Otherwise each dies with its spawner (setpriv's
--pdeathsig), so a test run killed outright (a timeout's SIGKILL, which runs no fixture's
teardown) leaves no control plane or jobguard behind."""


def spawn(name: str, argv: list[str], logs: Path, env: dict[str, str] | None = None) -> Process:
    log = logs / f"{name}.log"
    setpriv = shutil.which("setpriv")  # util-linux, on every Debian
    if not OUTLIVE_CALLER and setpriv is not None:
        # The signal comes when the spawning thread ends: spawn from the main thread only.
        argv = [setpriv, "--pdeathsig", "KILL", *argv]
    with log.open("ab") as out:
        popen = subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: stop() reaps its children too
            env={**os.environ, **(env or {})},
        )
    return Process(name, popen, log)


def write_kubeconfig(path: Path, server: str, ca: Path, current: str = "admin") -> None:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "jobguard-dev",
                "cluster": {"server": server, "certificate-authority": str(ca)},
            }
        ],
        "users": [{"name": user.name, "user": {"token": user.token}} for user in USERS.values()],
        "contexts": [
            {"name": user.name, "context": {"cluster": "jobguard-dev", "user": user.name}}
            for user in USERS.values()
        ],
        "current-context": current,
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))


class _RetryStale(httpx.HTTPTransport):
    """Sends a read or a dry run again, once, when the API server had closed the kept-alive
    connection it went out on (it answers nothing: "Server disconnected without sending a
    response", seen once in a differential run). Writes that take effect are not resent: they
    may have been applied."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return super().handle_request(request)
        except httpx.RemoteProtocolError:
            if request.method not in ("GET", "HEAD") and b"dryRun" not in request.url.query:
                raise
            return super().handle_request(request)


@dataclass
class ControlPlane:
    """etcd, kube-apiserver and kube-controller-manager under `state` (certificates, data, logs)."""

    state: Path
    bin_dir: Path
    processes: list[Process] = field(default_factory=list)
    port: int = 0
    version: str = ""

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def ca(self) -> Path:
        return self.state / "pki" / "ca.crt"

    @property
    def kubeconfig(self) -> Path:
        return self.state / "kubeconfig"

    @property
    def logs(self) -> Path:
        return self.state / "logs"

    def http(
        self, user: str = "admin", timeout: float = 30.0, headers: tuple[tuple[str, str], ...] = ()
    ) -> httpx.Client:
        """A client authenticated as one of USERS, as kubectl would be."""
        context = ssl.create_default_context(cafile=str(self.ca))
        return httpx.Client(
            base_url=self.url,
            transport=_RetryStale(verify=context),
            headers=[("Authorization", f"Bearer {USERS[user].token}"), *headers],
            timeout=timeout,
        )

    def release(self) -> str:
        """The release jobguard judges this API server by: what `kubernetesVersion: auto` reads."""
        from jobguard.app.cluster.client import connect, detect_version

        cluster = connect(str(self.kubeconfig))
        try:
            return detect_version(cluster)
        finally:
            cluster.close()

    def _pki(self) -> None:
        pki = self.state / "pki"
        pki.mkdir(parents=True, exist_ok=True)
        ca_cert, ca_key = certs.make_ca("jobguard-dev-cluster-ca", 30)
        cert, key = certs.issue_serving(
            ca_cert, ca_key, ["localhost", "kubernetes.default.svc"], ["127.0.0.1"], 30
        )
        self.ca.write_bytes(ca_cert.public_bytes(Encoding.PEM))
        (pki / "apiserver.crt").write_bytes(cert.public_bytes(Encoding.PEM))
        certs.write_private(pki / "apiserver.key", certs.key_pem(key))
        # Service-account tokens are signed with an EC key in SEC1 form ("EC PRIVATE KEY"), which
        # the API server reads as both the signing key and the public key that verifies them.
        _, sa_key = certs.make_ca("service-accounts", 30)
        sec1 = sa_key.private_bytes(Encoding.PEM, PrivateFormat.TraditionalOpenSSL, NoEncryption())
        certs.write_private(pki / "sa.key", sec1)
        rows = [
            f'{u.token},{u.username},{u.username},"{",".join(u.groups)}"' for u in USERS.values()
        ]
        (pki / "tokens.csv").write_text("\n".join(rows) + "\n")

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Start all three and return once the API server is ready, RBAC for the test users is
        in place and the controllers run; raise ControlPlaneError (logs kept) otherwise. A port
        taken between choosing it and binding it costs one more try on fresh ports."""
        try:
            self._start(timeout)
        except ControlPlaneError as error:
            if "address already in use" not in str(error):
                raise
            shutil.rmtree(self.state / "etcd", ignore_errors=True)
            self._start(timeout)

    def _start(self, timeout: float) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        self._pki()
        try:
            self._start_etcd(timeout)
            self._start_apiserver(timeout)
            self._prepare()
            self._start_controllers(timeout)
        except (TimeoutError, OSError, httpx.HTTPError) as error:
            tails = "; ".join(f"{p.name}: {p.tail(3)}" for p in self.processes if not p.alive())
            self.stop()
            raise ControlPlaneError(
                f"control plane did not start: {error}"
                + (f" ({tails})" if tails else "")
                + f"; logs in {self.logs}"
            ) from error

    def _start_etcd(self, timeout: float) -> None:
        client, peer = free_port(), free_port()
        self.etcd_url = f"http://127.0.0.1:{client}"
        peer_url = f"http://127.0.0.1:{peer}"
        etcd = spawn(
            "etcd",
            [
                str(self.bin_dir / "etcd"),
                "--name=default",
                f"--data-dir={self.state / 'etcd'}",
                f"--listen-client-urls={self.etcd_url}",
                f"--advertise-client-urls={self.etcd_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=default={peer_url}",
                "--unsafe-no-fsync",
                "--log-level=warn",
            ],
            self.logs,
        )
        self.processes.append(etcd)

        def healthy() -> bool:
            if not etcd.alive():
                raise TimeoutError("etcd exited")
            with contextlib.suppress(httpx.HTTPError):
                return httpx.get(f"{self.etcd_url}/health", timeout=2).status_code == 200
            return False

        wait_until(healthy, timeout, "etcd /health")

    def _start_apiserver(self, timeout: float) -> None:
        pki = self.state / "pki"
        self.port = free_port()
        apiserver = spawn(
            "kube-apiserver",
            [
                str(self.bin_dir / "kube-apiserver"),
                f"--etcd-servers={self.etcd_url}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={self.port}",
                f"--tls-cert-file={pki / 'apiserver.crt'}",
                f"--tls-private-key-file={pki / 'apiserver.key'}",
                f"--token-auth-file={pki / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                "--endpoint-reconciler-type=none",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--service-account-key-file={pki / 'sa.key'}",
                f"--service-account-signing-key-file={pki / 'sa.key'}",
                # No serviceaccount controller runs, so pods name no default service account.
                "--disable-admission-plugins=ServiceAccount",
                "--allow-privileged=true",
                "--profiling=false",
            ],
            self.logs,
        )
        self.processes.append(apiserver)
        with self.http() as api:

            def ready() -> bool:
                if not apiserver.alive():
                    raise TimeoutError("kube-apiserver exited")
                with contextlib.suppress(httpx.HTTPError):
                    return api.get("/readyz").status_code == 200
                return False

            wait_until(ready, timeout, "kube-apiserver /readyz", interval=0.5)
            self.version = api.get("/version").json()["gitVersion"]

    def _prepare(self) -> None:
        write_kubeconfig(self.kubeconfig, self.url, self.ca)
        with self.http() as api:
            apply(api, EDITOR_ROLE)
            apply(
                api,
                {
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "ClusterRoleBinding",
                    "metadata": {"name": "jobguard-test-editor"},
                    "roleRef": {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "ClusterRole",
                        "name": "jobguard-test-editor",
                    },
                    # The cronjob-controller too, so that requests made in its name reach
                    # admission on every Job write (its own role creates Jobs only).
                    "subjects": [
                        {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}
                        for name in ("alice", "bob", KUEUE_SA, CRONJOB_CONTROLLER)
                    ],
                },
            )
            for namespace in ("kueue-system",):
                create_namespace(api, namespace)

    def _start_controllers(self, timeout: float) -> None:
        manager = spawn(
            "kube-controller-manager",
            [
                str(self.bin_dir / "kube-controller-manager"),
                f"--kubeconfig={self.kubeconfig}",
                "--leader-elect=false",
                "--secure-port=0",
                "--controllers=job,cronjob,garbagecollector",
                "--use-service-account-credentials=true",
                "--concurrent-cron-job-syncs=5",
            ],
            self.logs,
            # Failed pods are retried after 1 s instead of 10 s (upstream's job tests do this).
            env={"JOBGUARD_JOB_POD_FAILURE_BACKOFF": "1s"},
        )
        self.processes.append(manager)
        with self.http() as api:

            def running() -> bool:
                if not manager.alive():
                    raise TimeoutError("kube-controller-manager exited")
                # Each controller gets its service account when it starts.
                return all(
                    api.get(f"/api/v1/namespaces/kube-system/serviceaccounts/{name}").status_code
                    == 200
                    for name in ("job-controller", "cronjob-controller")
                )

            wait_until(running, timeout, "job and cronjob controllers", interval=0.5)

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.stop()
        self.processes.clear()


def apply(api: httpx.Client, obj: dict[str, Any]) -> dict[str, Any]:
    """Create obj, replacing an existing one of the same name (cluster-scoped kinds used here)."""
    path = collection_path(obj)
    name = obj["metadata"]["name"]
    api.delete(f"{path}/{name}")
    response = api.post(path, json=obj)
    if response.status_code != 201:
        raise httpx.HTTPStatusError(
            f"creating {obj['kind']} {name}: {response.status_code} {response.text[:300]}",
            request=response.request,
            response=response,
        )
    result: dict[str, Any] = response.json()
    return result


_PLURALS = {
    "ClusterRole": "clusterroles",
    "ClusterRoleBinding": "clusterrolebindings",
    "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
    "MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
    "ValidatingAdmissionPolicy": "validatingadmissionpolicies",
    "ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings",
    "CustomResourceDefinition": "customresourcedefinitions",
    "Namespace": "namespaces",
}


def collection_path(obj: dict[str, Any]) -> str:
    group_version = obj["apiVersion"]
    prefix = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    plural = _PLURALS[obj["kind"]]
    namespace = obj["metadata"].get("namespace")
    return f"{prefix}/namespaces/{namespace}/{plural}" if namespace else f"{prefix}/{plural}"


def create_namespace(api: httpx.Client, name: str, labels: dict[str, str] | None = None) -> None:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    if labels:
        body["metadata"] = {"name": name, "labels": labels}
    response = api.post("/api/v1/namespaces", json=body)
    if response.status_code not in (201, 409):
        raise httpx.HTTPStatusError(
            f"creating namespace {name}: {response.status_code} {response.text[:300]}",
            request=response.request,
            response=response,
        )


# --- jobguard served over TLS and registered with the control plane --------------------------


@dataclass
class Jobguard:
    """`jobguard serve` on 127.0.0.1 with its own dev certificates and a configuration file."""

    directory: Path
    process: Process | None = None
    port: int = 0
    kubeconfig: Path | None = None
    """The cluster jobguard reads (kubernetesVersion: auto, the background audit)."""
    env: dict[str, str] = field(default_factory=dict)

    @property
    def ca(self) -> Path:
        return self.directory / "certs" / "ca.crt"

    @property
    def config(self) -> Path:
        return self.directory / "config.yaml"

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def start(self, config: dict[str, Any], extra_args: tuple[str, ...] = ()) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        if not self.ca.exists():
            certs.generate("jobguard", "jobguard", self.directory / "certs", days=30, dev=True)
        self.config.write_text(yaml.safe_dump(config, sort_keys=False))
        self.port = self.port or free_port()
        self.process = spawn(
            f"jobguard-{self.port}",
            [
                sys.executable,
                "-m",
                "jobguard",
                "serve",
                "--host=127.0.0.1",
                f"--port={self.port}",
                f"--tls-cert-file={self.directory / 'certs' / 'tls.crt'}",
                f"--tls-private-key-file={self.directory / 'certs' / 'tls.key'}",
                f"--config={self.config}",
                *extra_args,
            ],
            self.directory,
            env={**({"KUBECONFIG": str(self.kubeconfig)} if self.kubeconfig else {}), **self.env},
        )
        process = self.process

        def ready() -> bool:
            if not process.alive():
                raise TimeoutError(f"jobguard exited: {process.tail(3)}")
            with contextlib.suppress(httpx.HTTPError):
                context = ssl.create_default_context(cafile=str(self.ca))
                return httpx.get(f"{self.url}/readyz", verify=context, timeout=2).is_success
            return False

        wait_until(ready, 60, "jobguard /readyz")

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None


def registrations(
    config: dict[str, Any],
    url: str,
    ca_bundle: bytes,
    options: RegistrationOptions | None = None,
    release: str | None = None,
) -> list[dict[str, Any]]:
    """The webhook configurations jobguard registers for `config` (what `jobguard registrations
    --url` prints and the leader of `serve --register-webhooks` writes), reaching jobguard at
    `url`; `release` is the cluster's, for `kubernetesVersion: auto`."""
    settings = parse_config(yaml.safe_dump(config)).to_settings(release)
    return webhook_configurations(settings, ClientConfig(url=url), ca_bundle, options)


def register(api: httpx.Client, objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        apply(api, obj)


def unregister(api: httpx.Client, objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        api.delete(f"{collection_path(obj)}/{obj['metadata']['name']}")


# --- make cluster / make cluster-down ---------------------------------------------------------


def _up(directory: Path, config_file: Path) -> int:
    global OUTLIVE_CALLER
    OUTLIVE_CALLER = True  # the cluster stays up after this command returns
    state_file = directory / "state.json"
    if state_file.exists():
        print(f"a cluster is already up in {directory} (make cluster-down first)", file=sys.stderr)
        return 1
    config = yaml.safe_load(config_file.read_text())
    try:
        bin_dir = build()
    except ControlPlaneError as error:
        print(error, file=sys.stderr)
        return 1
    directory.mkdir(parents=True, exist_ok=True)
    plane = ControlPlane(directory / "controlplane", bin_dir)
    try:
        plane.start()
    except ControlPlaneError as error:
        print(error, file=sys.stderr)
        return 1
    guard = Jobguard(directory / "jobguard", kubeconfig=plane.kubeconfig)
    guard.port = free_port()
    try:
        with plane.http() as api:
            create_namespace(api, "jobguard-system")
            for namespace in _example_namespaces(config):
                create_namespace(api, namespace)
            # jobguard keeps its own registrations, as in a cluster install (the leader of
            # `serve --register-webhooks`), reaching itself by URL instead of a Service.
            guard.start(
                config,
                (
                    "--register-webhooks=jobguard-system/jobguard",
                    f"--webhook-url={guard.url}",
                ),
            )
            registered = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
            wait_until(
                lambda: api.get(f"{registered}/jobguard").is_success, 60, "jobguard's registrations"
            )
            # The API server loads new registrations asynchronously: a moment to take effect.
            for namespace in _example_namespaces(config)[:1]:
                wait_until(_judged(api, namespace), 30, "the registrations in effect")
    except (TimeoutError, OSError, httpx.HTTPError) as error:
        guard.stop()
        plane.stop()
        print(f"jobguard did not start: {error}; logs in {directory}", file=sys.stderr)
        return 1
    pids = [p.popen.pid for p in plane.processes]
    if guard.process is not None:
        pids.append(guard.process.popen.pid)
    state_file.write_text(json.dumps({"pids": pids, "url": plane.url}))
    shutil.copy(plane.kubeconfig, directory / "kubeconfig")
    (directory / "bin").symlink_to(bin_dir, target_is_directory=True)
    print(f"Kubernetes {plane.version} at {plane.url}; jobguard at {guard.url}")
    print(f"kubeconfig: {directory / 'kubeconfig'} (contexts: {', '.join(USERS)})")
    print(f"kubectl: {directory / 'bin' / 'kubectl'}")
    print(f"logs: {plane.logs} and {guard.directory}; stop it with `make cluster-down`")
    return 0


def _judged(api: httpx.Client, namespace: str) -> Callable[[], bool]:
    """Whether a dry-run create of a queued, unsuspended Job in `namespace` by a user (the
    administrator impersonating alice) is held or refused: the registrations are in effect."""
    body = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "canary", "labels": {"kueue.x-k8s.io/queue-name": "q"}},
        "spec": {
            "suspend": False,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox:1.36"}],
                }
            },
        },
    }

    def judged() -> bool:
        response = api.post(
            f"/apis/batch/v1/namespaces/{namespace}/jobs",
            params={"dryRun": "All"},
            json=body,
            headers={"Impersonate-User": "alice"},
        )
        if response.status_code == 201:
            return bool(response.json()["spec"].get("suspend"))
        return response.status_code == 403

    return judged


def _example_namespaces(config: dict[str, Any]) -> list[str]:
    """A namespace for each exact name and `prefix-*` glob the policies match (team-* gives
    team-a), so the README's commands have somewhere to go."""
    names: list[str] = []
    for policy in config.get("suspendPolicies") or []:
        for pattern in (policy.get("match") or {}).get("namespaces") or []:
            if pattern.endswith("*") and not any(c in pattern[:-1] for c in "*?["):
                names.append(pattern[:-1].rstrip("-") + "-a")
            elif not any(c in pattern for c in "*?["):
                names.append(pattern)
    return names


def _down(directory: Path) -> int:
    state_file = directory / "state.json"
    if not state_file.exists():
        print(f"no cluster is up in {directory}")
        return 0
    for pid in json.loads(state_file.read_text())["pids"]:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
    for pid in json.loads(state_file.read_text())["pids"]:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.killpg(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
    shutil.rmtree(directory)
    print(f"stopped; removed {directory}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.controlplane", description=__doc__)
    parser.add_argument("command", choices=["up", "down"])
    parser.add_argument("--dir", type=Path, default=REPO / ".cluster")
    parser.add_argument("--config", type=Path, default=REPO / "examples" / "config" / "kueue.yaml")
    args = parser.parse_args(argv)
    if args.command == "up":
        return _up(args.dir.resolve(), args.config)
    return _down(args.dir.resolve())


if __name__ == "__main__":
    sys.exit(main())
