"""One writer among replicas: a `coordination.k8s.io/v1` Lease, as client-go's leader election
holds one (acquire when absent or expired, renew while held, give it up on stop), through the
official `kubernetes` client. Whatever must run once per deployment (keeping the webhook
registrations, a background audit) runs only while `LeaseElector.leading`.

Expiry is judged on the local clock, from when this replica last saw the record change (as
client-go does), so clocks that disagree between nodes cannot make two leaders: a record whose
holder stops renewing expires `leaseDurationSeconds` after this replica last saw it renewed.
Updates carry the resourceVersion read, so two candidates racing for an expired Lease cannot both
win (the API server answers 409 to the second).
"""

from __future__ import annotations

import datetime
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from jobguard.app.cluster.client import REQUEST_TIMEOUT, Cluster, read_or_none

log = logging.getLogger("jobguard.lease")


def _micro_time(now: datetime.datetime) -> str:
    """A MicroTime as the API server writes it."""
    return now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class LeaseConfig:
    namespace: str
    name: str
    identity: str
    """This replica (its pod name)."""
    duration: float = 15.0
    """leaseDurationSeconds: how long others wait for a silent holder."""
    renew_deadline: float = 10.0
    """A holder that could not renew for this long stops leading (before others may take over)."""
    retry: float = 2.0
    """How often a candidate tries and a holder renews."""


class LeaseElector:
    def __init__(
        self,
        cluster: Cluster,
        config: LeaseConfig,
        monotonic: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.UTC),
    ) -> None:
        self.cluster = cluster
        self.config = config
        # Any: dict bodies and raw responses (_preload_content=False), as `Cluster._call`.
        self.api: Any = client.CoordinationV1Api(cluster.api_client)
        self.monotonic = monotonic
        self.now = now
        self.leading = False
        self._observed: tuple[str, str] | None = None
        """(holder, renewTime) of the record last read."""
        self._observed_at = 0.0
        self._renewed_at = 0.0

    def _read(self) -> dict[str, Any] | None:
        return read_or_none(self.api.read_namespaced_lease, self.config.name, self.config.namespace)

    def _record(self, spec: dict[str, Any], transitions: int) -> dict[str, Any]:
        now = _micro_time(self.now())
        acquired = (
            spec.get("acquireTime") if spec.get("holderIdentity") == self.config.identity else None
        )
        return {
            "holderIdentity": self.config.identity,
            "leaseDurationSeconds": max(1, round(self.config.duration)),
            "acquireTime": acquired or now,
            "renewTime": now,
            "leaseTransitions": transitions,
        }

    def step(self) -> bool:
        """Acquire or renew once; whether this replica leads now. Errors reaching the API server
        count as a failed renewal (leadership ends after `renew_deadline` of them)."""
        try:
            won = self._try()
        except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            log.warning("lease %s/%s: %s", self.config.namespace, self.config.name, exc)
            won = False
        now = self.monotonic()
        if won:
            self._renewed_at = now
            self.leading = True
        elif self.leading and now - self._renewed_at >= self.config.renew_deadline:
            self.leading = False
        return self.leading

    def _try(self) -> bool:
        config = self.config
        lease = self._read()
        if lease is None:
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": config.name, "namespace": config.namespace},
                "spec": self._record({}, 0),
            }
            return self._write("create", body)
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        record = (holder, str(spec.get("renewTime") or ""))
        if record != self._observed:
            self._observed, self._observed_at = record, self.monotonic()
        duration = float(spec.get("leaseDurationSeconds") or config.duration)
        expired = self.monotonic() >= self._observed_at + duration
        if holder and holder != config.identity and not expired:
            return False
        transitions = int(spec.get("leaseTransitions") or 0) + (holder != config.identity)
        lease["spec"] = self._record(spec, transitions)
        return self._write("replace", lease)

    def _write(self, verb: str, body: dict[str, Any]) -> bool:
        config = self.config
        try:
            if verb == "create":
                self.api.create_namespaced_lease(
                    config.namespace, body, _request_timeout=REQUEST_TIMEOUT
                )
            else:
                self.api.replace_namespaced_lease(
                    config.name, config.namespace, body, _request_timeout=REQUEST_TIMEOUT
                )
        except ApiException as exc:
            if exc.status == 409:  # another candidate wrote first
                return False
            raise
        return True

    def release(self) -> None:
        """Give the Lease up (on stop), so another replica takes over at once rather than after
        `duration`."""
        if not self.leading:
            return
        self.leading = False
        try:
            lease = self._read()
            if (
                lease is None
                or (lease.get("spec") or {}).get("holderIdentity") != self.config.identity
            ):
                return
            lease["spec"]["holderIdentity"] = ""
            lease["spec"]["leaseDurationSeconds"] = 1
            self._write("replace", lease)
        except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            log.warning(
                "lease %s/%s not released: %s", self.config.namespace, self.config.name, exc
            )
