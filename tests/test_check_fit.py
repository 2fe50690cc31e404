"""`jobguard check` fitted to every repository's CI: recreate-aware --base, --jobs auto,
--quiet, --output github, release versions, a name for stdin and the exit-code precedence."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
import yaml

from jobguard.app.cli import check as check_module
from jobguard.app.cli.main import build_parser
from tests.commands import run
from tests.test_check_ci import BAD_JOB, _git
from tests.test_check_inputs import JOB, check_json, sarif_run


def _annotated(annotations: dict[str, str], image: str) -> str:
    doc = yaml.safe_load(JOB)
    doc["metadata"]["annotations"] = annotations
    doc["spec"]["template"]["spec"]["containers"][0]["image"] = image
    return yaml.safe_dump(doc)


RECREATING = {
    "argo replace": {"argocd.argoproj.io/sync-options": "Force=true,Replace=true"},
    "argo hook": {"argocd.argoproj.io/hook": "PreSync"},
    "helm before-hook-creation": {
        "helm.sh/hook": "pre-upgrade",
        "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded",
    },
    "helm default policy": {"helm.sh/hook": "post-install,post-upgrade"},
    "flux force": {"kustomize.toolkit.fluxcd.io/force": "enabled"},
    "any deployer": {"jobguard.io/recreated": "true"},
}
UPDATING = {
    "none": {},
    "argo other options": {"argocd.argoproj.io/sync-options": "ServerSideApply=true"},
    "helm hook kept after success": {
        "helm.sh/hook": "pre-upgrade",
        "helm.sh/hook-delete-policy": "hook-failed",
    },
    "flux force off": {"kustomize.toolkit.fluxcd.io/force": "disabled"},
}


@pytest.mark.parametrize("case", [*RECREATING, *UPDATING])
def test_base_judges_recreated_objects_as_creates(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    annotations = {**RECREATING, **UPDATING}[case]
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "job.yaml").write_text(_annotated(annotations, "busybox"))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    (repo / "job.yaml").write_text(_annotated(annotations, "busybox:1.37"))  # an image bump
    monkeypatch.chdir(repo)
    code, body = check_json(["--base", "main", "job.yaml"], capsys)
    (result,) = body["results"]
    if case in RECREATING:
        assert (code, result["violations"]) == (0, [])
        assert result["recreated"]
    else:
        assert code == 1
        assert [v["rule"] for v in result["violations"]] == ["TM-001"]
        assert "recreated" not in result


def test_jobs_auto_gives_the_same_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in range(4):
        (tmp_path / f"job-{i}.yaml").write_text(JOB.replace("name: ok", f"name: j{i}"))
    (tmp_path / "bad.yaml").write_text(BAD_JOB)
    one = run(["check", "--output", "json", "--jobs", "1", str(tmp_path)], capsys)
    auto = run(["check", "--output", "json", "--jobs", "auto", str(tmp_path)], capsys)
    assert one == auto and one[0] == 1
    assert build_parser().parse_args(["check", "--jobs", "auto", "."]).jobs == check_module.AUTO
    for wrong in ("0", "-1", "many"):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["check", "--jobs", wrong, "."])


def test_jobs_auto_scales_with_the_input_and_the_cpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = []
    for i in range(6):
        path = tmp_path / f"f{i}.yaml"
        path.write_text("x" * 1000)
        files.append(str(path))
    assert check_module.auto_jobs(files) == 1  # 6 kB: not worth a worker
    monkeypatch.setattr(check_module, "AUTO_BYTES_PER_WORKER", 2000)
    monkeypatch.setattr(check_module, "usable_cpus", lambda: 8)
    assert check_module.auto_jobs(files) == 3
    monkeypatch.setattr(check_module, "usable_cpus", lambda: 2)
    assert check_module.auto_jobs(files) == 2
    assert 1 <= check_module.usable_cpus() <= (__import__("os").cpu_count() or 1)


def test_quiet_leaves_skipped_documents_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "config.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    (tmp_path / "bad.yaml").write_text(BAD_JOB)
    code, out, _ = run(["check", str(tmp_path)], capsys)
    assert code == 1 and "skipped" in out.splitlines()[0]
    code, quiet, _ = run(["check", "--quiet", str(tmp_path)], capsys)
    assert code == 1
    assert quiet.splitlines() == [line for line in out.splitlines() if ": skipped" not in line]
    assert quiet.splitlines()[-1].endswith("1 skipped, 0 error(s)")


def test_github_annotations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.yaml").write_text(BAD_JOB)
    (tmp_path / "broken.yaml").write_text("kind: Job\napiVersion: batch/v1\nspec: [\n")
    (tmp_path / "config.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    code, out, _ = run(["check", "--output", "github", "--quiet", str(tmp_path)], capsys)
    assert code == 1
    lines = out.splitlines()
    bad, broken = tmp_path / "bad.yaml", tmp_path / "broken.yaml"
    assert lines[0] == (
        f"::error file={bad},line=8,col=7,title=jobguard JS-005 (deny)::"
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
    )
    assert lines[1].startswith(f"::error file={broken},line=")
    assert ",title=jobguard%3A input error::cannot parse YAML" in lines[1]
    assert "%0A" in lines[1] or "\n" not in lines[1]  # one line whatever the message holds
    assert lines[-1].startswith("1 violation(s) (1 deny")
    assert len(lines) == 3  # the ConfigMap is skipped, and --quiet leaves it out


def test_release_versions_are_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    for version in ("1.35", "1.35.2", "v1.35", "v1.36.0-eks-4a1b"):
        code, _, err = run(["check", "--kubernetes-version", version, str(tmp_path)], capsys)
        assert (code, err) == (0, ""), version
    for version, named in (("1.30.1", "'1.30'"), ("latest", "'latest'")):
        with pytest.raises(SystemExit) as refused:
            run(["check", "--kubernetes-version", version, str(tmp_path)], capsys)
        assert refused.value.code == 2
        assert f"unsupported kubernetesVersion {named}" in capsys.readouterr().err


def test_stdin_gets_the_name_given(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(BAD_JOB))
    code, out, _ = run(["check", "--stdin-filename", "charts/app/rendered.yaml", "-"], capsys)
    assert code == 1 and out.startswith("charts/app/rendered.yaml:8:7: deny: JS-005")
    monkeypatch.setattr(sys, "stdin", io.StringIO(BAD_JOB))
    code, sarif = sarif_run(["--stdin-filename", "charts/app/rendered.yaml", "-"], capsys)
    (result,) = sarif["results"]
    location = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert location == "charts/app/rendered.yaml"
    # Without it, stdin is `<stdin>` (SARIF: `stdin`), for the next command in this process too.
    monkeypatch.setattr(sys, "stdin", io.StringIO(BAD_JOB))
    code, out, _ = run(["check", "-"], capsys)
    assert out.startswith("<stdin>:8:7: deny")
