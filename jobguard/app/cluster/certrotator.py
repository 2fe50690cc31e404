"""Certificates that rotate themselves (as Gatekeeper's cert-controller): jobguard keeps its CA
and serving certificate in a Secret, renews them before they expire, serves the new pair without
a restart, and the leader patches the caBundle of its own registrations (`registrar`).

- Every replica, at start, reads the Secret and creates it when absent (the first create wins,
  the others read what it wrote), then writes its pair to local files, which the TLS manager
  serves and reloads (`--tls-cert-file` and `--tls-private-key-file`); `CertificateSync` reads the
  Secret again every `interval` seconds, so a renewed pair is served within about `interval`
  plus the TLS reload interval.
- The leader renews (`rotate`): the serving certificate once a third of its validity is left;
  the CA likewise, in two steps so that no API server ever meets a certificate it cannot verify:
  the new CA first joins the bundle (`ca.crt`, which the registrations carry), and only
  `overlap` seconds later signs the serving certificate; CAs leave the bundle when they expire.

Secret data: `tls.crt`, `tls.key` (the serving pair), `ca.crt` (every CA trusted, newest
first), `ca.key` (the newest CA's key); the annotation `jobguard.io/ca-added-at` says when the
newest CA joined the bundle. Nothing here depends on `helm` or `lookup`, so the objects a chart
renders are the same on every render.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import ipaddress
import logging
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from jobguard.app.certs import dns_names, issue_serving, key_pem, make_ca
from jobguard.app.cluster.client import REQUEST_TIMEOUT, Cluster, read_or_none

log = logging.getLogger("jobguard.certificates")
ADDED_AT = "jobguard.io/ca-added-at"


@dataclass(frozen=True, slots=True)
class RotationOptions:
    namespace: str
    secret: str
    service: str
    """The Service's name (the certificate's DNS names are its in-cluster names)."""
    serving_days: int = 90
    ca_days: int = 730
    overlap: float = 600.0
    """Seconds a new CA is in the bundle before it signs the serving certificate."""
    owner_cluster_role: str | None = None
    """The Secret's owner (the chart's ClusterRole): removed with it on uninstall."""
    hosts: tuple[str, ...] = ()
    """More names the serving certificate holds (DNS names or IP addresses): the host of
    `--webhook-url`, when the registrations reach jobguard there instead of the Service."""


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _left(cert: x509.Certificate, now: datetime.datetime) -> float:
    """The fraction of its validity a certificate has left."""
    total = (cert.not_valid_after_utc - cert.not_valid_before_utc).total_seconds()
    return (cert.not_valid_after_utc - now).total_seconds() / total


@dataclass(slots=True)
class _State:
    cas: list[x509.Certificate]
    ca_key: ec.EllipticCurvePrivateKey
    serving: x509.Certificate
    serving_key: bytes
    added_at: datetime.datetime


def _parse(secret: dict[str, Any]) -> _State | None:
    """The Secret's certificates, or None when it does not hold a usable set."""
    try:
        data = {k: base64.b64decode(v) for k, v in (secret.get("data") or {}).items()}
        cas = x509.load_pem_x509_certificates(data["ca.crt"])
        ca_key = serialization.load_pem_private_key(data["ca.key"], None)
        serving = x509.load_pem_x509_certificate(data["tls.crt"])
        serialization.load_pem_private_key(data["tls.key"], None)
        added = (secret.get("metadata", {}).get("annotations") or {}).get(ADDED_AT, "")
        added_at = datetime.datetime.fromisoformat(added)
    except (KeyError, ValueError, TypeError):
        return None
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey) or not cas:
        return None
    return _State(cas, ca_key, serving, data["tls.key"], added_at)


