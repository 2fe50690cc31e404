"""A stand-in Kubernetes API server for the real `kubernetes` client: real HTTPS on 127.0.0.1
(pytest-httpserver, with a throwaway CA and serving certificate from `jobguard.app.certs`) and
the API server's list semantics for what jobguard asks:

- `GET /version`;
- `GET /apis/batch/v1/{jobs,cronjobs}` and `.../namespaces/NS/{jobs,cronjobs}`: `limit` and
  `continue` pages (a token names the list's snapshot and the next offset), items without
  apiVersion and kind, a `410 Gone` Status (reason Expired) for a token that has expired;
- discovery of `wgpolicyk8s.io/v1alpha2` and `openreports.io/v1alpha1` (404 unless the
  PolicyReport or Report CRD is "installed"), POST (409 when it exists) / merge PATCH / DELETE
  (404 when absent) of PolicyReports and Reports, and their lists (in a namespace or in all,
  with a `labelSelector` of `key=value` terms);
- Leases, webhook configurations, ClusterRoles and Secrets read and written whole (`stored`:
  GET, POST, PUT with resourceVersion conflicts, DELETE);
- bearer tokens: an unknown one gets `401`; `forbid` makes a (verb, resource) `403` with the
  API server's message.

Every request is recorded (`requests`) so tests can assert what the client sent.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import re
import ssl
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from jobguard.app.certs import generate

TOKEN = "jobguard-test-token"
KINDS = {"jobs": "Job", "cronjobs": "CronJob"}
REPORT_APIS = {
    # path prefix: (group, version, plural, kind)
    "/apis/wgpolicyk8s.io/v1alpha2": (
        "wgpolicyk8s.io",
        "v1alpha2",
        "policyreports",
        "PolicyReport",
    ),
    "/apis/openreports.io/v1alpha1": ("openreports.io", "v1alpha1", "reports", "Report"),
}


STORED_APIS = (
    "/apis/coordination.k8s.io/v1",
    "/apis/admissionregistration.k8s.io/v1",
    "/apis/rbac.authorization.k8s.io/v1",
    "/api/v1",
)


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    body: Any = None
    content_type: str = ""


@dataclass
class FakeCluster:
    """The state behind the stand-in: stored objects and what the server does with requests."""

    objects: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {"jobs": [], "cronjobs": []}
    )
    version: dict[str, str] = field(
        default_factory=lambda: {"major": "1", "minor": "35", "gitVersion": "v1.35.1"}
    )
    tokens: set[str] = field(default_factory=lambda: {TOKEN})
    forbid: set[tuple[str, str]] = field(default_factory=set)
    """(verb, resource) pairs answered 403."""
    expire_tokens: int = 0
    """How many continue tokens expire (410) before tokens work again."""
    forbidden_padding: int = 0
    """Characters added to the message of a 403 (a proxy's or a broken server's page)."""
    reports_installed: bool = False
    reports: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    """PolicyReports by (namespace, name)."""
    openreports_installed: bool = False
    openreports: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    """OpenReports Reports by (namespace, name)."""
    requests: list[Recorded] = field(default_factory=list)
    snapshot: int = 1
    stored: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    """Objects read and written whole by (resource, namespace or "", name): leases, webhook
    configurations, cluster roles; GET, POST (409 when it exists), PUT (409 on a stale
    resourceVersion) and DELETE, as the API server does them."""
    resource_version: int = 1

    def reset(self) -> None:
        """Back to a new, empty cluster (the server is shared by a module's tests)."""
        fresh = FakeCluster()
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(fresh, name))

    def add(self, resource: str, *objects: dict[str, Any]) -> None:
        self.objects[resource].extend(copy.deepcopy(o) for o in objects)

    def delete(self, resource: str, namespace: str, name: str) -> None:
        """The object is gone (as ttlSecondsAfterFinished removes a finished Job)."""
        self.objects[resource] = [
            o
            for o in self.objects[resource]
            if (o["metadata"]["namespace"], o["metadata"]["name"]) != (namespace, name)
        ]

    def lists(self, resource: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == "GET" and r.path.endswith(f"/{resource}")]

    # --- handling ------------------------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        parsed = urlparse(request.url)
        query = {k: v[0] for k, v in parse_qs(parsed.query).items()}
        body = None
        if request.data:
            body = json.loads(request.data)
        self.requests.append(
            Recorded(
                request.method, parsed.path, query, body, request.headers.get("Content-Type", "")
            )
        )
        # The scheme is case-insensitive (the in-cluster loader sends "bearer").
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or token not in self.tokens:
            return _status(401, "Unauthorized", "Unauthorized")
        path = parsed.path.rstrip("/")
        if path == "/version":
            return _json(200, self.version)
        parts = path.strip("/").split("/")
        if parts[:3] == ["apis", "batch", "v1"]:
            return self._list(request.method, parts[3:], query)
        for prefix, api in REPORT_APIS.items():
            if path == prefix or path.startswith(prefix + "/"):
                return self._reports(api, request.method, parts[3:], body, query)
        for prefix in STORED_APIS:
            if path.startswith(prefix + "/"):
                return self._stored(request.method, path[len(prefix) + 1 :].split("/"), body)
        return _status(
            404, "NotFound", f"the server could not find the requested resource ({path})"
        )

    def _forbidden(self, verb: str, resource: str, group: str, namespace: str | None) -> Response:
        where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
        return _status(
            403,
            "Forbidden",
            f'{resource}.{group} is forbidden: User "system:serviceaccount:jobguard:jobguard" '
            f'cannot {verb} resource "{resource}" in API group "{group}" {where}'
            + "x"
            * self.forbidden_padding,
        )

    def _list(self, method: str, rest: list[str], query: dict[str, str]) -> Response:
        namespace = None
        if len(rest) == 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        if method != "GET" or len(rest) != 1 or rest[0] not in KINDS:
            return _status(405, "MethodNotAllowed", "not supported by the stand-in")
        resource = rest[0]
        if ("list", resource) in self.forbid:
            return self._forbidden("list", resource, "batch", namespace)
        items = sorted(
            (
                o
                for o in self.objects[resource]
                if namespace is None or o["metadata"]["namespace"] == namespace
            ),
            key=lambda o: (o["metadata"]["namespace"], o["metadata"]["name"]),
        )
        offset = 0
        token = query.get("continue")
        if token:
            if self.expire_tokens > 0:
                self.expire_tokens -= 1
                self.snapshot += 1
                return _status(
                    410,
                    "Expired",
                    "The provided continue parameter is too old to display a consistent list "
                    "result. You can start a new list without the continue parameter.",
                )
            _snapshot, offset = (int(x) for x in base64.b64decode(token).decode().split(":"))
        limit = int(query.get("limit", "0")) or len(items) or 1
        page = items[offset : offset + limit]
        metadata: dict[str, Any] = {"resourceVersion": str(1000 + self.snapshot)}
        if offset + limit < len(items):
            metadata["continue"] = base64.b64encode(
                f"{self.snapshot}:{offset + limit}".encode()
            ).decode()
        # Items of a list carry neither apiVersion nor kind.
        listed = [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")} for o in page]
        return _json(
            200,
            {
                "kind": f"{KINDS[resource]}List",
                "apiVersion": "batch/v1",
                "metadata": metadata,
                "items": listed,
            },
        )

    def _stored(self, method: str, rest: list[str], body: Any) -> Response:
        namespace = ""
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        resource, name = rest[0], (rest[1] if len(rest) > 1 else "")
        verb = {"GET": "get", "POST": "create", "PUT": "update", "DELETE": "delete"}[method]
        if (verb, resource) in self.forbid:
            return self._forbidden(verb, resource, "", namespace or None)
        if method == "POST":
            name = body["metadata"]["name"]
        key = (resource, namespace, name)
        found = self.stored.get(key)
        if method != "POST" and found is None:
            return _status(404, "NotFound", f'{resource} "{name}" not found')
        if method == "GET":
            return _json(200, found)
        if method == "DELETE":
            del self.stored[key]
            return _json(200, {"kind": "Status", "apiVersion": "v1", "status": "Success"})
        if method == "POST" and found is not None:
            return _status(409, "AlreadyExists", f'{resource} "{name}" already exists')
        if method == "PUT":
            assert found is not None
            sent = body["metadata"].get("resourceVersion")
            if sent != found["metadata"]["resourceVersion"]:
                return _status(
                    409,
                    "Conflict",
                    f'Operation cannot be fulfilled on {resource} "{name}": the object has been '
                    "modified; please apply your changes to the latest version and try again",
                )
        self.resource_version += 1
        stored = copy.deepcopy(body)
        stored["metadata"]["resourceVersion"] = str(self.resource_version)
        stored["metadata"].setdefault("uid", f"uid-{resource}-{name}")
        if namespace:
            stored["metadata"]["namespace"] = namespace
        self.stored[key] = stored
        return _json(201 if method == "POST" else 200, stored)

    def _reports(
        self,
        api: tuple[str, str, str, str],
        method: str,
        rest: list[str],
        body: Any,
        query: dict[str, str],
    ) -> Response:
        group, version, plural, kind = api
        installed, store = (
            (self.reports_installed, self.reports)
            if plural == "policyreports"
            else (self.openreports_installed, self.openreports)
        )
        if not installed:
            return _status(404, "NotFound", "the server could not find the requested resource")
        if not rest and method == "GET":
            return _json(
                200,
                {
                    "kind": "APIResourceList",
                    "apiVersion": "v1",
                    "groupVersion": f"{group}/{version}",
                    "resources": [
                        {
                            "name": plural,
                            "namespaced": True,
                            "kind": kind,
                            "singularName": kind.lower(),
                            "verbs": ["create", "delete", "get", "list", "patch", "update"],
                        },
                    ],
                },
            )
        namespace = None
        if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] == plural:
            namespace, rest = rest[1], rest[2:]
        if not rest or rest[0] != plural:
            return _status(405, "MethodNotAllowed", "not supported by the stand-in")
        verb = {"POST": "create", "PATCH": "patch", "DELETE": "delete"}.get(method, "")
        if method == "GET" and len(rest) == 1:
            verb = "list"
        if (verb, plural) in self.forbid:
            return self._forbidden(verb, plural, group, namespace)
        if verb == "list":
            wanted = dict(
                term.split("=", 1) for term in query.get("labelSelector", "").split(",") if term
            )
            items = [
                report
                for (ns, _), report in sorted(store.items())
                if (namespace is None or ns == namespace)
                and all(report["metadata"].get("labels", {}).get(k) == v for k, v in wanted.items())
            ]
            return _json(
                200,
                {
                    "kind": f"{kind}List",
                    "apiVersion": f"{group}/{version}",
                    "metadata": {"resourceVersion": "1"},
                    "items": items,
                },
            )
        if namespace is None:
            return _status(405, "MethodNotAllowed", "not supported by the stand-in")
        if verb == "create" and len(rest) == 1:
            key = (namespace, body["metadata"]["name"])
            if key in store:
                return _status(409, "AlreadyExists", f'{plural}.{group} "{key[1]}" already exists')
            store[key] = body
            return _json(201, body)
        if verb in ("patch", "delete") and len(rest) == 2:
            key = (namespace, rest[1])
            if key not in store:
                return _status(404, "NotFound", f'{plural}.{group} "{key[1]}" not found')
            if verb == "delete":
                del store[key]
                return _json(200, {"kind": "Status", "apiVersion": "v1", "status": "Success"})
            # A JSON merge patch (RFC 7386) of the top level and of metadata.
            merged = {**store[key], **body}
            if "metadata" in body:
                merged["metadata"] = {**store[key]["metadata"], **body["metadata"]}
            store[key] = merged
            return _json(200, merged)
        return _status(405, "MethodNotAllowed", "not supported by the stand-in")


