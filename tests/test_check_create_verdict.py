"""`jobguard check` gives the API server's create verdict: the examples of manifests that used to
pass although the API server refuses them, through the command line in-process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.commands import run


def job_yaml(name: str, containers: str = "[{name: main, image: busybox}]") -> str:
    """A Job manifest that differs from a valid one only in its name or containers."""
    return f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: {containers}
"""


def cronjob_yaml(name: str, *spec: str) -> str:
    """A CronJob manifest whose spec begins with the `spec` lines, the first on line 6."""
    lines = "".join(f"  {line}\n" for line in spec)
    return f"""
apiVersion: batch/v1
kind: CronJob
metadata: {{name: {name}}}
spec:
{lines}  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{{name: main, image: busybox}}]
"""


# Each example breaks one rule the API server enforces on create.
EXAMPLES = {
    "uppercase-name.yaml": (job_yaml("Train-Model"), [("OM-001", "metadata.name")]),
    "no-containers.yaml": (
        job_yaml("empty", containers="[]"),
        [("POD-001", "spec.template.spec.containers")],
    ),
    "no-image.yaml": (
        job_yaml("imageless", containers="[{name: main}]"),
        [("POD-003", "spec.template.spec.containers[0].image")],
    ),
    "every-day.yaml": (
        cronjob_yaml("nightly", "schedule: every day"),
        [("CS-001", "spec.schedule")],
    ),
    "mars.yaml": (
        cronjob_yaml("olympus", 'schedule: "0 3 * * *"', "timeZone: Mars/Olympus"),
        [("CS-002", "spec.timeZone")],
    ),
    "sometimes.yaml": (
        cronjob_yaml("sometimes", 'schedule: "@hourly"', "concurrencyPolicy: Sometimes"),
        [("CS-003", "spec.concurrencyPolicy")],
    ),
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_each_example_fails_the_check_with_its_rule(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, expected = EXAMPLES[name]
    path = tmp_path / name
    path.write_text(text)
    code, out, _ = run(["check", "--output", "json", str(path)], capsys)
    assert code == 1
    (result,) = orjson.loads(out)["results"]
    assert [(v["rule"], v["field"]) for v in result["violations"]] == expected
    assert all(v["enforcement"] == "deny" for v in result["violations"])


def test_all_examples_at_once_in_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, (text, _) in EXAMPLES.items():
        (tmp_path / name).write_text(text)
    code, out, _ = run(["check", str(tmp_path)], capsys)
    assert code == 1
    assert (
        f'{tmp_path / "mars.yaml"}:7:3: deny: CS-002 spec.timeZone: Invalid value: "Mars/Olympus": '
        "unknown time zone Mars/Olympus"
    ) in out.splitlines()
    assert (
        f'{tmp_path / "every-day.yaml"}:6:3: deny: CS-001 spec.schedule: Invalid value: "every day": '
        "expected exactly 5 fields, found 2: [every day]"
    ) in out.splitlines()
    assert "6 violation(s) (6 deny, 0 warn, 0 dryrun) in 6 checked document(s)" in out


def test_an_unknown_field_fails_the_check_and_follows_kubernetes_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(
        """
apiVersion: batch/v1
kind: Job
metadata: {name: typo}
spec:
  backofLimit: 3
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
"""
    )
    code, out, _ = run(["check", "--output", "json", str(path)], capsys)
    assert code == 1
    (violation,) = orjson.loads(out)["results"][0]["violations"]
    assert violation == {
        "rule": "SC-001",
        "field": "spec.backofLimit",
        "type": "FieldValueForbidden",
        "message": 'Forbidden: unknown field "spec.backofLimit"',
        "enforcement": "deny",
        "line": 6,
        "column": 3,
    }


def test_rules_can_be_rolled_out_as_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "jobguard.yaml"
    config.write_text('rules:\n  "SC-*": {enforcement: warn}\n  "CS-*": {enabled: false}\n')
    text, _ = EXAMPLES["sometimes.yaml"]
    manifest = tmp_path / "cron.yaml"
    manifest.write_text(text.replace("kind: CronJob", "kind: CronJob\nextra: 1"))
    code, out, _ = run(
        ["check", "--config", str(config), "--output", "json", str(manifest)], capsys
    )
    assert code == 0
    violations: list[dict[str, Any]] = orjson.loads(out)["results"][0]["violations"]
    assert [(v["rule"], v["field"], v["enforcement"]) for v in violations] == [
        ("SC-001", "extra", "warn")
    ]


def test_old_documents_stand_in_for_stored_objects_and_are_not_schema_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, _ = EXAMPLES["sometimes.yaml"]
    valid = text.replace("concurrencyPolicy: Sometimes", "concurrencyPolicy: Forbid")
    old = tmp_path / "old.yaml"
    old.write_text(valid.replace("spec:\n  schedule", "spec:\n  legacyField: 1\n  schedule", 1))
    new = tmp_path / "new.yaml"
    new.write_text(valid)
    code, out, _ = run(["check", "--old", str(old), "--output", "json", str(new)], capsys)
    assert code == 0
    assert orjson.loads(out)["results"][0]["violations"] == []
