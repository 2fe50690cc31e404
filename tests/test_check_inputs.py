"""`jobguard check` never lies: every document judged, skipped and named, or an error; every
output format carries all of it; immutability findings say what changed; `--exclude` and
Helm templates."""

from __future__ import annotations

import copy
import io
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
import xmlschema
import yaml

from jobguard.app.admission.review import handle_validate
from jobguard.app.cli.manifests import collect, excluded_by
from jobguard.app.config import ConfigError, parse_config
from jobguard.validators.errors import immutable
from tests.builders import START, job, with_status
from tests.commands import run, write_manifests
from tests.reviews import review
from tests.test_check import POLICY

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = Path(__file__).parent / "schemas"

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: ok
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
"""


def valid_json(out: str) -> dict[str, Any]:
    """The JSON report, checked against its schema."""
    body: dict[str, Any] = json.loads(out)
    jsonschema.validate(body, json.loads((SCHEMAS / "check-json.schema.json").read_text()))
    return body


def valid_sarif(out: str) -> dict[str, Any]:
    """The SARIF log, checked against the subset of SARIF 2.1.0 it uses."""
    body: dict[str, Any] = json.loads(out)
    schema = json.loads((SCHEMAS / "sarif-2.1.0-subset.schema.json").read_text())
    jsonschema.validate(body, schema, format_checker=jsonschema.FormatChecker())
    return body


def valid_junit(out: str) -> Any:
    """The JUnit XML report, checked against junit.xsd, as a dict."""
    schema = xmlschema.XMLSchema(str(SCHEMAS / "junit.xsd"))
    xml = out.split("\n", 1)[1]  # without the XML declaration
    schema.validate(xml)
    return schema.to_dict(xml)


def check_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code, out, _ = run(["check", "--output", "json", *args], capsys)
    return code, valid_json(out)


def sarif_run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code, out, _ = run(["check", "--output", "sarif", *args], capsys)
    run_: dict[str, Any] = valid_sarif(out)["runs"][0]
    return code, run_


def junit_suite(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    _, out, _ = run(["check", "--output", "junit", *args], capsys)
    suite: dict[str, Any] = valid_junit(out)["testsuite"][0]
    return suite


# --- 1. nothing passes silently ------------------------------------------------------------------

LOOKALIKES = """\
apiVersion: batch/v1beta1
kind: CronJob
metadata: {name: legacy}
---
apiVersion: batch/v1
kind: job
metadata: {name: lower}
---
apiVersion: batch/v2alpha1
kind: Job
metadata: {name: future}
---
apiVersion: v1
kind: Job
metadata: {name: core}
---
kind: CronJob
metadata: {name: versionless}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: volcano}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
"""


def test_lookalikes_are_errors_with_kubectls_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "jobs.yaml"
    path.write_text(LOOKALIKES + "---\n" + JOB)
    code, body = check_json([str(path)], capsys)
    assert code == 2
    mapping = 'resource mapping not found for name: "{}" namespace: "" from "' + str(path) + '": '
    hint = "\nensure CRDs are installed first"
    assert [(e["line"], e["document"], e["message"]) for e in body["errors"]] == [
        (
            2,
            0,
            mapping.format("legacy")
            + 'no matches for kind "CronJob" in version "batch/v1beta1"'
            + hint,
        ),
        (6, 1, mapping.format("lower") + 'no matches for kind "job" in version "batch/v1"' + hint),
        (
            10,
            2,
            mapping.format("future")
            + 'no matches for kind "Job" in version "batch/v2alpha1"'
            + hint,
        ),
        (14, 3, mapping.format("core") + 'no matches for kind "Job" in version "v1"' + hint),
        (17, 4, 'apiVersion not set for kind "CronJob" (Job and CronJob are batch/v1)'),
    ]
    # A Job of another API group (Volcano's) and a ConfigMap are skipped, and named.
    assert [(s["document"], s["apiVersion"], s["kind"], s["name"]) for s in body["skipped"]] == [
        (5, "batch.volcano.sh/v1alpha1", "Job", "volcano"),
        (6, "v1", "ConfigMap", "settings"),
    ]
    # The real Job is still judged.
    assert [(r["document"], r["name"], r["violations"]) for r in body["results"]] == [(7, "ok", [])]
    assert body["summary"]["documents"] == 8 and body["summary"]["errors"] == 5


def test_lookalikes_in_text_and_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "legacy.yaml"
    path.write_text(LOOKALIKES.split("---\n")[0])
    code, out, err = run(["check", str(path)], capsys)
    assert code == 2
    kubectl = (
        f'resource mapping not found for name: "legacy" namespace: "" from "{path}": '
        'no matches for kind "CronJob" in version "batch/v1beta1"\nensure CRDs are installed first'
    )
    assert out.splitlines() == [
        *f"{path}:2: error: {kubectl}".splitlines(),
        "0 violation(s) (0 deny, 0 warn, 0 dryrun) in 0 checked document(s) of 1 file(s); "
        "0 skipped, 1 error(s)",
    ]
    assert err == f"jobguard: {path}:2: {kubectl}\n"


def test_empty_stdin_is_an_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code, body = check_json(["-"], capsys)
    assert code == 2
    assert body["errors"] == [
        {"file": "<stdin>", "line": 0, "document": None, "message": "no documents (empty input)"}
    ]
    # Only empty documents (a chart whose templates all rendered to nothing) are empty too.
    monkeypatch.setattr(sys, "stdin", io.StringIO("---\n# Source: c/templates/job.yaml\n---\n"))
    code, out, _ = run(["check", "-"], capsys)
    assert code == 2 and out.startswith("<stdin>: error: no documents (empty input)\n")


def test_empty_directories_are_errors_and_empty_files_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty_dir = tmp_path / "nothing"
    empty_dir.mkdir()
    (empty_dir / "README.md").write_text("not a manifest\n")
    empty_file = tmp_path / "empty.yaml"
    empty_file.write_text("# nothing yet\n")
    good = tmp_path / "good.yaml"
    good.write_text(JOB)
    code, body = check_json([str(empty_dir), str(empty_file), str(good)], capsys)
    assert code == 2
    assert [(e["file"], e["message"]) for e in body["errors"]] == [
        (str(empty_dir), "no manifest files (*.yaml, *.yml, *.json)"),
    ]
    assert [(s["file"], s["line"], s["reason"]) for s in body["skipped"]] == [
        (str(empty_file), 0, "no Kubernetes object (empty, or only comments)"),
    ]
    assert [r["name"] for r in body["results"]] == ["ok"]


def test_a_broken_document_leaves_the_others_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text(JOB + "---\nspec:\n  template: [\n---\n" + JOB.replace("name: ok", "name: b"))
    code, body = check_json([str(path)], capsys)
    assert code == 2
    assert [r["name"] for r in body["results"]] == ["ok", "b"]
    (error,) = body["errors"]
    assert error["file"] == str(path) and error["line"] == 13
    assert error["message"].startswith("cannot parse YAML: ")


# --- 2. every output format carries everything --------------------------------------------------


def test_sarif_carries_input_errors_and_skipped_documents(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: batch/v1\nkind: Job\nspec:\n  template: [\n")
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n" + JOB)
    code, run_ = sarif_run([str(broken), str(mixed)], capsys)
    assert code == 2
    (invocation,) = run_["invocations"]
    assert invocation["executionSuccessful"] is False
    notifications = invocation["toolExecutionNotifications"]
    assert [
        (
            n["level"],
            n["descriptor"]["id"],
            n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            n["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for n in notifications
    ] == [
        ("error", "input-error", str(broken), 5),
        ("note", "skipped", str(mixed), 2),
    ]
    assert notifications[0]["message"]["text"].startswith("cannot parse YAML: ")
    assert notifications[1]["message"]["text"] == (
        "v1 ConfigMap c: not a batch/v1 Job or CronJob: skipped"
    )
    assert run_["results"] == []


def test_sarif_invocation_succeeds_when_everything_was_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(JOB)
    code, run_ = sarif_run([str(path)], capsys)
    assert code == 0
    assert run_["invocations"] == [{"executionSuccessful": True, "toolExecutionNotifications": []}]


def test_junit_counts_are_exact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = JOB.replace("restartPolicy: Never", "restartPolicy: Always").replace(
        "name: ok", "name: b"
    )
    path = tmp_path / "jobs.yaml"
    path.write_text(
        JOB + "---\n" + bad + "---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n"
        "---\napiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c}\n"
    )
    suite = junit_suite([str(path)], capsys)
    # 2 judged (1 failing), 1 skipped, 1 error: testcases, not violations, are counted.
    assert (suite["@tests"], suite["@failures"], suite["@errors"], suite["@skipped"]) == (
        4,
        1,
        1,
        1,
    )
    cases = suite["testcase"]
    assert [sorted(k for k in case if not k.startswith("@")) for case in cases] == [
        [],
        ["failure"],
        ["skipped"],
        ["error"],
    ]
    assert cases[3]["error"][0]["@message"].endswith(
        'no matches for kind "CronJob" in version "batch/v1beta1"\nensure CRDs are installed first'
    )


ENFORCEMENTS = """\
rules:
  JS-005: {enforcement: warn}
  OM-001: {enforcement: dryrun}
