"""Helpers of the per-area pod-template tables (tests/test_rules_pod_*.py)."""

from __future__ import annotations

from typing import Any

from tests.builders import create, detailed_causes, settings

S = "spec.template.spec"
QUANTITY_FORMAT = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
C0 = f"{S}.containers[0]"


def job(**spec: Any) -> dict[str, Any]:
    """A Job manifest whose pod spec is `spec` (one busybox container unless given)."""
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "busybox"}],
    }
    pod_spec.update(spec)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default"},
        "spec": {"template": {"spec": pod_spec}},
    }


def with_container(**fields: Any) -> dict[str, Any]:
    return job(containers=[{"name": "main", "image": "busybox", **fields}])


def pod_causes(
    obj: dict[str, Any], version: str = "1.35", first: int = 11
) -> list[tuple[str, str, str, str]]:
    """(rule, path, reason, message) of the POD-`first` and later errors of creating `obj`."""
    return [
        cause
        for cause in detailed_causes(create(obj, settings(version)))
        if cause[0].startswith("POD-") and int(cause[0][4:]) >= first
    ]
