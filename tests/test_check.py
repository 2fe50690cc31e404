"""`jobguard check`: reading, pairing, line/column accuracy, outputs and exit codes."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
import xmlschema
import yaml
from fastapi.testclient import TestClient

from jobguard.app.server.app import create_app
from tests.builders import job
from tests.commands import run, write_manifests
from tests.corpus import DATA
from tests.reviews import review

SCHEMAS = Path(__file__).parent / "schemas"

# Several documents (a Job, a ConfigMap, a List of a Job and a CronJob) with anchors and a merge
# key; the tests below name its lines and columns (counted from 1).
ANCHORED = DATA / "check" / "anchored.yaml"


@pytest.fixture
def anchored(tmp_path: Path) -> Path:
    path = tmp_path / "jobs.yaml"
    path.write_text(ANCHORED.read_text())
    return path


def test_text_output_locates_fields(anchored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["check", str(anchored)], capsys)
    assert code == 1
    lines = out.splitlines()
    f = str(anchored)
    assert lines[:-1] == [
        f"{f}:13:9: deny: SP-006 spec.successPolicy.rules[1].succeededIndexes: Invalid value: "
        '"1,0": error parsing succeededIndexes: non-increasing order, previous: 1, current: 0',
        f"{f}:14:9: deny: SP-008 spec.successPolicy.rules[1].succeededCount: Invalid value: 9: "
        "must be less than or equal to 4 (the number of specified completions)",
        f"{f}:14:9: deny: SP-009 spec.successPolicy.rules[1].succeededCount: Invalid value: 9: "
        "must be less than or equal to 0 (the number of indexes in the specified "
        "succeededIndexes field)",
        # the ConfigMap is named, with why it is not judged
        f"{f}:21: v1 ConfigMap not-a-job: not a batch/v1 Job or CronJob: skipped",
        # restartPolicy is absent: the nearest existing ancestor, template.spec, is named.
        f"{f}:34:9: deny: JS-005 spec.template.spec.restartPolicy: Required value: valid "
        'values: "OnFailure", "Never"',
        f"{f}:43:11: deny: CJ-001 spec.jobTemplate.spec.successPolicy: Invalid value: "
        '{"rules":[{"succeededCount":1}]}: requires indexed completion mode',
        # ... found through the merge key `<<: *bare`, in the anchored mapping.
        f"{f}:34:9: deny: CJ-005 spec.jobTemplate.spec.template.spec.restartPolicy: Required "
        'value: valid values: "OnFailure", "Never"',
    ]
    assert lines[-1] == (
        "6 violation(s) (6 deny, 0 warn, 0 dryrun) in 3 checked document(s) of 1 file(s); "
        "1 skipped, 0 error(s)"
    )


def test_json_output_is_exact_and_schema_valid(
    anchored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["check", "--output", "json", str(anchored)], capsys)
    assert code == 1
    body = json.loads(out)
    jsonschema.validate(body, json.loads((SCHEMAS / "check-json.schema.json").read_text()))
    assert body["summary"] == {
        "files": 1,
        "documents": 4,
        "checked": 3,
        "skipped": 1,
        "errors": 0,
        "excluded": 0,
        "violations": 6,
        "deny": 6,
        "warn": 0,
        "dryrun": 0,
        "mutations": 0,
    }
    assert body["skipped"] == [
        {
            "file": str(anchored),
            "document": 1,
            "line": 21,
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "not-a-job",
            "reason": "not a batch/v1 Job or CronJob",
        }
    ]
    assert body["errors"] == [] and body["excluded"] == []
    assert [(r["document"], r["kind"], r["namespace"], r["name"]) for r in body["results"]] == [
        (0, "Job", "default", "indexed"),
        (2, "Job", "default", "no-restart-policy"),
        (3, "CronJob", "default", "nightly"),
    ]
    assert body["results"][0]["violations"][0] == {
        "rule": "SP-006",
        "field": "spec.successPolicy.rules[1].succeededIndexes",
        "type": "FieldValueInvalid",
        "message": 'Invalid value: "1,0": error parsing succeededIndexes: non-increasing order, '
        "previous: 1, current: 0",
        "enforcement": "deny",
        "line": 13,
        "column": 9,
    }


def test_junit_output_is_schema_valid(anchored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["check", "--output", "junit", str(anchored)], capsys)
    schema = xmlschema.XMLSchema(str(SCHEMAS / "junit.xsd"))
    schema.validate(out.split("\n", 1)[1])  # without the XML declaration
    tree: Any = schema.to_dict(out.split("\n", 1)[1])
    suite = tree["testsuite"][0]
    # Counts are of testcases: three judged documents, all failing, and the skipped ConfigMap.
    assert (suite["@tests"], suite["@failures"], suite["@errors"], suite["@skipped"]) == (
        4,
        3,
        0,
        1,
    )
    assert tree["@tests"] == 4 and tree["@failures"] == 3
    assert [len(case.get("failure", [])) for case in suite["testcase"]] == [3, 1, 2, 0]
    assert suite["testcase"][3]["skipped"] == {"@message": "not a batch/v1 Job or CronJob"}


def test_sarif_output_is_schema_valid(anchored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["check", "--output", "sarif", str(anchored)], capsys)
    body = json.loads(out)
    schema = json.loads((SCHEMAS / "sarif-2.1.0-subset.schema.json").read_text())
    jsonschema.validate(body, schema, format_checker=jsonschema.FormatChecker())
    run_ = body["runs"][0]
    assert [r["id"] for r in run_["tool"]["driver"]["rules"]] == [
        "CJ-001",
        "CJ-005",
        "JS-005",
        "SP-006",
        "SP-008",
        "SP-009",
    ]
    first = run_["results"][0]
    assert first["ruleId"] == "SP-006" and first["level"] == "error"
    assert run_["tool"]["driver"]["rules"][first["ruleIndex"]]["id"] == "SP-006"
    assert first["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 13,
        "startColumn": 9,
    }


def test_clean_files_exit_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "ok.json"
    path.write_bytes(orjson.dumps(job()))
    code, out, _ = run(["check", str(tmp_path)], capsys)
    assert code == 0
    assert out.splitlines()[-1].startswith("0 violation(s)")


def test_unparsable_input_exits_2_naming_file_and_line(
    tmp_path: Path, anchored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: batch/v1\nkind: Job\nspec:\n  template: [\n")
    code, out, err = run(["check", str(broken)], capsys)
    assert code == 2
    assert f"{broken}:5: cannot parse YAML" in err
    # Beside a deny-level violation the run exits 1: a deny is never hidden by an input error
    # (a pipeline may tolerate 2), which is still reported.
    code, out, err = run(["check", str(anchored), str(broken)], capsys)
    assert code == 1
    assert f"{broken}:5: cannot parse YAML" in err
    assert "6 violation(s)" in out  # the readable file is still reported
    code, _, err = run(["check", str(tmp_path / "missing.yaml")], capsys)
    assert code == 2 and "missing.yaml: cannot read" in err


def test_stdin_and_list(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = job(
        completionMode="Indexed",
        completions=2,
        parallelism=2,
        successPolicy={"rules": [{"succeededIndexes": "5"}]},
    )
    listing = {"apiVersion": "v1", "kind": "List", "items": [job(), bad]}
    monkeypatch.setattr(sys, "stdin", io.StringIO(yaml.safe_dump(listing)))
    code, out, _ = run(["check", "--output", "json", "-"], capsys)
    body = json.loads(out)
    assert code == 1
    assert body["summary"]["documents"] == 2 and body["summary"]["checked"] == 2
    assert [r["document"] for r in body["results"]] == [0, 1]
    assert body["results"][1]["file"] == "<stdin>"
    assert [v["rule"] for v in body["results"][1]["violations"]] == ["SP-006"]


def test_decode_errors_are_violations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "typed.yaml"
    path.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: t}\nspec:\n  completions: ten\n"
    )
    code, out, _ = run(["check", str(path)], capsys)
    assert code == 1
    assert out.splitlines()[0] == (
        f'{path}:5:3: deny: DEC-001 spec.completions: Invalid value: "string": '
        'spec.completions in body must be of type integer: "string"'
    )


def test_every_wrong_type_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """All wrongly typed fields of a document in one run, worded as the API server words
    them: the ones the decoder reads (DEC-001) and the others (SC-002)."""
    path = tmp_path / "typed.yaml"
    path.write_text(
        "apiVersion: batch/v1\n"
        "kind: Job\n"
        "metadata: {name: t, labels: {tier: 1}}\n"
        "spec:\n"
        "  completions: ten\n"
        '  suspend: "yes"\n'
        "  parallelism: 99999999999\n"
        "  template:\n"
        "    spec:\n"
        "      restartPolicy: Never\n"
        "      containers:\n"
        "        - name: main\n"
        "          image: 5\n"
        "          ports: [{containerPort: '80'}]\n"
    )
    code, out, _ = run(["check", "--output", "json", str(path)], capsys)
    assert code == 1
    (result,) = json.loads(out)["results"]
    assert [
        (v["rule"], v["field"], v["type"], v["message"], v["line"]) for v in result["violations"]
    ] == [
        (
            "DEC-001",
            "metadata.labels[tier]",
            "FieldValueTypeInvalid",
            'Invalid value: "integer": metadata.labels[tier] in body must be of type string: '
            '"integer"',
            3,
        ),
        (
            "DEC-001",
            "spec.completions",
            "FieldValueTypeInvalid",
            'Invalid value: "string": spec.completions in body must be of type integer: "string"',
            5,
        ),
        (
            "DEC-001",
            "spec.suspend",
            "FieldValueTypeInvalid",
            'Invalid value: "string": spec.suspend in body must be of type boolean: "string"',
            6,
        ),
        (
            "DEC-001",
            "spec.parallelism",
            "FieldValueInvalid",
            "Invalid value: 99999999999: spec.parallelism in body should be less than or equal "
            "to 2147483647",
            7,
        ),
        (
            "SC-002",
            "spec.template.spec.containers[0].image",
            "FieldValueTypeInvalid",
            'Invalid value: "integer": spec.template.spec.containers[0].image in body must be of '
            'type string: "integer"',
            13,
        ),
        (
            "SC-002",
            "spec.template.spec.containers[0].ports[0].containerPort",
            "FieldValueTypeInvalid",
            'Invalid value: "string": spec.template.spec.containers[0].ports[0].containerPort in '
            'body must be of type integer: "string"',
            14,
        ),
    ]


# --- --old pairing: UPDATE semantics ----------------------------------------------------------


def test_old_pairs_by_kind_namespace_and_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = job(name="a", suspend=False)
    new = job(name="a", suspend=False)
    new["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "b"}
    other = job(name="b")
    other["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "b"}
    old_file = write_manifests(tmp_path / "old.yaml", old)
    new_file = write_manifests(tmp_path / "new.yaml", new, other)
    code, out, _ = run(["check", "--output", "json", "--old", str(old_file), str(new_file)], capsys)
    body = json.loads(out)
    assert code == 1
    assert [(r["name"], [v["rule"] for v in r["violations"]]) for r in body["results"]] == [
        ("a", ["TM-001"]),
        ("b", []),
    ]
    # a Job suspended before and never started may be re-placed (KEP-2926)
    suspended_old = job(name="a", suspend=True)
    suspended_new = job(name="a", suspend=True)
    suspended_new["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "b"}
    write_manifests(old_file, suspended_old)
    write_manifests(new_file, suspended_new)
    assert run(["check", "--old", str(old_file), str(new_file)], capsys)[0] == 0


def test_status_subresource(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = job()
    old["status"] = {"succeeded": 2, "startTime": "2026-01-01T00:00:00Z"}
    new = job()
    new["status"] = {"succeeded": 1, "startTime": "2026-01-01T00:00:00Z"}
    old_file, new_file = (
        write_manifests(tmp_path / "o.yaml", old),
        write_manifests(tmp_path / "n.yaml", new),
    )
    code, out, _ = run(
        [
            "check",
            "--subresource",
            "status",
            "--output",
            "json",
            "--old",
            str(old_file),
            str(new_file),
        ],
        capsys,
    )
    assert code == 1
    assert [v["field"] for v in json.loads(out)["results"][0]["violations"]] == ["status.succeeded"]


def test_jobs_2_gives_the_same_report(
    tmp_path: Path, anchored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in range(6):
        (tmp_path / f"copy{i}.yaml").write_text(ANCHORED.read_text())
    one = run(["check", "--output", "json", str(tmp_path)], capsys)
    two = run(["check", "--output", "json", "--jobs", "2", str(tmp_path)], capsys)
    assert one == two
    assert json.loads(one[1])["summary"]["files"] == 7


# --- suspend policies as a requester ------------------------------------------------------------

POLICY = """
suspendPolicies:
  - name: queued
    match: {labelSelector: {matchLabels: {kueue.x-k8s.io/queue-name: q}}}
    forceSuspendOnCreate: true
    controllers: {serviceAccounts: ["kueue-system:kueue"]}