class CertificateStore:
    """The Secret, read and written with the official client."""

    def __init__(
        self,
        cluster: Cluster,
        options: RotationOptions,
        now: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.UTC),
    ) -> None:
        self.cluster = cluster
        self.options = options
        self.now = now
        self.api: Any = client.CoreV1Api(cluster.api_client)

    def read(self) -> dict[str, Any] | None:
        return read_or_none(
            self.api.read_namespaced_secret, self.options.secret, self.options.namespace
        )

    def _issue(
        self, ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey
    ) -> tuple[bytes, bytes]:
        names = dns_names(self.options.service, self.options.namespace)
        ips = [h for h in self.options.hosts if _is_ip(h)]
        names += [h for h in self.options.hosts if not _is_ip(h) and h not in names]
        start = self.now() - datetime.timedelta(minutes=5)
        cert, key = issue_serving(ca, ca_key, names, ips, self.options.serving_days, start)
        return _pem(cert), key_pem(key)

    def _body(self, state: _State, previous: dict[str, Any] | None) -> dict[str, Any]:
        data = {
            "ca.crt": b"".join(_pem(c) for c in state.cas),
            "ca.key": key_pem(state.ca_key),
            "tls.crt": _pem(state.serving),
            "tls.key": state.serving_key,
        }
        metadata: dict[str, Any] = {
            "name": self.options.secret,
            "namespace": self.options.namespace,
            "labels": {"app.kubernetes.io/managed-by": "jobguard"},
            "annotations": {ADDED_AT: state.added_at.isoformat()},
        }
        if previous is not None:
            metadata["resourceVersion"] = previous["metadata"]["resourceVersion"]
        owner = self._owner()
        if owner is not None:
            metadata["ownerReferences"] = [owner]
        return {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": metadata,
            "data": {k: base64.b64encode(v).decode() for k, v in data.items()},
        }

    def _owner(self) -> dict[str, Any] | None:
        name = self.options.owner_cluster_role
        if name is None:
            return None
        api: Any = client.RbacAuthorizationV1Api(self.cluster.api_client)
        role = read_or_none(api.read_cluster_role, name)
        if role is None:
            return None
        return {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "name": name,
            "uid": role["metadata"]["uid"],
        }

    def _fresh(self) -> _State:
        ca, ca_key = make_ca(f"{self.options.service}-ca", self.options.ca_days, self.now())
        tls_crt, tls_key = self._issue(ca, ca_key)
        return _State([ca], ca_key, x509.load_pem_x509_certificate(tls_crt), tls_key, self.now())

    def ensure(self) -> dict[str, Any]:
        """The Secret, created when absent or unusable (any replica, at start)."""
        secret = self.read()
        if secret is not None and _parse(secret) is not None:
            return secret
        body = self._body(self._fresh(), secret)
        try:
            if secret is None:
                self.api.create_namespaced_secret(
                    self.options.namespace, body, _request_timeout=REQUEST_TIMEOUT
                )
            else:
                self.api.replace_namespaced_secret(
                    self.options.secret,
                    self.options.namespace,
                    body,
                    _request_timeout=REQUEST_TIMEOUT,
                )
            log.info(
                "certificates created in Secret %s/%s", self.options.namespace, self.options.secret
            )
        except ApiException as exc:
            if exc.status != 409:  # another replica wrote first: use its
                raise
        found = self.read()
        if found is None:
            raise ApiException(status=404, reason=f"Secret {self.options.secret} vanished")
        return found

    def rotate(self) -> dict[str, Any]:
        """The leader's pass: renew what is due (see the module's docstring); the Secret."""
        secret = self.ensure()
        state = _parse(secret)
        assert state is not None
        now = self.now()
        changed = False
        valid = [c for c in state.cas if c.not_valid_after_utc > now]
        if not valid or (not _signed_by(state.serving, state.cas[0]) and len(state.cas) == 1):
            # Every CA expired (or the pair does not belong to it): start again.
            state, changed = self._fresh(), True
            valid = state.cas
        if len(valid) != len(state.cas):
            state.cas, changed = valid, True
        newest = state.cas[0]
        if _left(newest, now) < 1 / 3:
            newest, state.ca_key = make_ca(
                f"{self.options.service}-ca", self.options.ca_days, self.now()
            )
            state.cas = [newest, *state.cas]
            state.added_at, changed = now, True
            log.info(
                "a new CA joined the bundle; it signs once %g s have passed", self.options.overlap
            )
        settled = (now - state.added_at).total_seconds() >= self.options.overlap
        by_newest = state.serving.issuer == newest.subject and _signed_by(state.serving, newest)
        due = _left(state.serving, now) < 1 / 3 or state.serving.not_valid_after_utc <= now
        if (not by_newest and settled) or (due and (by_newest or settled)):
            tls_crt, state.serving_key = self._issue(newest, state.ca_key)
            state.serving, changed = x509.load_pem_x509_certificate(tls_crt), True
            log.info(
                "serving certificate renewed, valid until %s", state.serving.not_valid_after_utc
            )
        elif due:
            # The new CA is not in every API server's bundle yet: renew from the one that
            # signed the current certificate, kept in the bundle.
            log.info("serving certificate due; renewing once the new CA has settled")
        if not changed:
            return secret
        self.api.replace_namespaced_secret(
            self.options.secret,
            self.options.namespace,
            self._body(state, secret),
            _request_timeout=REQUEST_TIMEOUT,
        )
        found = self.read()
        assert found is not None
        return found


def _signed_by(cert: x509.Certificate, ca: x509.Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def ca_bundle(secret: dict[str, Any]) -> bytes:
    return base64.b64decode(secret["data"]["ca.crt"])


def write_pair(secret: dict[str, Any], directory: Path) -> bool:
    """The serving pair (and the bundle) as files under `directory`, each replaced whole (a
    reader never sees half a file); whether anything changed."""
    changed = False
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("tls.key", "tls.crt", "ca.crt"):
        content = base64.b64decode(secret["data"][name])
        path = directory / name
        if path.exists() and path.read_bytes() == content:
            continue
        fd, tmp = tempfile.mkstemp(dir=directory)
        with os.fdopen(fd, "wb") as file:
            file.write(content)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
        changed = True
    return changed


class CertificateSync:
    """Every replica: the Secret's pair copied to local files every `interval` seconds (the TLS
    manager reloads them); with `rotate` (the leader's `Registrar` says when it leads), renewals
    are written first."""

    def __init__(self, store: CertificateStore, directory: Path, interval: float = 10.0) -> None:
        self.store = store
        self.directory = directory
        self.interval = interval

    def sync(self) -> bool:
        try:
            secret = self.store.read()
        except (ApiException, OSError) as exc:
            log.warning("certificates not read: %s", exc)
            return False
        if secret is None or _parse(secret) is None:
            return False
        return write_pair(secret, self.directory)

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            await asyncio.to_thread(self.sync)
