"""`jobguard check` in CI: the pre-commit hook over a whole repository (files without a
Kubernetes object skipped), --kubernetes-version, --fail-on, SARIF fingerprints and help, and
--base REV (UPDATEs against a git revision)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from jobguard import __version__
from jobguard.app.cli.main import main
from tests.commands import run
from tests.test_check_inputs import JOB, check_json, junit_suite, sarif_run

ROOT = Path(__file__).resolve().parent.parent

BAD_JOB = JOB.replace("name: ok", "name: bad").replace(
    "restartPolicy: Never", "restartPolicy: Always"
)
GITLAB = ".setup:\n  script: [echo setup]\ntest:\n  script:\n    - !reference [.setup, script]\n"
CLOUDFORMATION = """\
AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Bucket:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: !Sub "${AWS::StackName}-data"
      Tags: [{Key: arn, Value: !GetAtt Role.Arn}, {Key: env, Value: !Ref Env}]
"""
SAMPLE = {
    "chart/values.yaml": "# replicas: 2\n",
    ".gitlab-ci.yml": GITLAB,
    "cfn/template.yaml": CLOUDFORMATION,
    "jobs/good.yaml": JOB,
    "jobs/bad.yaml": BAD_JOB,
}


def sample_repository(root: Path) -> list[str]:
    for name, content in SAMPLE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    return sorted(SAMPLE)


def hook_files(files: list[str]) -> list[str]:
    """The files pre-commit passes the hook (its `files` and `exclude` patterns)."""
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    return [f for f in files if re.search(hook["files"], f) and not re.search(hook["exclude"], f)]


def test_the_hook_over_a_repository_fails_only_for_the_invalid_job(tmp_path: Path) -> None:
    files = hook_files(sample_repository(tmp_path))
    assert files == sorted(SAMPLE)
    done = subprocess.run(
        [sys.executable, "-m", "jobguard", "check", *files],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""
    assert done.stdout.splitlines() == [
        ".gitlab-ci.yml:1: YAML for another tool (tags !reference), not a Kubernetes object: "
        "skipped",
        "cfn/template.yaml:1: YAML for another tool (tags !Sub !GetAtt !Ref), not a Kubernetes "
        "object: skipped",
        "chart/values.yaml: no Kubernetes object (empty, or only comments): skipped",
        "jobs/bad.yaml:8:7: deny: JS-005 spec.template.spec.restartPolicy: Required value: valid "
        'values: "OnFailure", "Never"',
        "1 violation(s) (1 deny, 0 warn, 0 dryrun) in 2 checked document(s) of 5 file(s); "
        "3 skipped, 0 error(s)",
    ]


def test_skipped_files_in_every_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sample_repository(tmp_path)
    monkeypatch.chdir(tmp_path)
    files = [".gitlab-ci.yml", "cfn/template.yaml", "chart/values.yaml", "jobs/good.yaml"]
    code, body = check_json(files, capsys)
    assert code == 0
    assert [(s["file"], s["line"]) for s in body["skipped"]] == [
        (".gitlab-ci.yml", 1),
        ("cfn/template.yaml", 1),
        ("chart/values.yaml", 0),
    ]
    code, sarif = sarif_run(files, capsys)
    notes = sarif["invocations"][0]["toolExecutionNotifications"]
    assert code == 0 and sarif["invocations"][0]["executionSuccessful"]
    assert [n["descriptor"]["id"] for n in notes] == ["skipped"] * 3
    suite = junit_suite(files, capsys)
    assert suite["@skipped"] == 3 and suite["@errors"] == 0


def test_a_job_that_cannot_be_read_is_still_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(JOB.replace("image: busybox", "image: !Sub busybox"))
    vault = tmp_path / "vault.yaml"
    vault.write_text("password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6162\n")
    code, body = check_json([str(path), str(vault)], capsys)
    assert code == 2
    assert [(e["file"], e["line"]) for e in body["errors"]] == [(str(path), 9)]
    assert "could not determine a constructor for the tag '!Sub'" in body["errors"][0]["message"]
    assert [s["reason"] for s in body["skipped"]] == [
        "YAML for another tool (tags !vault), not a Kubernetes object"
    ]


def test_empty_stdin_stays_an_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("# nothing\n"))
    code, out, _ = run(["check", "-"], capsys)
    assert code == 2 and out.startswith("<stdin>: error: no documents (empty input)\n")


WARN_CONFIG = "rules:\n  JS-005: {enforcement: warn}\n"


def test_fail_on_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(WARN_CONFIG)
    job = tmp_path / "bad.yaml"
    job.write_text(BAD_JOB)
    args = ["check", "--config", str(config), str(job)]
    code, out, _ = run(args, capsys)
    assert code == 0 and ": warn: JS-005 " in out
    code, out, _ = run([*args, "--fail-on", "warning"], capsys)
    assert code == 1 and ": warn: JS-005 " in out
    code, _, _ = run([*args, "--fail-on", "deny"], capsys)
    assert code == 0


def test_kubernetes_version_overrides_the_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text('kubernetesVersion: "1.35"\n')
    job = tmp_path / "job.yaml"
    job.write_text(JOB)
    code, _, _ = run(
        ["check", "--config", str(config), "--kubernetes-version", "1.36", str(job)], capsys
    )
    assert code == 0
    for command in ("check", "review"):
        capsys.readouterr()
        with pytest.raises(SystemExit) as exited:
            main([command, "--kubernetes-version", "1.2", str(job)])
        out, err = capsys.readouterr()
        assert exited.value.code == 2 and out == ""
        assert err.startswith("jobguard: --kubernetes-version: unsupported kubernetesVersion '1.2'")


def _fingerprints(run_: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [
        (
            r["ruleId"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["partialFingerprints"]["jobguard/v1"],
        )
        for r in run_["results"]
    ]


def test_sarif_fingerprints_survive_line_moves_and_rules_carry_help(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("bad.yaml").write_text(BAD_JOB)
    _, before = sarif_run(["bad.yaml"], capsys)
    Path("bad.yaml").write_text("# moved down\n\n" + BAD_JOB)
    code, after = sarif_run(["bad.yaml"], capsys)
    assert code == 1
    ((rule, line, fingerprint),) = _fingerprints(before)
    assert _fingerprints(after) == [(rule, line + 2, fingerprint)]
    assert re.fullmatch("[0-9a-f]{64}", fingerprint)
    Path("bad.yaml").write_text(BAD_JOB.replace("name: bad", "name: other"))
    _, renamed = sarif_run(["bad.yaml"], capsys)
    assert _fingerprints(renamed)[0][2] != fingerprint
    driver = after["tool"]["driver"]
    assert driver["version"] == __version__
    (described,) = driver["rules"]
    assert described["id"] == "JS-005"
    assert described["helpUri"].endswith("/docs/RULES.md")
    assert described["help"]["text"].startswith("JS-005: ")
    assert described["shortDescription"]["text"] in described["help"]["text"]


def test_kubectls_resource_mapping_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "old.yaml"
    path.write_text(
        "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: old-cron, namespace: team-a}\n"
    )
    code, _out, err = run(["check", str(path)], capsys)
    assert code == 2
    assert err == (
        f'jobguard: {path}:2: resource mapping not found for name: "old-cron" namespace: "team-a" '
        f'from "{path}": no matches for kind "CronJob" in version "batch/v1beta1"\n'
        "ensure CRDs are installed first\n"
    )


# --- --base REV ---------------------------------------------------------------------------------


def running(name: str) -> str:
    return JOB.replace("name: ok", f"name: {name}")


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_base_judges_changed_objects_as_updates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    (repo / "manifests").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for name in ("changed", "unchanged", "deleted"):
        (repo / "manifests" / f"{name}.yaml").write_text(running(name))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    _git(repo, "checkout", "-qb", "feature")
    changed = repo / "manifests" / "changed.yaml"
    changed.write_text(changed.read_text().replace("image: busybox", "image: busybox:1.37"))
    (repo / "manifests" / "deleted.yaml").unlink()
    (repo / "manifests" / "new.yaml").write_text(running("new"))
    monkeypatch.chdir(repo)
    code, body = check_json(["--base", "main", "manifests/"], capsys)
    assert code == 1
    assert [
        (r["file"], r["name"], [v["rule"] for v in r["violations"]]) for r in body["results"]
    ] == [
        ("manifests/changed.yaml", "changed", ["TM-001"]),
        ("manifests/new.yaml", "new", []),
        ("manifests/unchanged.yaml", "unchanged", []),
    ]
    assert "field is immutable" in body["results"][0]["violations"][0]["message"]
    # Without --base every one is a CREATE.
    code, _ = check_json(["manifests/"], capsys)
    assert code == 0


def test_base_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["check", "--base", "main", "job.yaml"], capsys)
    assert (code, out) == (2, "")
    assert err == "jobguard: --base main: job.yaml is not in a git repository\n"
    _git(tmp_path, "init", "-q", "-b", "main")
    code, out, err = run(["check", "--base", "origin/main", "job.yaml"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("jobguard: --base origin/main: unknown revision in ")
    assert err.count("\n") == 1