"""


def test_policies_judge_as_the_given_user(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(POLICY)
    queued = job(name="q")
    queued["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "q"}
    # CREATE: the cluster's mutating webhook would suspend it, so it is not a violation.
    new_file = write_manifests(tmp_path / "new.yaml", queued)
    assert run(["check", "--config", str(config), str(new_file)], capsys)[0] == 0
    stored = job(name="q", suspend=True)
    stored["metadata"]["labels"] = queued["metadata"]["labels"]
    old_file = write_manifests(tmp_path / "old.yaml", stored)
    code, out, _ = run(
        ["check", "--config", str(config), "--old", str(old_file), str(new_file)], capsys
    )
    assert code == 1 and " SUS-002 spec.suspend: Forbidden: only kueue-system:kueue may " in out
    controller = ["--user", "system:serviceaccount:kueue-system:kueue"]
    assert (
        run(
            ["check", "--config", str(config), *controller, "--old", str(old_file), str(new_file)],
            capsys,
        )[0]
        == 0
    )


# --- the same old/new pairs through check, review and /validate ----------------------------------


def _pairs() -> list[tuple[dict[str, Any] | None, dict[str, Any]]]:
    running = job(name="r")
    running["status"] = {"startTime": "2026-01-01T00:00:00Z", "active": 1}
    moved = job(name="r")
    moved["spec"]["template"]["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    bad_policy = job(
        name="p",
        completionMode="Indexed",
        completions=2,
        parallelism=2,
        successPolicy={"rules": [{"succeededIndexes": "0-2", "succeededCount": 3}]},
    )
    indexed = job(name="i", completionMode="Indexed", completions=2, parallelism=2)
    rescaled = job(name="i", completionMode="Indexed", completions=3, parallelism=2)
    return [(None, bad_policy), (running, moved), (indexed, rescaled), (None, job(name="ok"))]


@pytest.mark.parametrize(("old", "new"), _pairs())
def test_check_review_and_validate_agree(
    tmp_path: Path,
    old: dict[str, Any] | None,
    new: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["check", "--output", "json", write_manifests(tmp_path / "new.yaml", new).as_posix()]
    if old is not None:
        args[1:1] = ["--old", write_manifests(tmp_path / "old.yaml", old).as_posix()]
    _, out, _ = run(args, capsys)
    from_check = [(v["rule"], v["field"]) for v in json.loads(out)["results"][0]["violations"]]

    body = review(new, old, "CREATE" if old is None else "UPDATE")
    (tmp_path / "review.json").write_bytes(orjson.dumps(body))
    _, out, _ = run(["review", str(tmp_path / "review.json")], capsys)
    from_review = json.loads(out)["response"]
    with TestClient(create_app()) as client:
        from_http = client.post("/validate", json=body).json()["response"]
    assert from_review == from_http

    def fields(response: dict[str, Any]) -> list[str]:
        status = response.get("status") or {}
        return list(dict.fromkeys(c["field"] for c in status.get("details", {}).get("causes", [])))

    assert list(dict.fromkeys(f for _, f in from_check)) == fields(from_http)
    annotated = from_http.get("auditAnnotations", {}).get("violations", "")
    assert [r for r, _ in from_check] == [p.split("=")[0] for p in annotated.split(",") if p]