def _json(code: int, body: Any) -> Response:
    return Response(json.dumps(body), status=code, content_type="application/json")


def _status(code: int, reason: str, message: str) -> Response:
    return _json(
        code,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code,
        },
    )


@dataclass(frozen=True)
class StandIn:
    cluster: FakeCluster
    url: str
    ca_file: Path
    port: int

    def kubeconfig(self, path: Path, token: str = TOKEN, context: str = "stand-in") -> Path:
        """A kubeconfig with one context, `context`, for this server (and an unusable other)."""
        ca = base64.b64encode(self.ca_file.read_bytes()).decode()
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "stand-in",
                    "cluster": {"server": self.url, "certificate-authority-data": ca},
                },
                {
                    "name": "nowhere",
                    "cluster": {"server": "https://127.0.0.1:9", "certificate-authority-data": ca},
                },
            ],
            "users": [{"name": "jobguard", "user": {"token": token}}],
            "contexts": [
                {"name": context, "context": {"cluster": "stand-in", "user": "jobguard"}},
                {"name": "nowhere", "context": {"cluster": "nowhere", "user": "jobguard"}},
            ],
            "current-context": context,
        }
        path.write_text(json.dumps(config))
        return path


@contextlib.contextmanager
def serving(directory: Path) -> Iterator[StandIn]:
    """A stand-in API server on 127.0.0.1 over HTTPS, its CA under `directory`."""
    certs = generate("kubernetes", "default", directory / "tls", days=1, dev=True)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certs.tls_crt, certs.tls_key)
    server = HTTPServer(host="127.0.0.1", port=0, ssl_context=context, threaded=True)
    cluster = FakeCluster()
    server.expect_request(re.compile(".*"), method="__ALL").respond_with_handler(cluster.handle)
    server.start()
    try:
        yield StandIn(cluster, f"https://127.0.0.1:{server.port}", certs.ca_crt, server.port)
    finally:
        server.clear()
        if server.is_running():
            server.stop()


@contextlib.contextmanager
def connected(server: StandIn, directory: Path) -> Iterator[Any]:
    """The shared stand-in, reset, and a `jobguard.app.cluster.client.Cluster` connected to it."""
    from jobguard.app.cluster.client import connect

    server.cluster.reset()
    connection = connect(str(server.kubeconfig(directory / "kubeconfig")))
    try:
        yield connection
    finally:
        connection.close()
