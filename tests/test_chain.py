"""The admission chain every entry point calls: the stages each asks for, DEC-001 resolved
through the configuration at /validate, `review` and `check` alike, the namespace resolved once,
and the explicit result of a webhook call."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient

from jobguard.app.admission.review import handle_mutate, handle_validate
from jobguard.app.cli.main import main
from jobguard.app.config import load_config, parse_config
from jobguard.app.server.app import create_app
from jobguard.validators import (
    BOTH_STAGES,
    Operation,
    Request,
    Requester,
    Settings,
    Stage,
    admit,
    evaluate,
    pipeline,
)
from jobguard.validators.context import JobContext
from tests.builders import job
from tests.reviews import review

QUEUED_CONFIG = """
suspendPolicies:
  - name: queued
    match:
      namespaces: [default]
      labelSelector: {matchLabels: {kueue.x-k8s.io/queue-name: q}}
    forceSuspendOnCreate: true
    controllers: {serviceAccounts: ["kueue-system:kueue"]}
"""


def queued_settings() -> Settings:
    return parse_config(QUEUED_CONFIG).to_settings()


def queued_job(**metadata: Any) -> dict[str, Any]:
    obj = job(name="q")
    obj["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "q"}
    del obj["metadata"]["namespace"]
    obj["metadata"].update(metadata)
    return obj


def create(obj: Any, namespace: str = "") -> Request:
    return Request("Job", Operation.CREATE, obj, namespace=namespace, requester=Requester("alice"))


# --- the stages each entry point asks for ------------------------------------------------------


def test_both_stages_judge_the_mutated_object() -> None:
    admission_ = admit(create(queued_job()), queued_settings())
    assert admission_.mutation.policy is not None and admission_.mutation.policy.name == "queued"
    assert admission_.request.object["spec"]["suspend"] is True
    assert admission_.verdict is not None and admission_.verdict.violations == []
    assert admission_.allowed


def test_validating_alone_judges_the_object_as_received() -> None:
    # /validate: the cluster's mutating stage ran before; an unpatched Job was not mutated, and
    # that is what the API server would store.
    admission_ = admit(create(queued_job()), queued_settings(), Stage.VALIDATING)
    assert admission_.mutation.policy is None
    assert admission_.request.object["spec"]["suspend"] is False
    assert admission_.verdict is not None
    assert [(v.error.rule, v.error.path) for v in admission_.verdict.violations] == [
        ("SUS-001", "spec.suspend")
    ]
    assert not admission_.allowed


def test_mutating_alone_gives_no_verdict() -> None:
    admission_ = admit(create(queued_job()), queued_settings(), Stage.MUTATING)
    assert admission_.mutation.patch == [{"op": "add", "path": "/spec/suspend", "value": True}]
    assert admission_.verdict is None and admission_.allowed


def test_the_chain_is_idempotent() -> None:
    settings = queued_settings()
    first = admit(create(queued_job()), settings, BOTH_STAGES)
    again = admit(first.request, settings, BOTH_STAGES)
    assert again.mutation.policy is None and again.request == first.request
    assert again.verdict is not None and again.verdict.violations == []
    # what /validate receives once /mutate's patch is applied
    validated = admit(first.request, settings, Stage.VALIDATING)
    assert validated.verdict is not None and validated.verdict.allowed


def test_mutate_then_validate_over_the_wire() -> None:
    settings = queued_settings()
    body = review(queued_job(namespace="default"))
    mutated = handle_mutate(orjson.dumps(body), settings)
    assert mutated.result == "allowed" and mutated.patched
    unpatched = handle_validate(orjson.dumps(body), settings)
    assert unpatched.result == "denied"
    patched = copy.deepcopy(body)
    patched["request"]["object"]["spec"]["suspend"] = True
    assert handle_validate(orjson.dumps(patched), settings).result == "allowed"


def test_unreadable_objects_are_left_unpatched() -> None:
    obj = queued_job()
    obj["spec"]["completions"] = "ten"
    admission_ = admit(create(obj), queued_settings())
    assert admission_.mutation.policy is None and admission_.request.object is obj
    assert admission_.verdict is not None
    assert [(v.error.rule, v.error.path) for v in admission_.verdict.violations] == [
        ("DEC-001", "spec.completions")
    ]


# --- DEC-001 through the configuration, at every entry point ---------------------------------

DEC_CONFIGS = {
    "deny": "{}\n",
    "warn": "rules: {DEC-001: {enforcement: warn}}\n",
    "dryrun": "rules: {DEC-001: {enforcement: dryrun}}\n",
    "disabled": "rules: {DEC-001: {enabled: false}}\n",
}
# Worded as the API server's OpenAPI validation words a wrong type.
READ_DETAIL = 'spec.completions in body must be of type integer: "string"'
READ_ERROR = f'Invalid value: "string": {READ_DETAIL}'
DEC_RESPONSES: dict[str, dict[str, Any]] = {
    "deny": {
        "uid": "uid-1",
        "allowed": False,
        "status": {
            "status": "Failure",
            "message": f'Job.batch "pi" could not be read: spec.completions: {READ_ERROR}',
            "reason": "BadRequest",
            "details": {
                "name": "pi",
                "group": "batch",
                "kind": "Job",
                "causes": [
                    {
                        "reason": "FieldValueTypeInvalid",
                        "message": READ_ERROR,
                        "field": "spec.completions",
                    }
                ],
            },
            "code": 400,
        },
    },
    "warn": {
        "uid": "uid-1",
        "allowed": True,
        "warnings": [f"DEC-001 spec.completions: {READ_DETAIL}"],
        "auditAnnotations": {"violations": "DEC-001=warn"},
    },
    "dryrun": {
        "uid": "uid-1",
        "allowed": True,
        "auditAnnotations": {"violations": "DEC-001=dryrun"},
    },
    "disabled": {"uid": "uid-1", "allowed": True},
}
MANIFEST = """\
apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  completions: ten
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
"""


def unreadable_job() -> dict[str, Any]:
    obj = job()
    obj["spec"]["completions"] = "ten"
    return obj


@pytest.fixture(params=list(DEC_CONFIGS))
def dec_config(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, Path]:
    name: str = request.param
    path = tmp_path / "config.yaml"
    path.write_text(DEC_CONFIGS[name])
    return name, path


def test_dec001_at_validate(dec_config: tuple[str, Path]) -> None:
    name, config = dec_config
    with TestClient(create_app(load_config(str(config)))) as client:
        r = client.post("/validate", json=review(unreadable_job()))
    assert r.status_code == 200
    assert r.json()["response"] == DEC_RESPONSES[name]


def test_dec001_in_review(
    dec_config: tuple[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name, config = dec_config
    body = tmp_path / "review.json"
    body.write_bytes(orjson.dumps(review(unreadable_job())))
    code = main(["review", "--config", str(config), str(body)])
    assert code == (1 if name == "deny" else 0)
    assert json.loads(capsys.readouterr().out)["response"] == DEC_RESPONSES[name]


def test_dec001_in_check(
    dec_config: tuple[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name, config = dec_config
    manifest = tmp_path / "job.yaml"
    manifest.write_text(MANIFEST)
    code = main(["check", "--config", str(config), "--output", "json", str(manifest)])
    assert code == (1 if name == "deny" else 0)
    violations = json.loads(capsys.readouterr().out)["results"][0]["violations"]
    expected = [
        {
            "rule": "DEC-001",
            "field": "spec.completions",
            "type": "FieldValueTypeInvalid",
            "message": READ_ERROR,
            "enforcement": name,
            "line": 5,
            "column": 3,
        }
    ]
    assert violations == ([] if name == "disabled" else expected)


def test_dec001_keeps_the_decode_error_for_every_enforcement() -> None:
    for text in DEC_CONFIGS.values():
        verdict = evaluate(create(unreadable_job()), parse_config(text).to_settings())
        assert verdict.decode_error is not None and verdict.decode_error.field == "spec.completions"


# --- the namespace, resolved once -------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_namespace", "metadata", "expected"),
    [
        ("", {}, "default"),
        ("", {"namespace": "team-a"}, "team-a"),
        ("ops", {"namespace": "team-a"}, "ops"),
        ("", {"namespace": ""}, "default"),
        ("", {"namespace": 7}, "default"),
    ],
)
def test_request_resolves_its_namespace(
    request_namespace: str, metadata: dict[str, Any], expected: str
) -> None:
    request = create(queued_job(**metadata), request_namespace)
    assert request.namespace == expected


def test_rules_read_the_resolved_namespace() -> None:
    settings = queued_settings()
    # No namespace in the request nor in the object: the policy for "default" applies.
    verdict = evaluate(create(queued_job()), settings)
    assert isinstance(verdict.context, JobContext) and verdict.context.namespace == "default"
    assert [v.error.rule for v in verdict.violations] == ["SUS-001"]
    elsewhere = evaluate(create(queued_job(namespace="team-b")), settings)
    assert isinstance(elsewhere.context, JobContext) and elsewhere.context.namespace == "team-b"
    assert elsewhere.violations == []
    assert admit(create(queued_job()), settings, Stage.MUTATING).mutation.policy is not None
    assert admit(create(queued_job(namespace="team-b")), settings).mutation.policy is None


def test_check_pairs_and_reports_in_the_resolved_namespace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = job(name="a")
    del new["metadata"]["namespace"]
    new["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "b"}
    old = job(name="a")  # stored in "default"
    (tmp_path / "new.yaml").write_text(orjson.dumps(new).decode())
    (tmp_path / "old.yaml").write_text(orjson.dumps(old).decode())
    args = ["check", "--output", "json", "--old", str(tmp_path / "old.yaml")]
    code = main([*args, str(tmp_path / "new.yaml")])
    result = json.loads(capsys.readouterr().out)["results"][0]
    assert code == 1 and result["namespace"] == "default"
    assert [v["rule"] for v in result["violations"]] == ["TM-001"]


# --- the explicit result of a webhook call ----------------------------------------------------


def test_results_of_webhook_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings()
    good = orjson.dumps(review(job()))
    bad = job()
    bad["spec"]["completions"] = -1
    assert handle_validate(good, settings).result == "allowed"
    assert handle_validate(orjson.dumps(review(bad)), settings).result == "denied"
    refused = handle_validate(b"[]", settings)
    assert (refused.result, refused.status, refused.review) == ("bad_request", 400, None)
    assert refused.payload == {"error": "body must be a JSON object (an AdmissionReview)"}
    assert handle_mutate(good, settings).result == "allowed"
    queued = orjson.dumps(review(queued_job(namespace="default")))
    assert handle_mutate(queued, queued_settings()).patched  # a stage that decodes the Job

    def broken(*_args: object) -> None:
        raise RuntimeError("a bug")

    # A bug deep in the chain, in the decoder the pipeline calls.
    monkeypatch.setattr(pipeline, "decode_job", broken)
    failed = handle_validate(good, settings)
    assert failed.result == "error" and failed.status == 200 and failed.verdict is None
    assert failed.review is not None and failed.review["response"] == {
        "uid": "uid-1",
        "allowed": False,
        "status": {
            "status": "Failure",
            "message": "jobguard could not judge this object (internal error, logged)",
            "reason": "BadRequest",
            "code": 400,
        },
    }
    unmutated = handle_mutate(queued, queued_settings())
    assert unmutated.result == "error" and unmutated.review is not None
    assert unmutated.review["response"] == {"uid": "uid-1", "allowed": True}
