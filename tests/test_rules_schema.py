"""The OpenAPI schema rules (SC-001..SC-003): manifests only, per kubernetesVersion, and the
shipped schemas are exactly what scripts/generate_schemas.py makes from kubernetes-validate."""

from __future__ import annotations

import copy
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from jobguard.validators import Operation, Request, Verdict, evaluate
from jobguard.validators.rules.schema import SchemaOptions, check_schema, compiled
from tests.builders import detailed_causes, job, settings

ROOT = Path(__file__).resolve().parents[1]
C0 = "spec.template.spec.containers[0]"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "generate_schemas", ROOT / "scripts" / "generate_schemas.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["generate_schemas"] = module
    spec.loader.exec_module(module)
    return module


def manifest(**container: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default"},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox", **container}],
                }
            }
        },
    }


def check(
    obj: dict[str, Any], version: str = "1.35", kind: str = "Job", manifest: bool = True
) -> Verdict:
    request = Request(kind, Operation.CREATE, obj, namespace="default", manifest=manifest)
    return evaluate(request, settings(version))


@pytest.mark.parametrize("version", ["1.33", "1.34", "1.35", "1.36"])
def test_the_generator_reproduces_the_shipped_schemas(version: str) -> None:
    module = generator()
    assert module.path_for(version).read_text(encoding="utf-8") == module.render(version)


def test_the_generator_check_mode_finds_no_stale_file() -> None:
    assert generator().main(["--check"]) == 0


def test_schemas_compile_once_per_version() -> None:
    assert compiled("1.35") is compiled("1.35")
    assert compiled("1.35") is not compiled("1.36")


def test_unknown_fields_as_strict_field_validation_reports_them() -> None:
    obj = manifest(imagePullPolicyy="Always")
    obj["spec"]["foo"] = 1
    # In document order, as strict decoding meets them.
    assert detailed_causes(check(obj)) == [
        (
            "SC-001",
            f"{C0}.imagePullPolicyy",
            "FieldValueForbidden",
            f'Forbidden: unknown field "{C0}.imagePullPolicyy"',
        ),
        ("SC-001", "spec.foo", "FieldValueForbidden", 'Forbidden: unknown field "spec.foo"'),
    ]


def test_only_manifests_are_judged_against_the_schema() -> None:
    obj = manifest()
    obj["spec"]["foo"] = 1
    assert check(obj, manifest=False).violations == []


def test_types_are_worded_as_openapi_validation_words_them() -> None:
    obj = manifest(ports=[{"containerPort": "80"}], resources={"limits": {"cpu": True}})
    assert detailed_causes(check(obj)) == [
        (
            "SC-002",
            f"{C0}.ports[0].containerPort",
            "FieldValueTypeInvalid",
            f'Invalid value: "string": {C0}.ports[0].containerPort in body must be of type '
            'integer: "string"',
        ),
        (
            "SC-002",
            f"{C0}.resources.limits[cpu]",
            "FieldValueTypeInvalid",
            f'Invalid value: "boolean": {C0}.resources.limits[cpu] in body must be of type '
            'string,number: "boolean"',
        ),
    ]


def test_integer_ranges_and_enumerations() -> None:
    obj = manifest(ports=[{"containerPort": 80, "hostPort": 2**31}])
    assert detailed_causes(check(obj))[0] == (
        "SC-002",
        f"{C0}.ports[0].hostPort",
        "FieldValueInvalid",
        f"Invalid value: 2147483648: {C0}.ports[0].hostPort in body should be less than or equal "
        "to 2147483647",
    )
    obj = manifest()
    obj["apiVersion"] = "batch/v1beta1"
    assert detailed_causes(check(obj)) == [
        (
            "SC-002",
            "apiVersion",
            "FieldValueNotSupported",
            'Unsupported value: "batch/v1beta1": supported values: "batch/v1"',
        )
    ]


def test_required_fields_beside_the_rule_that_judges_the_value() -> None:
    obj = manifest(ports=[{"name": "http"}])
    assert detailed_causes(check(obj)) == [
        ("SC-003", f"{C0}.ports[0].containerPort", "FieldValueRequired", "Required value"),
        ("POD-005", f"{C0}.ports[0].containerPort", "FieldValueRequired", "Required value"),
    ]


def test_fields_the_api_server_accepts_absent_are_not_required() -> None:
    obj = manifest()
    obj["spec"]["podFailurePolicy"] = {}
    obj["spec"]["template"]["spec"]["affinity"] = {
        "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}]}
    }
    assert [v.error.rule for v in check(obj).violations if v.error.rule.startswith("SC")] == []


def test_the_selected_version_decides_which_fields_exist() -> None:
    # env[].valueFrom.fileKeyRef arrived in Kubernetes 1.34.
    env = [
        {
            "name": "TOKEN",
            "valueFrom": {"fileKeyRef": {"volumeName": "v", "path": "p", "key": "TOKEN"}},
        }
    ]
    obj = manifest(env=env)
    path = f"{C0}.env[0].valueFrom.fileKeyRef"
    # (Decoded without it, the valueFrom is empty: POD-014 says so too, as the API server does
    # without strict field validation.)
    assert [c for c in detailed_causes(check(obj, "1.33")) if c[0].startswith("SC")] == [
        ("SC-001", path, "FieldValueForbidden", f'Forbidden: unknown field "{path}"')
    ]
    assert [v for v in check(obj, "1.34").violations if v.error.rule.startswith("SC")] == []


def test_objects_as_the_api_server_prints_them_conform() -> None:
    stored = job()
    stored["metadata"] |= {
        "creationTimestamp": None,
        "resourceVersion": "1",
        "managedFields": [
            {
                "manager": "kubectl",
                "operation": "Update",
                "apiVersion": "batch/v1",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {"f:template": {}}},
            }
        ],
    }
    stored["status"] = {"active": 1, "startTime": "2026-01-01T10:00:00Z", "ready": 0}
    for version in ("1.33", "1.34", "1.35", "1.36"):
        assert check_schema(stored, None, "object", SchemaOptions("Job", version)) == []


def test_cronjob_schema() -> None:
    obj: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": "default"},
        "spec": {"schedule": "@daily", "jobTemplate": {"spec": manifest()["spec"]}, "every": "day"},
    }
    assert detailed_causes(check(obj, kind="CronJob")) == [
        ("SC-001", "spec.every", "FieldValueForbidden", 'Forbidden: unknown field "spec.every"')
    ]
    del obj["spec"]["every"]
    del obj["spec"]["jobTemplate"]
    assert (
        "SC-003",
        "spec.jobTemplate",
        "FieldValueRequired",
        "Required value",
    ) in detailed_causes(check(obj, kind="CronJob"))


def test_absurd_nesting_is_an_error_not_a_crash() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(100_000):
        node["a"] = {}
        node = node["a"]
    obj = copy.deepcopy(manifest())
    obj["spec"]["foo"] = deep
    assert check_schema(obj, None, "object", SchemaOptions("Job", "1.35"))[0].body() == (
        "Invalid value: is nested too deeply to be validated"
    )
