"""`jobguard review` and `serve` start-up, and parity between review and /validate."""

from __future__ import annotations

import copy
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from fastapi.testclient import TestClient

from jobguard.app.cli.main import main
from jobguard.app.server.app import create_app
from tests.builders import START, cond, cronjob, job, with_status
from tests.reviews import review


def _write(tmp_path: Path, body: dict, name: str = "review.json") -> Path:
    path = tmp_path / name
    path.write_bytes(orjson.dumps(body))
    return path


def bad_job() -> dict:
    return job(
        completionMode="Indexed",
        completions=2,
        parallelism=2,
        successPolicy={"rules": [{"succeededIndexes": "3,1"}]},
    )


def test_review_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", str(_write(tmp_path, review(job())))]) == 0
    assert orjson.loads(capsys.readouterr().out)["response"]["allowed"] is True
    assert main(["review", str(_write(tmp_path, review(bad_job())))]) == 1
    out = orjson.loads(capsys.readouterr().out)
    assert out["response"]["status"]["details"]["causes"][0]["field"] == (
        "spec.successPolicy.rules[0].succeededIndexes"
    )
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    assert main(["review", str(bad)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert main(["review", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_review_reads_stdin() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "jobguard", "review", "-"],
        input=orjson.dumps(review(bad_job())),
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 1
    assert orjson.loads(proc.stdout)["response"]["allowed"] is False


def _parity_cases() -> list[dict]:
    running = with_status(job(), startTime=START, active=1)
    edited = copy.deepcopy(running)
    edited["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a"}
    complete_without_time = with_status(
        running, active=0, conditions=[cond("SuccessCriteriaMet"), cond("Complete")]
    )
    not_indexed_policy = cronjob("c", successPolicy={"rules": [{"succeededCount": 1}]})
    broken = job()
    broken["spec"]["suspend"] = "yes"
    return [
        review(job()),
        review(bad_job()),
        review(edited, running, "UPDATE"),
        review(complete_without_time, running, "UPDATE", sub="status"),
        review(not_indexed_policy, resource="cronjobs"),
        review(broken),
        review(bad_job(), version="v1beta1"),
    ]


@pytest.mark.parametrize("body", _parity_cases())
def test_review_and_validate_give_identical_responses(
    tmp_path: Path, body: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["review", str(_write(tmp_path, body))])
    from_cli = orjson.loads(capsys.readouterr().out)
    with TestClient(create_app()) as client:
        from_http = client.post("/validate", json=body).json()
    assert from_cli == from_http


def test_serve_refuses_unknown_version(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("# jobguard\nkubernetesVersion: '1.32'\n")
    proc = subprocess.run(
        [sys.executable, "-m", "jobguard", "serve", "--config", str(config), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={**os.environ, "JOBGUARD_CONFIG": ""},
    )
    assert proc.returncode == 2
    assert f"{config}:2: kubernetesVersion" in proc.stderr
    assert '"1.33", "1.34", "1.35", "1.36", "1.37"' in proc.stderr


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--header-timeout", "0"], "--header-timeout and --max-connections must be positive"),
        (["--max-connections", "0"], "--header-timeout and --max-connections must be positive"),
    ],
)
def test_serve_refuses_unusable_limits(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--host", "127.0.0.1", "--port", "0", *flags]) == 2
    assert message in capsys.readouterr().err


def test_certs_generate_refuses_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "certs",
        "generate",
        "--service",
        "jobguard",
        "--namespace",
        "ns",
        "--out-dir",
        str(tmp_path),
    ]
    assert main(args) == 0
    assert capsys.readouterr().out.strip()
    assert (tmp_path / "tls.key").stat().st_mode & 0o777 == 0o600
    assert main(args) == 2
    assert "--force" in capsys.readouterr().err
    assert main([*args, "--force"]) == 0


POLICY = """
suspendPolicies:
  - name: queued
    match:
      labelSelector: {matchLabels: {kueue.x-k8s.io/queue-name: q}}
    forceSuspendOnCreate: true
    controllers: {serviceAccounts: ["kueue-system:kueue"]}
rules:
  "ST-*": {enforcement: warn}
"""


def _policy_cases() -> list[dict]:
    queued = job()
    queued["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "q"}
    suspended = copy.deepcopy(queued)
    suspended["spec"]["suspend"] = True
    finished = with_status(queued, active=1, conditions=[cond("Complete")])
    return [
        review(queued),
        review(queued, suspended, "UPDATE"),
        review(queued, suspended, "UPDATE", user="system:serviceaccount:kueue-system:kueue"),
        review(finished, queued, "UPDATE", sub="status"),
    ]


@pytest.mark.parametrize("body", _policy_cases())
@pytest.mark.parametrize("mutate", [False, True])
def test_review_with_config_agrees_with_server(
    tmp_path: Path, body: dict, mutate: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    from jobguard.app.config import parse_config

    config = tmp_path / "config.yaml"
    config.write_text(POLICY)
    args = ["review", "--config", str(config), str(_write(tmp_path, body))]
    main([*args, "--mutate"] if mutate else args)
    from_cli = orjson.loads(capsys.readouterr().out)
    with TestClient(create_app(parse_config(POLICY))) as client:
        from_http = client.post("/mutate" if mutate else "/validate", json=body).json()
    assert from_cli == from_http


@pytest.mark.parametrize(("flag", "package"), [("--loop", "uvloop"), ("--http", "httptools")])
def test_serve_refuses_a_stack_that_is_not_installed(
    flag: str, package: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == package else find_spec(name)
    )
    assert main(["serve", "--host", "127.0.0.1", "--port", "0", flag, package]) == 2
    assert f"{flag} {package} needs the {package} package" in capsys.readouterr().err
