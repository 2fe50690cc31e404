"""jobguard keeps its own webhook registrations: the leader (`lease.LeaseElector`) creates and
updates the ValidatingWebhookConfiguration and MutatingWebhookConfiguration that
`validators.registrations.webhook_configurations` builds from the configuration in force, again
on every reload and every `resync` seconds (repairing edits by others), with the CA bundle read
from its file each time (a rotated CA reaches the registrations with the next pass).

The objects are owned (ownerReferences) by the chart's ClusterRole when one is named, so that the
garbage collector removes them with it on uninstall.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from jobguard.app.cluster.certrotator import CertificateStore, RotationOptions, ca_bundle
from jobguard.app.cluster.client import REQUEST_TIMEOUT, Cluster, ClusterError, read_or_none
from jobguard.app.cluster.lease import LeaseConfig, LeaseElector
from jobguard.validators import Settings
from jobguard.validators.registrations import (
    ClientConfig,
    RegistrationOptions,
    webhook_configurations,
)

log = logging.getLogger("jobguard.registrations")

_KINDS = {
    "ValidatingWebhookConfiguration": "validating_webhook_configuration",
    "MutatingWebhookConfiguration": "mutating_webhook_configuration",
}


@dataclass(frozen=True, slots=True)
class RegistrarOptions:
    client: ClientConfig
    ca_file: str | None
    """The PEM CA bundle the API server trusts jobguard by (read on every pass)."""
    lease: LeaseConfig
    registration: RegistrationOptions = field(default_factory=RegistrationOptions)
    owner_cluster_role: str | None = None
    resync: float = 60.0
    rotation: RotationOptions | None = None
    """jobguard keeps the certificates (`certrotator`): the leader renews them, and the
    registrations carry the Secret's CA bundle (then `ca_file` is not read)."""


def _compared(obj: dict[str, Any]) -> Any:
    metadata = obj.get("metadata") or {}
    return (
        obj.get("webhooks") or [],
        metadata.get("labels") or {},
        metadata.get("annotations") or {},
        [
            {k: r.get(k) for k in ("apiVersion", "kind", "name", "uid")}
            for r in metadata.get("ownerReferences") or []
        ],
    )


def apply_objects(cluster: Cluster, objects: list[dict[str, Any]]) -> int:
    """Create or replace each webhook configuration that differs from `objects`; how many were
    written. The API server defaults fields jobguard leaves out, so only what jobguard sets is
    compared (an object in the cluster equal in those is left alone)."""
    api: Any = client.AdmissionregistrationV1Api(cluster.api_client)
    written = 0
    for obj in objects:
        suffix = _KINDS[obj["kind"]]
        name = obj["metadata"]["name"]
        current = read_or_none(getattr(api, f"read_{suffix}"), name)
        if current is None:
            getattr(api, f"create_{suffix}")(obj, _request_timeout=REQUEST_TIMEOUT)
            written += 1
            continue
        if _compared(_defaulted(current)) == _compared(_defaulted(obj)):
            continue
        body = {**obj, "metadata": {**obj["metadata"]}}
        body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        getattr(api, f"replace_{suffix}")(name, body, _request_timeout=REQUEST_TIMEOUT)
        written += 1
    return written


_WEBHOOK_DEFAULTS: dict[str, Any] = {"objectSelector": {}, "namespaceSelector": {}}


def _defaulted(obj: dict[str, Any]) -> dict[str, Any]:
    """The fields the API server fills in that jobguard may leave out, filled in as it does."""
    out = {**obj}
    hooks = []
    for hook in obj.get("webhooks") or []:
        hook = {**_WEBHOOK_DEFAULTS, **hook}
        if obj["kind"] == "MutatingWebhookConfiguration":
            hook.setdefault("reinvocationPolicy", "Never")
        hooks.append(hook)
    out["webhooks"] = hooks
    return out


class Registrar:
    """The leader's loop: hold the Lease, and while holding it keep the registrations equal to
    what the configuration in force needs."""

    def __init__(
        self,
        connect: Callable[[], Cluster],
        settings: Callable[[], Settings],
        options: RegistrarOptions,
        ready: Callable[[], bool] = lambda: True,
    ) -> None:
        """`ready`: this replica serves (registrations that fail closed and point at a Service
        without a ready endpoint would refuse matched Jobs: written only once it does)."""
        self.connect = connect
        self.settings = settings
        self.options = options
        self.ready = ready
        self.cluster: Cluster | None = None
        self.elector: LeaseElector | None = None
        self._applied: tuple[Settings, bytes | None] | None = None
        self._applied_at = 0.0
        self.passes = 0
        """Registrations written (objects created or replaced), for tests and logs."""

    def _ca_bundle(self) -> bytes | None:
        if self.options.rotation is not None and self.cluster is not None:
            return ca_bundle(CertificateStore(self.cluster, self.options.rotation).rotate())
        if self.options.ca_file is None:
            return None
        return Path(self.options.ca_file).read_bytes()

    def objects(self, settings: Settings, ca_bundle: bytes | None) -> list[dict[str, Any]]:
        objects = webhook_configurations(
            settings, self.options.client, ca_bundle, self.options.registration
        )
        owner = self._owner()
        if owner is not None:
            for obj in objects:
                obj["metadata"]["ownerReferences"] = [owner]
        return objects

    def _owner(self) -> dict[str, Any] | None:
        name = self.options.owner_cluster_role
        if name is None or self.cluster is None:
            return None
        api: Any = client.RbacAuthorizationV1Api(self.cluster.api_client)
        response = api.read_cluster_role(
            name, _preload_content=False, _request_timeout=REQUEST_TIMEOUT
        )
        uid = orjson.loads(response.data)["metadata"]["uid"]
        return {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "name": name,
            "uid": uid,
        }

    def step(self, now: float) -> bool:
        """One pass: renew or acquire the Lease; as leader, write the registrations when the
        configuration or the CA changed, or `resync` seconds passed. Whether it leads."""
        if self.cluster is None:
            try:
                self.cluster = self.connect()
            except ClusterError as exc:
                log.error("webhook registrations: %s", exc)
                return False
            self.elector = LeaseElector(self.cluster, self.options.lease)
        assert self.elector is not None
        was_leading = self.elector.leading
        leading = self.elector.step()
        if leading != was_leading:
            log.info(
                "%s leadership (lease %s/%s)",
                "acquired" if leading else "lost",
                self.options.lease.namespace,
                self.options.lease.name,
            )
            self._applied = None
        if not leading or not self.ready():
            return leading
        try:
            ca_bundle = self._ca_bundle()
            current = (self.settings(), ca_bundle)
            applied = self._applied
            stale = applied is None or current[0] is not applied[0] or current[1] != applied[1]
            if stale or now - self._applied_at >= self.options.resync:
                written = apply_objects(self.cluster, self.objects(*current))
                self.passes += written
                if written:
                    log.info("webhook registrations written: %d", written)
                self._applied, self._applied_at = current, now
        except (ApiException, urllib3.exceptions.HTTPError, OSError, KeyError) as exc:
            log.error("webhook registrations not written: %s", exc)
        return True

    async def run(self) -> None:
        """Until cancelled; the Lease is released on the way out."""
        loop = asyncio.get_running_loop()
        try:
            while True:
                await asyncio.to_thread(self.step, loop.time())
                await asyncio.sleep(self.options.lease.retry)
        finally:
            if self.elector is not None:
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(self.elector.release)
            if self.cluster is not None:
                self.cluster.close()
