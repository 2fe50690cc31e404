"""The cluster, through the official `kubernetes` client: connecting (kubeconfig and context, or
the in-cluster service account), the server's version, paged lists of Jobs and CronJobs as the
API server returns them (raw JSON, so the rules judge exactly what is stored), and PolicyReports.

Failures become `ClusterError`s with one line that says what could not be done; a 403 names the
verb and resource the credentials lack (`AccessDenied`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import orjson
import urllib3
import yaml
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException
from kubernetes.config.incluster_config import (
    SERVICE_CERT_FILENAME,
    SERVICE_HOST_ENV_NAME,
    SERVICE_TOKEN_FILENAME,
    InClusterConfigLoader,
)

from jobguard.app.cluster.paging import DEFAULT_PAGE_SIZE, PAGE_BYTES

log = logging.getLogger("jobguard.cluster")


class _NoRetryNoise(logging.Filter):
    """Drops urllib3's "Retrying (Retry(...)) after connection broken by ..." warnings: a failure
    that outlives the retry is reported once, as a ClusterError naming the server."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Retrying (")


logging.getLogger("urllib3.connectionpool").addFilter(_NoRetryNoise())

MAX_LIST_RESTARTS = 3
"""How often a list restarts after its continue token expired (410 Gone) before giving up."""
REQUEST_TIMEOUT = 30.0
REQUEST_DEADLINE = 120.0
"""Seconds a whole answer may take to arrive: REQUEST_TIMEOUT bounds each wait for bytes, so an
answer drip-fed a byte at a time would never end without it."""
MAX_ANSWER_BYTES = 16 * 1024 * 1024
"""The largest answer read at all, a list page of one object included: a Job near etcd's
1.5 MiB object limit lists as 2-3 MiB of JSON (its managedFields and defaults), more when its
strings are escaped."""
MAX_LIST_PAGES = 20_000
"""A list ends with an error after this many pages (2 million objects at the default 100 a page): a server
that hands out continue tokens forever must not keep an audit pass running forever."""
MERGE_PATCH = "application/merge-patch+json"