"""


def test_text_marks_each_line_with_its_enforcement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(ENFORCEMENTS)
    path = tmp_path / "job.yaml"
    path.write_text(
        JOB.replace("name: ok", "name: Upper")
        .replace("      restartPolicy: Never\n", "")
        .replace("image: busybox", "image: busybox, imagePullPolicy: Sometimes")
    )
    code, out, _ = run(["check", "--config", str(config), str(path)], capsys)
    assert code == 1
    marks = [re.sub(r"^.*?:\d+:\d+: (\w+): (\S+) .*$", r"\1 \2", line) for line in out.splitlines()]
    # validateJobSpec checks the restart policy after ValidatePodTemplateSpec.
    assert marks[:-1] == ["dryrun OM-001", "deny POD-004", "warn JS-005"]
    assert out.splitlines()[-1].startswith("3 violation(s) (1 deny, 1 warn, 1 dryrun)")


# --- 4. actionable output -------------------------------------------------------------------------


def test_template_changes_are_named_in_check_but_not_in_the_webhook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = with_status(job(), startTime=START, active=1)
    old["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "IfNotPresent"
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:1.37"
    new["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "b"}
    old_file, new_file = (
        write_manifests(tmp_path / "old.yaml", old),
        write_manifests(tmp_path / "new.yaml", new),
    )
    code, body = check_json(["--old", str(old_file), str(new_file)], capsys)
    assert code == 1
    (violation,) = body["results"][0]["violations"]
    assert violation["rule"] == "TM-001"
    assert violation["changes"] == [
        {
            "field": "spec.template.spec.containers[0].image",
            "old": "busybox",
            "new": "busybox:1.37",
        },
        {"field": "spec.template.spec.nodeSelector", "new": {"zone": "b"}},
    ]
    # The message itself is upstream's, whole template and all, as the webhook answers it.
    expected = immutable("TM-001", "spec.template", new["spec"]["template"]).body()
    assert violation["message"] == expected
    _, out, _ = run(["check", "--old", str(old_file), str(new_file)], capsys)
    assert out.splitlines()[0].endswith(
        ": deny: TM-001 spec.template: Invalid value: field is immutable; differs: "
        'spec.template.spec.containers[0].image ("busybox" -> "busybox:1.37"), '
        "spec.template.spec.nodeSelector (added)"
    )
    response = handle_validate(
        orjson.dumps(review(new, old, "UPDATE")), parse_config("{}").to_settings()
    )
    assert response.review is not None
    status = response.review["response"]["status"]
    assert status["code"] == 422
    assert status["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": expected, "field": "spec.template"}
    ]
    assert "differs" not in status["message"]


def test_immutable_fields_say_old_and_new(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = job(name="i", completionMode="NonIndexed", completions=2, parallelism=2)
    new = job(name="i", completionMode="NonIndexed", completions=3, parallelism=2)
    new["spec"]["selector"]["matchLabels"]["extra"] = "x"
    old_file, new_file = (
        write_manifests(tmp_path / "old.yaml", old),
        write_manifests(tmp_path / "new.yaml", new),
    )
    _, body = check_json(["--old", str(old_file), str(new_file)], capsys)
    changes = {v["rule"]: v.get("changes") for v in body["results"][0]["violations"]}
    assert changes["IM-001"] == [{"field": "spec.selector.matchLabels.extra", "new": "x"}]
    assert changes["IM-002"] == [{"field": "spec.completions", "old": 2, "new": 3}]


def test_a_policys_mutation_is_shown_in_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(POLICY)
    path = tmp_path / "job.yaml"
    path.write_text(
        JOB.replace("  name: ok\n", "  name: q\n  labels: {kueue.x-k8s.io/queue-name: q}\n")
    )
    message = 'spec.suspend would be set to true by policy "queued"'
    args = ["--config", str(config), str(path)]
    code, out, _ = run(["check", *args], capsys)
    assert code == 0
    # spec.suspend is absent: its nearest ancestor, spec, is named.
    assert out.splitlines()[0] == f"{path}:6:1: mutation: {message}"
    _, body = check_json(args, capsys)
    assert body["results"][0]["mutations"] == [
        {
            "field": "spec.suspend",
            "value": True,
            "policy": "queued",
            "message": message,
            "line": 6,
            "column": 1,
        }
    ]
    assert body["summary"]["mutations"] == 1
    _, run_ = sarif_run(args, capsys)
    (note,) = run_["invocations"][0]["toolExecutionNotifications"]
    assert (note["level"], note["descriptor"]["id"], note["message"]["text"]) == (
        "note",
        "mutation",
        message,
    )
    suite = junit_suite(args, capsys)
    assert suite["testcase"][0]["system-out"] == f"mutation: {message}"


# --- --exclude and Helm templates ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "pattern", "excluded"),
    [
        ("charts/app/templates/job.yaml", "templates", True),
        ("charts/app/templates/job.yaml", "charts/*/templates", True),
        ("charts/app/templates/job.yaml", "*.yaml", True),
        ("charts/app/templates/job.yaml", "job.yaml", True),
        ("./deploy/job.yaml", "deploy/*", True),
        ("deploy/job.yaml", "templates", False),
        ("deploy/job.yaml", "*.yml", False),
        ("deploy/templates-old/job.yaml", "templates", False),
    ],
)
def test_exclude_globs(path: str, pattern: str, excluded: bool) -> None:
    assert (excluded_by(path, [pattern]) == pattern) is excluded


def test_exclude_leaves_files_out_and_names_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "job.yaml").write_text(JOB)
    (tmp_path / "deploy" / "broken.yaml").write_text("a: [\n")
    inputs = collect([str(tmp_path)], ["broken.yaml"])
    assert inputs.files == [str(tmp_path / "deploy" / "job.yaml")]
    assert inputs.excluded == [str(tmp_path / "deploy" / "broken.yaml")]
    code, body = check_json(["--exclude", "broken.yaml", str(tmp_path)], capsys)
    assert code == 0
    assert body["excluded"] == [str(tmp_path / "deploy" / "broken.yaml")]
    assert body["summary"]["excluded"] == 1
    # Files named directly (as pre-commit passes them) are excluded too; nothing left is fine.
    code, out, _ = run(
        ["check", "--exclude", "deploy", str(tmp_path / "deploy" / "broken.yaml")], capsys
    )
    assert code == 0
    assert out.splitlines()[-1].endswith("0 skipped, 0 error(s), 1 excluded")


HELM_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-migrate
  labels:
    {{- include "app.labels" . | nindent 4 }}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: "{{ .Values.image }}"
"""


