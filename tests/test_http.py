"""The HTTP layer: in-process and over a real TLS socket on loopback."""

from __future__ import annotations

import copy
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobguard.app.admission.review import handle_validate
from jobguard.app.server.app import create_app
from jobguard.validators import Settings
from tests.builders import job
from tests.reviews import review
from tests.servers import free_port, loopback_args, serving, wait_ready


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app()) as c:
        yield c


def bad_policy_job() -> dict:
    obj = job(
        completionMode="Indexed",
        completions=3,
        parallelism=3,
        successPolicy={"rules": [{"succeededCount": 5}]},
    )
    return obj


def test_allowed_create(client: TestClient) -> None:
    r = client.post("/validate", json=review(job()))
    assert r.status_code == 200
    assert r.json() == {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": "uid-1", "allowed": True},
    }


def test_denied_create_is_shaped_like_api_server(client: TestClient) -> None:
    r = client.post("/validate", json=review(bad_policy_job()))
    assert r.status_code == 200
    body = r.json()
    assert body["apiVersion"] == "admission.k8s.io/v1"
    assert body["response"]["uid"] == "uid-1"
    assert body["response"]["allowed"] is False
    assert "patch" not in body["response"] and "patchType" not in body["response"]
    assert body["response"]["status"] == {
        "status": "Failure",
        "message": 'Job.batch "pi" is invalid: spec.successPolicy.rules[0].succeededCount: '
        "Invalid value: 5: must be less than or equal to 3 (the number of specified "
        "completions)",
        "reason": "Invalid",
        "details": {
            "name": "pi",
            "group": "batch",
            "kind": "Job",
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": "Invalid value: 5: must be less than or equal to 3 (the number of "
                    "specified completions)",
                    "field": "spec.successPolicy.rules[0].succeededCount",
                }
            ],
        },
        "code": 422,
    }


def test_update_repeats_spec_causes_like_upstream_but_message_once(client: TestClient) -> None:
    old = bad_policy_job()
    new = copy.deepcopy(old)
    new["spec"]["parallelism"] = 2
    status = client.post("/validate", json=review(new, old, "UPDATE")).json()["response"]["status"]
    fields = [c["field"] for c in status["details"]["causes"]]
    assert fields == ["spec.successPolicy.rules[0].succeededCount"] * 2
    assert status["message"].count("succeededCount") == 1
    assert not status["message"].split("is invalid: ")[1].startswith("[")


def test_status_update_multiple_errors_message_is_bracketed(client: TestClient) -> None:
    old = job()
    old["status"] = {
        "startTime": "2026-01-01T10:00:00Z",
        "completionTime": "2026-01-01T11:00:00Z",
        "succeeded": 1,
        "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True"},
            {"type": "Complete", "status": "True"},
        ],
    }
    new = copy.deepcopy(old)
    new["status"]["conditions"] = [{"type": "SuccessCriteriaMet", "status": "True"}]
    new["status"]["succeeded"] = 0
    new["status"].pop("completionTime")
    status = client.post("/validate", json=review(new, old, "UPDATE", sub="status")).json()[
        "response"
    ]["status"]
    assert status["message"].startswith('Job.batch "pi" is invalid: [')
    assert (
        "status.conditions: Invalid value: cannot disable the terminal Complete=True condition"
        in status["message"]
    )
    assert {c["field"] for c in status["details"]["causes"]} == {
        "status.conditions",
        "status.succeeded",
    }


def test_v1beta1_answered_in_v1beta1(client: TestClient) -> None:
    r = client.post("/validate", json=review(bad_policy_job(), version="v1beta1"))
    assert r.json()["apiVersion"] == "admission.k8s.io/v1beta1"
    assert r.json()["response"]["allowed"] is False


@pytest.mark.parametrize(
    "body",
    [
        review(job(), resource="deployments"),
        review(None, job(), operation="DELETE"),
        review(None, operation="CONNECT"),
        review(bad_policy_job(), bad_policy_job(), "UPDATE", sub="scale"),
    ],
)
def test_other_requests_allowed_at_once(client: TestClient, body: dict) -> None:
    r = client.post("/validate", json=body)
    assert r.status_code == 200
    assert r.json()["response"] == {"uid": "uid-1", "allowed": True}


def test_dry_run_judged_like_any_other(client: TestClient) -> None:
    body = review(bad_policy_job())
    body["request"]["dryRun"] = True
    assert client.post("/validate", json=body).json()["response"]["allowed"] is False


