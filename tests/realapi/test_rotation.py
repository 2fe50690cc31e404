"""Certificates that rotate themselves, against the real API server, with requests flowing: the
Secret holds a serving certificate that is due for renewal; jobguard (`serve
--manage-certificates`, the leader of `--register-webhooks`) renews it, serves the new one
without a restart, and not one of the requests the API server sends it meanwhile fails."""

from __future__ import annotations

import base64
import datetime
import secrets
import socket
import ssl
import threading
import time
from pathlib import Path

import httpx
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from jobguard.app import certs
from jobguard.app.cluster.certrotator import ADDED_AT
from tests.controlplane import ControlPlane, Jobguard, create_namespace, free_port, wait_until
from tests.realapi.kube import JOBS, job_manifest, queued_create_is_judged
from tests.realapi.test_leader import LEASE_NAMESPACE, config


def served_serial(port: int, ca: Path) -> int:
    context = ssl.create_default_context(cafile=str(ca))
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).serial_number


def test_a_due_serving_certificate_is_renewed_while_requests_flow(
    plane: ControlPlane, admin: httpx.Client, tmp_path: Path
) -> None:
    tag = secrets.token_hex(2)
    prefix, name, secret = f"rot{tag}", f"jobguard-rot{tag}", f"jobguard-rot{tag}-tls"
    create_namespace(admin, LEASE_NAMESPACE)
    namespace = f"{prefix}-team"
    create_namespace(admin, namespace)
    # The Secret as a previous replica left it: a CA, and a serving certificate (for 127.0.0.1,
    # where the registrations reach jobguard) with less than a third of its validity left.
    now = datetime.datetime.now(datetime.UTC)
    ca, ca_key = certs.make_ca(f"{name}-ca", 730)
    old, old_key = certs.issue_serving(
        ca, ca_key, ["localhost"], ["127.0.0.1"], 1, now - datetime.timedelta(hours=20)
    )
    data = {
        "ca.crt": ca.public_bytes(Encoding.PEM),
        "ca.key": certs.key_pem(ca_key),
        "tls.crt": old.public_bytes(Encoding.PEM),
        "tls.key": certs.key_pem(old_key),
    }
    body = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": secret,
            "namespace": LEASE_NAMESPACE,
            "annotations": {ADDED_AT: (now - datetime.timedelta(days=30)).isoformat()},
        },
        "data": {k: base64.b64encode(v).decode() for k, v in data.items()},
    }
    made = admin.post(f"/api/v1/namespaces/{LEASE_NAMESPACE}/secrets", json=body)
    assert made.status_code == 201, made.text

    guard = Jobguard(tmp_path / "jobguard", kubeconfig=plane.kubeconfig)
    guard.port = free_port()
    (guard.directory / "certs").mkdir(parents=True)
    guard.ca.write_bytes(data["ca.crt"])  # what the readiness probe trusts
    stop = threading.Event()
    outcomes: list[int] = []

    def flow() -> None:
        with plane.http("alice") as alice:
            while not stop.is_set():
                job = job_manifest(f"r-{secrets.token_hex(3)}", queue="q", suspend=False)
                sent = alice.post(
                    JOBS.format(namespace=namespace), params={"dryRun": "All"}, json=job
                )
                outcomes.append(sent.status_code)
                time.sleep(0.05)

    try:
        guard.start(
            config([prefix]),
            (
                f"--register-webhooks={LEASE_NAMESPACE}/{name}",
                f"--webhook-url={guard.url}",
                f"--webhook-name={name}",
                f"--webhook-domain=rot{tag}.jobguard.io",
                f"--manage-certificates={LEASE_NAMESPACE}/{secret}",
                f"--certificates-dir={tmp_path / 'served'}",
                "--tls-reload-interval=1",
            ),
        )
        wait_until(queued_create_is_judged(plane, namespace), 60, "the registrations")
        flowing = threading.Thread(target=flow, daemon=True)
        flowing.start()
        wait_until(
            lambda: served_serial(guard.port, guard.ca) != old.serial_number,
            60,
            "the renewed certificate served",
        )
        time.sleep(2)  # requests keep flowing on the new certificate
    finally:
        stop.set()
        guard.stop()
        for kind in ("validatingwebhookconfigurations", "mutatingwebhookconfigurations"):
            admin.delete(f"/apis/admissionregistration.k8s.io/v1/{kind}/{name}")
    renewed = x509.load_pem_x509_certificate(
        base64.b64decode(
            admin.get(f"/api/v1/namespaces/{LEASE_NAMESPACE}/secrets/{secret}").json()["data"][
                "tls.crt"
            ]
        )
    )
    assert renewed.serial_number != old.serial_number
    assert renewed.not_valid_after_utc > old.not_valid_after_utc + datetime.timedelta(days=30)
    print(f"rotation: {len(outcomes)} requests while renewing, {outcomes.count(201)} allowed")
    # Every request was answered by jobguard (held by /mutate: 201), none failed on TLS.
    assert len(outcomes) >= 20 and set(outcomes) == {201}