def test_helm_templates_are_skipped_not_syntax_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(JOB + "---\n" + HELM_JOB)
    code, out, _ = run(["check", str(path)], capsys)
    assert code == 0
    assert out.splitlines()[0] == f"{path}:11: template, not plain YAML: skipped"
    _, body = check_json([str(path)], capsys)
    assert body["skipped"] == [
        {
            "file": str(path),
            "document": None,
            "line": 11,
            "apiVersion": "",
            "kind": "",
            "name": "",
            "reason": "template, not plain YAML",
        }
    ]


def test_chart_templates_are_templates_even_when_they_parse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 0.1.0\n")
    parses = HELM_JOB.replace("{{ .Release.Name }}-migrate", "'{{ .Release.Name }}-migrate'")
    parses = parses.replace('    {{- include "app.labels" . | nindent 4 }}\n', "    app: x\n")
    assert yaml.safe_load(parses)["metadata"]["name"] == "{{ .Release.Name }}-migrate"
    (chart / "templates" / "job.yaml").write_text(parses)
    code, body = check_json([str(chart)], capsys)
    assert code == 0
    assert [(s["file"], s["reason"]) for s in body["skipped"]] == [
        (str(chart / "Chart.yaml"), "not a Kubernetes object (no kind)"),
        (str(chart / "templates" / "job.yaml"), "template, not plain YAML"),
    ]
    # Outside a chart, the same text is plain YAML: judged (and its name refused).
    plain = tmp_path / "plain.yaml"
    plain.write_text(parses)
    code, body = check_json([str(plain)], capsys)
    assert code == 1 and body["results"][0]["violations"][0]["rule"] == "OM-001"