@dataclass(frozen=True, slots=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """ "jobs.batch", as RBAC and kubectl name it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


JOBS = Resource("batch", "v1", "jobs", "Job")
CRONJOBS = Resource("batch", "v1", "cronjobs", "CronJob")
POLICY_REPORTS = Resource("wgpolicyk8s.io", "v1alpha2", "policyreports", "PolicyReport")
OPEN_REPORTS = Resource("openreports.io", "v1alpha1", "reports", "Report")
REPORT_APIS = {"wgpolicyk8s": POLICY_REPORTS, "openreports": OPEN_REPORTS}
"""The report APIs jobguard writes: the PolicyReport API and its successor, OpenReports (the
same shape in group openreports.io, kind Report)."""


class ClusterError(Exception):
    """The cluster could not be asked (unreachable, unauthorized, forbidden, failed)."""


class AccessDenied(ClusterError):
    """403: the credentials lack a permission; the message names the verb and resource."""

    def __init__(self, verb: str, resource: Resource, namespace: str | None, detail: str) -> None:
        self.verb = verb
        self.resource = resource
        self.namespace = namespace
        where = f"in namespace {namespace!r}" if namespace else "in all namespaces"
        super().__init__(
            f"forbidden: the credentials may not {verb} {resource.qualified} {where} "
            f"(RBAC needs verb {verb!r} on resource {resource.plural!r} in API group "
            f"{resource.group!r}{'' if namespace else ', cluster-wide'}): {detail}"
        )


MAX_MESSAGE_CHARS = 1000
"""The most of a message from the cluster that an error repeats (a proxy or a broken API server
can send megabytes; the API server's own messages are a line)."""


def cut(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """`message`, or its first `limit` characters and how many more there were."""
    if len(message) <= limit:
        return message
    return f"{message[:limit]}... ({len(message) - limit} more characters)"


def _status_message(exc: ApiException) -> str:
    """The `message` of the Status the API server sent (cut), else the HTTP reason."""
    try:
        body = orjson.loads(exc.body or b"")
    except orjson.JSONDecodeError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return cut(str(body["message"]))
    return cut(f"HTTP {exc.status} {exc.reason or ''}".strip())


class _PageTooLarge(ClusterError):
    """An answer over the bytes its reader allows (a list asks again with a smaller page)."""


def _read(response: Any, what: str, limit: int = MAX_ANSWER_BYTES) -> bytearray:
    """An answer's body, at most `limit` bytes of it, within REQUEST_DEADLINE seconds (read into
    one buffer: no second copy to join chunks)."""
    deadline = time.monotonic() + REQUEST_DEADLINE
    data = bytearray()
    try:
        for chunk in response.stream(64 * 1024):
            if len(data) + len(chunk) > limit:
                raise _PageTooLarge(f"{what}: the answer is over {limit} bytes")
            if time.monotonic() > deadline:
                raise ClusterError(f"{what}: the answer took over {REQUEST_DEADLINE:g} s")
            data += chunk
    finally:
        response.release_conn()
    return data


def _unreachable(exc: urllib3.exceptions.HTTPError) -> str:
    """Why a request got no answer, in a few words (urllib3 wraps the reason in MaxRetryError
    and names the connection object)."""
    reason: BaseException = exc
    if isinstance(exc, urllib3.exceptions.MaxRetryError) and exc.reason is not None:
        reason = exc.reason
    text = " ".join(str(reason).split())
    # NewConnectionError (refused, no route, DNS) derives from ConnectTimeoutError: first.
    if isinstance(reason, urllib3.exceptions.TimeoutError) and not isinstance(
        reason, urllib3.exceptions.NewConnectionError
    ):
        return f"timed out after {REQUEST_TIMEOUT:g} s"
    marker = "Failed to establish a new connection: "
    if marker in text:
        return cut(text[text.index(marker) + len(marker) :].rstrip("'\")"))
    return cut(text) or type(reason).__name__


@dataclass(frozen=True, slots=True)
class ServerVersion:
    major: str
    minor: str
    git_version: str


class PageMemory(Protocol):
    """Memory a list page's decoding draws on: in the server, its request bodies' budget
    (`endpoints.ThreadBudget`)."""

    def take(self, size: int) -> bool:
        """Hold the decoded cost of a `size`-byte answer instead of what was held, waiting
        (bounded) for it; False when it could not be had."""
        ...

    def give_back(self) -> None:
        """Give back what is held."""
        ...


class Cluster:
    """One connection (an ApiClient) and what jobguard asks of it."""

    def __init__(self, api_client: client.ApiClient, source: str) -> None:
        self.api_client = api_client
        self.source = source
        """Where the connection came from ("in-cluster" or "kubeconfig FILE, context NAME")."""
        self.host = str(api_client.configuration.host)
        self.page_memory: PageMemory | None = None
        """What each list page takes its decoded cost from before it is decoded, until its
        objects are judged (`_pages`); None: nothing (`jobguard audit`)."""

    def close(self) -> None:
        self.api_client.close()

    def _call(
        self, verb: str, resource: Resource | None, scope: str | None, fn: Any, /, **kwargs: Any
    ) -> Any:
        """One request (`fn` of the client, with `kwargs`), its JSON body decoded; failures as
        ClusterError. `scope` is the namespace asked about (None: all)."""
        return self._fetch(verb, resource, scope, fn, MAX_ANSWER_BYTES, **kwargs)[0]

    def _fetch(
        self,
        verb: str,
        resource: Resource | None,
        scope: str | None,
        fn: Any,
        limit: int,
        /,
        **kwargs: Any,
    ) -> tuple[Any, int]:
        """`_call`, reading at most `limit` bytes (else _PageTooLarge); also the answer's size."""
        what = resource.qualified if resource else "version"
        try:
            response = fn(**kwargs, _preload_content=False, _request_timeout=REQUEST_TIMEOUT)
            data = _read(response, f"{verb} {what}", limit)
        except ApiException as exc:
            raise self._error(exc, verb, resource, scope) from None
        except urllib3.exceptions.HTTPError as exc:
            raise ClusterError(
                f"cannot reach the cluster at {self.host} ({self.source}): {_unreachable(exc)}"
            ) from None
        memory = self.page_memory
        if verb == "list" and memory is not None and not memory.take(len(data)):
            raise ClusterError(
                f"list {what}: no memory for a page of {len(data)} bytes: the server's "
                "memory budget stayed held by requests"
            )
        try:
            return orjson.loads(data), len(data)
        except orjson.JSONDecodeError:
            raise ClusterError(
                f"{verb} {resource.qualified if resource else 'version'}: the cluster at "
                f"{self.host} answered with something that is not JSON"
            ) from None

    def _error(
        self, exc: ApiException, verb: str, resource: Resource | None, namespace: str | None
    ) -> ClusterError:
        detail = _status_message(exc)
        if exc.status == 401:
            return ClusterError(
                f"unauthorized: the cluster at {self.host} rejected the credentials of "
                f"{self.source}: {detail}"
            )
        if exc.status == 403 and resource is not None:
            return AccessDenied(verb, resource, namespace, detail)
        what = resource.qualified if resource is not None else "the server version"
        return _HTTPError(exc.status or 0, f"{verb} {what}: HTTP {exc.status}: {detail}")

    def version(self) -> ServerVersion:
        """The server's `/version`."""
        body = self._call("get", None, None, client.VersionApi(self.api_client).get_code)
        if not isinstance(body, dict):
            raise ClusterError(f"the cluster at {self.host} sent an unreadable /version")
        return ServerVersion(
            str(body.get("major") or ""),
            str(body.get("minor") or ""),
            str(body.get("gitVersion") or ""),
        )

    def list_objects(
        self,
        resource: Resource,
        namespace: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> Iterator[dict[str, Any]]:
        """Every object of `resource` (in `namespace`, else in all), `page_size` at a time at
        most (`_pages`).

        Items come as the API server lists them (without apiVersion and kind). When a continue
        token has expired (410 Gone) the list restarts from the beginning, and objects already
        yielded (by uid) are not yielded again.
        """
        batch = client.BatchV1Api(self.api_client)
        list_all, list_namespaced = {
            "jobs": (batch.list_job_for_all_namespaces, batch.list_namespaced_job),
            "cronjobs": (batch.list_cron_job_for_all_namespaces, batch.list_namespaced_cron_job),
        }[resource.plural]
        kwargs: dict[str, Any] = {"namespace": namespace} if namespace else {}
        fn = list_namespaced if namespace else list_all
        seen: set[str] = set()
        for item in self._pages(resource, namespace, fn, page_size, kwargs):
            uid = _uid(item)
            if uid is not None and uid in seen:
                continue
            if uid is not None:
                seen.add(uid)
            yield item

    def _pages(
        self,
        resource: Resource,
        namespace: str | None,
        fn: Any,
        page_size: int,
        kwargs: dict[str, Any],
    ) -> Iterator[Any]:
        """The items of a list (`fn` with `kwargs`), page by page, each page handed over item by
        item and let go of as it goes (only the items not yet handed over stay in memory).

        Pages are bounded by bytes as well as count: a page of more than one object over
        PAGE_BYTES is asked again with half as many objects, and the count grows back (up to
        `page_size`) after a page under a quarter of PAGE_BYTES; a page of one object may be up
        to MAX_ANSWER_BYTES. After an expired continue token (410 Gone) the list starts again
        (MAX_LIST_RESTARTS times at most); after MAX_LIST_PAGES pages it stops with an error.
        A page's memory (`page_memory`) is held until the next page is asked, and given back
        at the end."""
        try:
            restarts = 0
            pages = 0
            asked = page_size
            token: str | None = None
            while True:
                if self.page_memory is not None:
                    self.page_memory.give_back()  # the last page's objects are judged
                pages += 1
                if pages > MAX_LIST_PAGES:
                    raise ClusterError(
                        f"list {resource.qualified}: more than {MAX_LIST_PAGES} pages; stopped"
                    )
                query = {**kwargs, "limit": asked}
                if token:
                    query["_continue"] = token
                limit = PAGE_BYTES if asked > 1 else MAX_ANSWER_BYTES
                try:
                    page, size = self._fetch("list", resource, namespace, fn, limit, **query)
                except _PageTooLarge:
                    if asked == 1:
                        raise
                    asked = max(asked // 2, 1)
                    log.warning(
                        "list %s: a page is over %d bytes; asking %d objects a page",
                        resource.qualified,
                        PAGE_BYTES,
                        asked,
                    )
                    continue
                except _HTTPError as exc:
                    if exc.status != 410 or not token:
                        raise
                    restarts += 1
                    if restarts > MAX_LIST_RESTARTS:
                        raise ClusterError(
                            f"list {resource.qualified}: the continue token expired (410 Gone) "
                            f"{restarts} times; try a larger page size"
                        ) from None
                    log.warning(
                        "list %s: continue token expired (410 Gone); restarting the list",
                        resource.qualified,
                    )
                    token = None
                    continue
                if not isinstance(page, dict) or not isinstance(page.get("items"), list):
                    raise ClusterError(f"list {resource.qualified}: the answer is not a list")
                metadata = page.get("metadata")
                token = metadata.get("continue") if isinstance(metadata, dict) else None
                if size < PAGE_BYTES // 4 and asked < page_size:
                    asked = min(asked * 2, page_size)
                items: list[Any] = page.pop("items")
                del page
                items.reverse()
                while items:
                    yield items.pop()
                if not token:
                    return

        finally:
            if self.page_memory is not None:
                self.page_memory.give_back()

    def serves(self, resource: Resource) -> bool:
        """Whether the API server serves `resource` (its CRD is installed): discovery."""
        api = client.CustomObjectsApi(self.api_client)
        try:
            body = self._call(
                "get",
                resource,
                None,
                api.get_api_resources,
                group=resource.group,
                version=resource.version,
            )
        except _HTTPError as exc:
            if exc.status == 404:
                return False
            raise
        resources = body.get("resources") if isinstance(body, dict) else None
        return any(
            isinstance(r, dict) and r.get("name") == resource.plural for r in resources or ()
        )

    def apply_report(self, report: Mapping[str, Any], resource: Resource = POLICY_REPORTS) -> str:
        """Create a report (a PolicyReport or an OpenReports Report, as `resource` says), or
        replace the results of an existing one (a merge patch, so no read is needed). Returns
        "created" or "updated"."""
        api = client.CustomObjectsApi(self.api_client)
        namespace = str(report["metadata"]["namespace"])
        common = {
            "group": resource.group,
            "version": resource.version,
            "namespace": namespace,
            "plural": resource.plural,
            "body": dict(report),
        }
        try:
            self._call("create", resource, namespace, api.create_namespaced_custom_object, **common)
            return "created"
        except _HTTPError as exc:
            if exc.status != 409:
                raise
        self._call(
            "patch",
            resource,
            namespace,
            api.patch_namespaced_custom_object,
            name=str(report["metadata"]["name"]),
            _content_type=MERGE_PATCH,
            **common,
        )
        return "updated"

    def list_reports(
        self,
        resource: Resource,
        namespace: str | None,
        label_selector: str,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> list[tuple[str, str]]:
        """(namespace, name) of every report of `resource` (in `namespace`, else in all) whose
        labels match `label_selector`."""
        api = client.CustomObjectsApi(self.api_client)
        kwargs: dict[str, Any] = {
            "group": resource.group,
            "version": resource.version,
            "plural": resource.plural,
            "label_selector": label_selector,
        }
        fn: Any = api.list_cluster_custom_object
        if namespace:
            kwargs["namespace"] = namespace
            fn = api.list_namespaced_custom_object
        found: set[tuple[str, str]] = set()
        for item in self._pages(resource, namespace, fn, page_size, kwargs):
            metadata = item.get("metadata") if isinstance(item, dict) else None
            if isinstance(metadata, dict):
                found.add((str(metadata.get("namespace", "")), str(metadata.get("name"))))
        return sorted(found)

    def delete_report(self, resource: Resource, namespace: str, name: str) -> bool:
        """Delete one report; False when it was already gone."""
        api = client.CustomObjectsApi(self.api_client)
        try:
            self._call(
                "delete",
                resource,
                namespace,
                api.delete_namespaced_custom_object,
                group=resource.group,
                version=resource.version,
                namespace=namespace,
                plural=resource.plural,
                name=name,
            )
        except _HTTPError as exc:
            if exc.status != 404:
                raise
            return False
        return True


class _HTTPError(ClusterError):
    """Any other failed request, with its status (404, 409 and 410 are handled by callers)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _uid(item: Any) -> str | None:
    metadata = item.get("metadata") if isinstance(item, dict) else None
    uid = metadata.get("uid") if isinstance(metadata, dict) else None
    return uid if isinstance(uid, str) and uid else None


def in_cluster(environ: Mapping[str, str], token_file: str) -> bool:
    """Running in a pod: the service host is set and the service account token is mounted."""
    return bool(environ.get(SERVICE_HOST_ENV_NAME)) and Path(token_file).is_file()


def _one_line(exc: BaseException) -> str:
    """An exception as one line (YAML errors span several: problem, then where)."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark
        where = "" if mark is None else f" (line {mark.line + 1}, column {mark.column + 1})"
        return f"not YAML: {exc.problem or exc.context or 'unreadable'}{where}"
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, ConfigException):
        return text
    # Valid YAML of another shape: the loader fails on it with a TypeError or a KeyError.
    return f"not a kubeconfig ({type(exc).__name__}: {text})"


def _kubeconfig_files(paths: str) -> list[Path]:
    return [Path(p).expanduser() for p in paths.split(os.pathsep) if p]


def connect(
    kubeconfig: str | None = None,
    context: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    token_file: str = SERVICE_TOKEN_FILENAME,
    ca_file: str = SERVICE_CERT_FILENAME,
) -> Cluster:
    """A connection: the in-cluster service account when running in a pod and no kubeconfig or
    context is given, else the kubeconfig (`kubeconfig`, $KUBECONFIG or ~/.kube/config).

    A kubeconfig that is missing, not YAML or not a kubeconfig is a ClusterError of one line that
    names its path."""
    environ = os.environ if environ is None else environ
    configuration = client.Configuration()
    if kubeconfig is None and context is None and in_cluster(environ, token_file):
        try:
            InClusterConfigLoader(token_file, ca_file, environ=environ).load_and_set(configuration)
        except Exception as exc:
            raise ClusterError(
                f"no usable cluster configuration: in-cluster service account: {_one_line(exc)}"
            ) from None
        source = "in-cluster service account"
    else:
        paths = kubeconfig or environ.get("KUBECONFIG") or "~/.kube/config"
        files = _kubeconfig_files(paths)
        if not any(f.is_file() for f in files):
            raise ClusterError(
                f"no usable cluster configuration: kubeconfig {paths}: no such file"
                + ("" if kubeconfig else " (and not running in a pod)")
            )
        try:
            config.load_kube_config(
                config_file=paths, context=context, client_configuration=configuration
            )
        except Exception as exc:
            raise ClusterError(
                f"no usable cluster configuration: kubeconfig {paths}"
                f"{f', context {context}' if context else ''}: {_one_line(exc)}"
            ) from None
        source = f"kubeconfig {paths}"
        if context:
            source += f", context {context}"
    # One retry of a failed request (urllib3 logs it at warning level: silenced by _NoRetryNoise).
    configuration.retries = 1
    return Cluster(client.ApiClient(configuration), source)


def detect_version(cluster: Cluster) -> str:
    """The supported release for the cluster's `/version` (`kubernetesVersion: auto`). A cluster
    newer than the newest supported release gets that release's semantics, an older one the
    oldest's; either way with one warning naming both."""
    from jobguard.validators.versions import choose_version

    reported = cluster.version()
    try:
        choice = choose_version(reported.major, reported.minor, reported.git_version)
    except ValueError as exc:
        raise ClusterError(f"kubernetesVersion: auto: {exc}") from None
    if not choice.exact:
        log.warning(
            "kubernetesVersion: auto: the cluster runs Kubernetes %s, %s than every release "
            "jobguard knows; judging with the semantics of %s, the %s supported release",
            choice.cluster,
            "newer" if choice.newer else "older",
            choice.version,
            "newest" if choice.newer else "oldest",
        )
    else:
        log.info("kubernetesVersion: auto: the cluster runs Kubernetes %s", choice.cluster)
    return choice.version


def read_or_none(fn: Any, *args: Any) -> dict[str, Any] | None:
    """One GET through the client (`fn`, e.g. `CoreV1Api.read_namespaced_secret`) as JSON;
    None when the object does not exist. Other failures raise ApiException."""
    try:
        response = fn(*args, _preload_content=False, _request_timeout=REQUEST_TIMEOUT)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise
    found: dict[str, Any] = orjson.loads(response.data)
    return found