def test_object_that_is_not_a_job_gets_400_naming_field(client: TestClient) -> None:
    obj = job()
    obj["spec"]["completions"] = "ten"
    response = client.post("/validate", json=review(obj)).json()["response"]
    assert response["allowed"] is False
    assert response["status"]["code"] == 400
    assert "spec.completions" in response["status"]["message"]
    assert response["status"]["details"]["causes"][0]["field"] == "spec.completions"


MALFORMED: list[tuple[bytes, str]] = [
    (b"", "not valid JSON"),
    (b"{", "not valid JSON"),
    (b"[]", "must be a JSON object"),
    (b'"review"', "must be a JSON object"),
    (b"null", "must be a JSON object"),
    (b'{"apiVersion":"v1","kind":"AdmissionReview","request":{"uid":"a"}}', "apiVersion"),
    (b'{"apiVersion":"admission.k8s.io/v1","kind":"Pod","request":{"uid":"a"}}', "kind"),
    (b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}', "no request"),
    (b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":[]}', "no request"),
    (b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}}', "uid"),
    (b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":7}}', "uid"),
    (
        b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":'
        b'{"uid":"a","operation":"PATCH"}}',
        "operation",
    ),
    (
        b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":'
        b'{"uid":"a","operation":"CREATE","userInfo":"root"}}',
        "userInfo",
    ),
    (b"[" * 5000 + b"]" * 5000, "not valid JSON"),
    (b"\xff\xfe\x00", "not valid JSON"),
]


@pytest.mark.parametrize(("body", "reason"), MALFORMED)
def test_malformed_bodies_get_400_with_one_line_reason(
    client: TestClient, body: bytes, reason: str
) -> None:
    r = client.post("/validate", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400
    error = r.json()["error"]
    assert reason in error
    assert "\n" not in error and "Traceback" not in error


def test_health_endpoints(client: TestClient) -> None:
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 200


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "spec",
                    "status",
                    "metadata",
                    "template",
                    "completions",
                    "suspend",
                    "conditions",
                    "type",
                    "status",
                    "selector",
                    "successPolicy",
                    "rules",
                    "succeededIndexes",
                    "name",
                    "uid",
                    "labels",
                    "containers",
                    "startTime",
                    "matchLabels",
                    "completionMode",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    obj=json_values,
    old=json_values,
    operation=st.sampled_from(["CREATE", "UPDATE", "DELETE"]),
    resource=st.sampled_from(["jobs", "cronjobs"]),
    sub=st.sampled_from(["", "status"]),
)
def test_fuzzed_objects_never_fail_the_server(obj, old, operation, resource, sub) -> None:
    body = orjson.dumps(review(obj, old, operation, resource, sub))
    outcome = handle_validate(body, Settings())
    assert outcome.status == 200 and outcome.review is not None
    payload = outcome.review
    assert payload["response"]["uid"] == "uid-1"
    assert isinstance(payload["response"]["allowed"], bool)
    assert "could not judge" not in orjson.dumps(payload).decode()


# --- a real TLS server on loopback --------------------------------------------------------------


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    from jobguard.app.certs import generate

    certs = generate("jobguard", "jobguard", tmp_path_factory.mktemp("certs"), dev=True)
    port = free_port()
    with serving(loopback_args(port, tls=(certs.tls_crt, certs.tls_key))) as proc:
        wait_ready(
            f"https://127.0.0.1:{port}", ssl.create_default_context(cafile=str(certs.ca_crt)), proc
        )
        yield f"https://127.0.0.1:{port}", certs.ca_crt


def test_tls_server_judges_reviews(tls_server: tuple[str, Path]) -> None:
    url, ca = tls_server
    with httpx.Client(verify=ssl.create_default_context(cafile=str(ca)), timeout=5) as http:
        ok = http.post(f"{url}/validate?timeout=5s", json=review(job()))
        assert ok.status_code == 200 and ok.json()["response"]["allowed"] is True
        denied = http.post(f"{url}/validate?timeout=5s", json=review(bad_policy_job()))
        assert denied.json()["response"]["status"]["code"] == 422
        assert http.post(f"{url}/validate", content=b"not json").status_code == 400
        assert http.get(f"{url}/healthz").text == "ok"


def test_tls_server_rejects_untrusted_clients_of_wrong_ca(tls_server: tuple[str, Path]) -> None:
    url, _ = tls_server
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/healthz", verify=True)
