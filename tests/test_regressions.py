"""Inputs found by review and fuzzing: each once crashed or misjudged."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from jobguard.app.admission.review import handle_validate
from jobguard.app.cli.main import main
from jobguard.validators import Enforcement, Settings
from jobguard.validators.settings import RuleOverride
from tests.builders import START, cond, create, job, status_update, update, with_status
from tests.reviews import review


def judged(body: dict, settings: Settings | None = None) -> dict:
    outcome = handle_validate(orjson.dumps(body), settings or Settings())
    assert outcome.status == 200 and outcome.review is not None
    assert "could not judge" not in orjson.dumps(outcome.review).decode()
    response: dict = dict(outcome.review["response"])
    return response


def test_wrongly_typed_pod_failure_policy_is_a_400_naming_the_field() -> None:
    obj = job(
        podReplacementPolicy="Failed",
        podFailurePolicy={
            "rules": [
                {
                    "action": "FailJob",
                    "onExitCodes": {"containerName": ["main"], "operator": "In", "values": [1]},
                }
            ]
        },
    )
    response = judged(review(obj))
    assert response["allowed"] is False and response["status"]["code"] == 400
    assert response["status"]["details"]["causes"][0]["field"] == (
        "spec.podFailurePolicy.rules[0].onExitCodes.containerName"
    )


HUGE_OR_BAD = ["99e999999", "1e1000000", "-1e1000000", "1e1234567", "1e", "1" * 5000 + "k"]


@pytest.mark.parametrize("cpu", [c for c in HUGE_OR_BAD if not c.startswith("-")])
def test_unusable_quantities_do_not_crash_comparisons(cpu: str) -> None:
    old = job(suspend=True)
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu
    response = judged(review(new, old, "UPDATE"))
    assert response["status"]["details"]["causes"][0]["field"] == "spec.template"


@pytest.mark.parametrize("cpu", HUGE_OR_BAD)
def test_huge_quantities_are_judged_by_the_pod_rules(cpu: str) -> None:
    # ParseQuantity reads 1e1234567 as a number; only "1e" (ErrSuffix) does not parse, and a
    # negative one is POD-008's (the minus sign overflowed Decimal's default context once).
    obj = job()
    obj["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu}}
    fields = {v.error.path for v in create(obj).violations}
    resource = "spec.template.spec.containers[0].resources.requests[cpu]"
    assert fields == ({resource} if cpu in ("1e", "-1e1000000") else set())


@pytest.mark.parametrize("value", ["2026-01-01T11:00:00", 1767261600, "yesterday"])
def test_timestamps_must_be_rfc3339_with_a_zone(value: object) -> None:
    old = with_status(job(), startTime=START, active=1)
    new = with_status(
        job(),
        startTime=START,
        completionTime=value,
        conditions=[cond("SuccessCriteriaMet"), cond("Complete")],
    )
    response = judged(review(new, old, "UPDATE", sub="status"))
    assert response["status"]["code"] == 400
    assert "status.completionTime" in response["status"]["message"]


@pytest.mark.parametrize("key", ["job-name", "batch.kubernetes.io/job-name"])
def test_selector_naming_the_job_is_auto_generated_enough(key: str) -> None:
    obj = job()
    obj["spec"]["selector"]["matchLabels"][key] = "pi"
    assert create(obj).violations == []


def test_job_controller_resume_is_allowed_on_the_default_version() -> None:
    old = with_status(job(), startTime=START, conditions=[cond("Suspended")])
    new = with_status(
        job(), startTime="2026-01-01T12:00:00Z", conditions=[cond("Suspended", "False")]
    )
    assert status_update(new, old).violations == []


@pytest.mark.parametrize(
    "mangle",
    [
        lambda o: o.__setitem__("metadata", "garbage"),
        lambda o: o["spec"].__setitem__("selector", "abc"),
        lambda o: o["spec"].__setitem__("selector", {"matchLabels": "x"}),
        lambda o: o["spec"]["template"].__setitem__("metadata", "x"),
        lambda o: o["spec"]["template"].__setitem__("metadata", {"labels": [1, 2]}),
    ],
)
def test_wrong_types_in_manifests_are_not_papered_over(mangle) -> None:
    manifest: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "m"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": []}}},
    }
    manifest["spec"]["selector"] = None
    mangle(manifest)
    verdict = create(manifest)
    assert verdict.decode_error is not None and not verdict.allowed


def test_stored_job_against_its_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "m", "namespace": "default"},
        "spec": {
            "suspend": False,
            "podFailurePolicy": {
                "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
            },
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "c",
                            "image": "busybox",
                            "ports": [{"containerPort": 80}],
                            "env": [
                                {
                                    "name": "N",
                                    "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                                }
                            ],
                        }
                    ],
                    "volumes": [{"name": "v", "configMap": {"name": "cm"}}],
                }
            },
        },
    }
    stored = copy.deepcopy(manifest)
    stored["metadata"].update(
        uid="u-1", creationTimestamp="2026-01-01T00:00:00Z", resourceVersion="42", generation=1
    )
    stored["spec"].update(
        completions=1,
        parallelism=1,
        backoffLimit=6,
        completionMode="NonIndexed",
        podReplacementPolicy="Failed",
        manualSelector=False,
        selector={"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}},
    )
    stored["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"] = "True"
    template = stored["spec"]["template"]
    template["metadata"] = {
        "creationTimestamp": None,
        "labels": {
            "controller-uid": "u-1",
            "batch.kubernetes.io/controller-uid": "u-1",
            "job-name": "m",
            "batch.kubernetes.io/job-name": "m",
        },
    }
    pod = template["spec"]
    pod.update(
        dnsPolicy="ClusterFirst",
        schedulerName="default-scheduler",
        securityContext={},
        terminationGracePeriodSeconds=30,
    )
    container = pod["containers"][0]
    container.update(
        imagePullPolicy="Always",
        resources={},
        terminationMessagePath="/dev/termination-log",
        terminationMessagePolicy="File",
    )
    container["ports"][0]["protocol"] = "TCP"
    container["env"][0]["valueFrom"]["fieldRef"]["apiVersion"] = "v1"
    pod["volumes"][0]["configMap"]["defaultMode"] = 420
    stored["status"] = {"startTime": START, "active": 1}
    assert update(manifest, stored).violations == []
    old_file, new_file = tmp_path / "stored.yaml", tmp_path / "new.yaml"
    old_file.write_text(yaml.safe_dump(stored))
    new_file.write_text(yaml.safe_dump(manifest))
    assert main(["check", "--old", str(old_file), str(new_file)]) == 0
    capsys.readouterr()


def test_warnings_escape_control_characters() -> None:
    old = with_status(
        job(completionMode="Indexed", completions=3, parallelism=3), startTime=START, active=1
    )
    new = with_status(old, startTime=START, active=1, completedIndexes="0,\n")
    warn = Settings(overrides=(("ST-*", RuleOverride(enforcement=Enforcement.WARN)),))
    response = judged(review(new, old, "UPDATE", sub="status"), warn)
    assert response["allowed"] is True
    assert response["warnings"] == [
        "ST-023 status.completedIndexes: error parsing completedIndexes: cannot convert string "
        'to integer for index: "\\x0a"'
    ]


def test_deeply_nested_unknown_fields_are_judged_not_crashed() -> None:
    """Refused (it meets Python's recursion limit), never an internal error."""
    old = job(suspend=True)
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["extra"] = "DEEP"
    depth = 1000  # below orjson's nesting limit, above what recursion comfortably handles
    body = orjson.dumps(review(new, old, "UPDATE")).replace(
        b'"DEEP"', b'{"x":' * depth + b"{}" + b"}" * depth
    )
    outcome = handle_validate(body, Settings())
    assert outcome.status in (200, 400)
    assert "could not judge" not in orjson.dumps(outcome.payload).decode()
    if outcome.review is not None:
        response = outcome.review["response"]
        assert response["allowed"] is False
        assert response["status"]["code"] in (400, 422)