def test_the_pre_commit_hook_leaves_chart_templates_out() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    files, exclude = re.compile(hook["files"]), re.compile(hook["exclude"])

    def selected(path: str) -> bool:
        return files.search(path) is not None and exclude.search(path) is None

    assert selected("deploy/jobs/nightly.yaml") and selected("batch.json")
    assert not selected("charts/app/templates/job.yaml")
    assert not selected("templates/cronjob.yml")
    assert not selected("deploy/app/templates/nested/job.yaml")


# --- configuration errors, all at once ----------------------------------------------------------


def test_configuration_errors_all_at_once() -> None:
    text = (
        "kubernetesVersion: '1.35'\n"
        "enforcement: sometimes\n"
        "rules:\n"
        "  NE-001: {enabled: 'maybe'}\n"
        "  TM-001: {enforcement: warn, bogus: 1}\n"
    )
    with pytest.raises(ConfigError) as info:
        parse_config(text, "c.yaml")
    assert str(info.value).splitlines() == [
        "c.yaml:2: enforcement: Input should be 'deny', 'warn' or 'dryrun'",
        'c.yaml:4: rules.NE-001.enabled: must be of type boolean: "string"',
        "c.yaml:5: rules.TM-001.bogus: Extra inputs are not permitted",
    ]


ODD_INPUTS = {
    "binary.yaml": b"\xff\xfe\x00bad",
    "deep.yaml": ("a: " + "[" * 3000 + "]" * 3000 + "\n").encode(),
    "kind-list.yaml": b"kind: [Job]\napiVersion: {a: 1}\n",
    "shapes.yaml": b"apiVersion: batch/v1\nkind: Job\nmetadata: [1]\nspec: 5\n",
    "big.yaml": b"apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec: {completions: 1e999}\n",
    "list.yaml": b"- 1\n- 2\n",
    "items.yaml": b"apiVersion: v1\nkind: List\nitems: [5, {apiVersion: batch/v1beta1, kind: CronJob}]\n",
    "template.yaml": b"{{ .Values.x }}\n",
}


