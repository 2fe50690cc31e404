"""Certificates that rotate themselves (`app.cluster.certrotator`), against the stand-in API
server: the Secret created once whoever starts first, the serving certificate renewed once a
third of its validity is left, a new CA joining the bundle before it signs, expired CAs
leaving it, the pair written to files the TLS manager reloads, and the leader's registrations
carrying the bundle."""

from __future__ import annotations

import base64
import datetime
from pathlib import Path
from typing import Any

from cryptography import x509

from jobguard.app.cluster.certrotator import (
    CertificateStore,
    CertificateSync,
    RotationOptions,
    ca_bundle,
)
from jobguard.app.cluster.client import Cluster
from jobguard.app.cluster.lease import LeaseConfig
from jobguard.app.cluster.registrar import Registrar, RegistrarOptions
from jobguard.app.config import parse_config
from jobguard.validators.registrations import ClientConfig
from tests.apiserver import StandIn

OPTIONS = RotationOptions("jobguard-system", "jobguard-tls", "jobguard", 90, 730, 600)
KEY = ("secrets", "jobguard-system", "jobguard-tls")


class Clock:
    def __init__(self) -> None:
        self.now = datetime.datetime.now(datetime.UTC)

    def __call__(self) -> datetime.datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += datetime.timedelta(**delta)


def _certs(secret: dict[str, Any]) -> tuple[list[x509.Certificate], x509.Certificate]:
    data = {k: base64.b64decode(v) for k, v in secret["data"].items()}
    return x509.load_pem_x509_certificates(data["ca.crt"]), x509.load_pem_x509_certificate(
        data["tls.crt"]
    )


def test_created_once_and_a_valid_chain(server: StandIn, cluster: Cluster) -> None:
    first = CertificateStore(cluster, OPTIONS).ensure()
    second = CertificateStore(cluster, OPTIONS).ensure()
    assert first["data"] == second["data"]
    (ca,), serving = _certs(first)
    serving.verify_directly_issued_by(ca)
    names = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "jobguard.jobguard-system.svc" in names.get_values_for_type(x509.DNSName)
    writes = [r for r in server.cluster.requests if r.method == "POST"]
    assert len(writes) == 1
    assert "ownerReferences" not in first["metadata"]


def test_owned_by_the_charts_cluster_role(server: StandIn, cluster: Cluster) -> None:
    server.cluster.stored[("clusterroles", "", "jobguard-webhooks")] = {
        "metadata": {"name": "jobguard-webhooks", "uid": "role-uid", "resourceVersion": "1"}
    }
    options = RotationOptions(
        "jobguard-system", "jobguard-tls", "jobguard", owner_cluster_role="jobguard-webhooks"
    )
    secret = CertificateStore(cluster, options).ensure()
    # Removed by the garbage collector with the chart's ClusterRole on uninstall.
    assert secret["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "name": "jobguard-webhooks",
            "uid": "role-uid",
        }
    ]


def test_serving_certificate_renewed_before_expiry(server: StandIn, cluster: Cluster) -> None:
    clock = Clock()
    store = CertificateStore(cluster, OPTIONS, now=clock)
    original = store.ensure()
    assert store.rotate()["data"] == original["data"]  # nothing due
    clock.advance(days=61)  # 29 of 90 days left: less than a third
    renewed = store.rotate()
    cas, serving = _certs(renewed)
    old_cas, old_serving = _certs(original)
    assert cas == old_cas and serving.serial_number != old_serving.serial_number
    serving.verify_directly_issued_by(cas[0])


def test_a_new_ca_joins_the_bundle_before_it_signs(server: StandIn, cluster: Cluster) -> None:
    clock = Clock()
    store = CertificateStore(cluster, OPTIONS, now=clock)
    (old_ca,), old_serving = _certs(store.ensure())
    clock.advance(days=500)  # 230 of 730 days left for the CA
    cas, serving = _certs(store.rotate())
    assert len(cas) == 2 and cas[1] == old_ca
    assert serving == old_serving  # not signed by the new CA yet
    clock.advance(seconds=599)
    assert _certs(store.rotate())[1] == old_serving
    clock.advance(seconds=1)
    cas, serving = _certs(store.rotate())
    serving.verify_directly_issued_by(cas[0])
    assert cas[1] == old_ca  # still trusted until it expires


def test_registrations_carry_the_bundle_and_replicas_get_the_pair(
    server: StandIn, cluster: Cluster, tmp_path: Path
) -> None:
    options = RegistrarOptions(
        ClientConfig(service_namespace="jobguard-system", service_name="jobguard"),
        None,
        LeaseConfig("jobguard-system", "jobguard-leader", "pod-a", 15, 10, 2),
        rotation=OPTIONS,
    )
    settings = parse_config("{}").to_settings()
    leader = Registrar(lambda: cluster, lambda: settings, options)
    assert leader.step(0) is True
    secret = server.cluster.stored[KEY]
    hooks = server.cluster.stored[("validatingwebhookconfigurations", "", "jobguard")]["webhooks"]
    assert {base64.b64decode(h["clientConfig"]["caBundle"]) for h in hooks} == {ca_bundle(secret)}
    sync = CertificateSync(CertificateStore(cluster, OPTIONS), tmp_path / "tls")
    assert sync.sync() is True and sync.sync() is False
    assert (tmp_path / "tls" / "tls.crt").read_bytes() == base64.b64decode(
        secret["data"]["tls.crt"]
    )
    # The leader renews; a replica's next sync writes the new pair for its TLS manager.
    rotated = CertificateStore(
        cluster,
        OPTIONS,
        now=lambda: datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=61),
    ).rotate()
    assert sync.sync() is True
    assert (tmp_path / "tls" / "tls.crt").read_bytes() == base64.b64decode(
        rotated["data"]["tls.crt"]
    )


def test_serve_takes_its_pair_from_the_secret(server: StandIn, tmp_path: Path) -> None:
    from jobguard.app.cli.main import build_parser
    from jobguard.app.cluster.commands import serve_certificates
    from jobguard.app.server.tls import TLSManager

    server.cluster.reset()
    kubeconfig = server.kubeconfig(tmp_path / "kubeconfig")
    args = build_parser().parse_args(
        [
            "serve",
            "--kubeconfig",
            str(kubeconfig),
            "--register-webhooks=jobguard-system/jobguard",
            "--manage-certificates=jobguard-system/jobguard-tls",
            f"--certificates-dir={tmp_path / 'tls'}",
        ]
    )
    found = serve_certificates(args)
    assert isinstance(found, tuple)
    assert args.tls_cert_file == str(tmp_path / "tls" / "tls.crt")
    secret = server.cluster.stored[KEY]
    assert Path(args.tls_cert_file).read_bytes() == base64.b64decode(secret["data"]["tls.crt"])
    manager = TLSManager(args.tls_cert_file, args.tls_private_key_file)
    assert manager.valid_now()
    bad = build_parser().parse_args(["serve", "--manage-certificates=jobguard-system/jobguard-tls"])
    assert serve_certificates(bad) == 2