@pytest.mark.parametrize("output", ["text", "json", "junit", "sarif"])
def test_odd_inputs_never_crash_any_format(
    output: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, content in ODD_INPUTS.items():
        (tmp_path / name).write_bytes(content)
    code, out, err = run(["check", "--output", output, str(tmp_path)], capsys)
    # Some odd inputs are Jobs with deny-level violations: they decide the exit code (1); the
    # input errors are reported all the same.
    assert code == 1 and "Traceback" not in err and "cannot read" in err
    # Every machine-readable report stays valid against its schema.
    readers: dict[str, Callable[[str], Any]] = {
        "text": str,
        "json": valid_json,
        "sarif": valid_sarif,
        "junit": valid_junit,
    }
    report = readers[output](out)
    if output == "json":
        assert [(Path(e["file"]).name, e["line"]) for e in report["errors"]] == [
            ("binary.yaml", 0),
            ("deep.yaml", 1),  # nested deeper than manifests.MAX_DEPTH
            ("items.yaml", 3),
        ]
        assert report["summary"]["files"] == len(ODD_INPUTS)


# --- what `check` reads: regular files, up to a size -------------------------------------------


def test_special_files_are_refused_unread_named_or_found(tmp_path: Path) -> None:
    """A FIFO (a read would wait for a writer forever), /dev/zero behind a symlink (a read would
    never end) and a socket: one line each, exit 2, nothing read; named or in a directory."""
    found = tmp_path / "repo"
    found.mkdir()
    (found / "good.yaml").write_text(JOB)
    os.mkfifo(found / "fifo.yaml")
    (found / "zero.yaml").symlink_to("/dev/zero")
    (found / "dangling.yaml").symlink_to(tmp_path / "nowhere")  # not a file: passed over
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(found / "socket.json"))
        refused = {
            "fifo.yaml": "a FIFO",
            "zero.yaml": "a character device",
            "socket.json": "a socket",
        }
        named = [str(found / name) for name in refused]
        # In a process of its own, bounded: a regression would hang or fill memory.
        command = [sys.executable, "-m", "jobguard", "check", "--output", "json"]
        for args, order, judged in (
            (named, list(refused), []),
            ([str(found)], sorted(refused), ["ok"]),
        ):
            done = subprocess.run(
                [*command, *args], capture_output=True, text=True, timeout=60, cwd=ROOT
            )
            assert done.returncode == 2
            assert done.stderr.splitlines() == [
                f"jobguard: {found / name}: {refused[name]}, not a regular file: not read"
                for name in order
            ]
            assert [r["name"] for r in json.loads(done.stdout)["results"]] == judged


def test_files_over_the_size_cap_are_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    large = tmp_path / "large.yaml"
    large.write_text(JOB + "# padding\n" * 200)
    size = large.stat().st_size
    small = tmp_path / "small.yaml"
    small.write_text(JOB)
    code, out, err = run(["check", "--max-file-bytes", "1000", str(large), str(small)], capsys)
    assert code == 2
    assert (
        err
        == f"jobguard: {large}: file is {size} bytes, over the limit of 1000 (--max-file-bytes)\n"
    )
    assert "1 checked document(s) of 2 file(s)" in out
    assert run(["check", "--max-file-bytes", str(size), str(large)], capsys)[0] == 0
    # Standard input has no size to look at: it is read up to the cap and one byte more.
    monkeypatch.setattr(sys, "stdin", io.StringIO(large.read_text()))
    code, _, err = run(["check", "--max-file-bytes", "1000", "-"], capsys)
    assert code == 2
    assert (
        err
        == "jobguard: <stdin>: file is more than 1000 bytes, over the limit of 1000 (--max-file-bytes)\n"
    )
    # The stored versions of --old likewise.
    code, _, err = run(
        ["check", "--max-file-bytes", "1000", "--old", str(large), str(small)], capsys
    )
    assert code == 2 and err.startswith(f"jobguard: {large}: file is {size} bytes, over")
    assert run(["check", "--max-file-bytes", "0", str(small)], capsys)[0] == 2
