"""`jobguard test`: suites of requests with expected verdicts, run through the admission chain
as the API server runs it (mutation first), with a summary, an exit code and JUnit output; and
`review --mutate-first`, the same chain for one AdmissionReview."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
import yaml

from jobguard.app.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "tests" / "kueue.yaml"
QUEUED = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {
        "name": "train",
        "namespace": "team-a",
        "labels": {"kueue.x-k8s.io/queue-name": "q"},
    },
    "spec": {
        "template": {
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
        }
    },
}


def _suite(tmp_path: Path, cases: list[dict[str, object]], **top: object) -> str:
    path = tmp_path / "suite.yaml"
    config = str(ROOT / "examples" / "config" / "kueue.yaml")
    path.write_text(yaml.safe_dump({"config": config, **top, "cases": cases}))
    return str(path)


def test_the_example_suite_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out.splitlines()
    cases = yaml.safe_load(EXAMPLE.read_text())["cases"]
    assert len(out) == len(cases) + 1
    assert all(line.startswith("PASS  ") for line in out[:-1])
    assert out[0].endswith(
        "a user creates a queued Job, which /mutate suspends: allowed, suspended by /mutate"
    )
    assert out[-1] == f"{len(cases)} of {len(cases)} cases passed, 0 failed"


def test_junit_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", str(EXAMPLE), "--output", "junit"]) == 0
    root = ET.fromstring(capsys.readouterr().out.split("\n", 1)[1])
    (suite,) = root
    cases = yaml.safe_load(EXAMPLE.read_text())["cases"]
    assert suite.get("tests") == str(len(cases)) and suite.get("failures") == "0"
    assert [c.get("name") for c in suite] == [c["name"] for c in cases]


def test_failed_expectations_are_named_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(
        tmp_path,
        [
            # Wrong on purpose: /mutate suspends it, so it is allowed, and nothing fires.
            {"name": "wrong verdict", "object": QUEUED, "expect": {"verdict": "denied"}},
            {
                "name": "wrong rules",
                "object": QUEUED,
                "mutate": False,
                "expect": {"verdict": "denied", "rules": ["SUS-002"]},
            },
            {
                "name": "wrong mutation",
                "object": QUEUED,
                "expect": {"verdict": "allowed", "mutated": False},
            },
            {"name": "right", "object": QUEUED, "expect": {"verdict": "allowed", "rules": []}},
        ],
    )
    assert main(["test", suite]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"FAIL  {suite}: wrong verdict: expected denied, got allowed, suspended by /mutate",
        f"FAIL  {suite}: wrong rules: expected rules [SUS-002], got denied (SUS-001)",
        f"FAIL  {suite}: wrong mutation: expected no mutation, got allowed, suspended by /mutate",
        f"PASS  {suite}: right: allowed, suspended by /mutate",
        "1 of 4 cases passed, 3 failed",
    ]
    assert main(["test", suite, "--output", "junit"]) == 1
    root = ET.fromstring(capsys.readouterr().out.split("\n", 1)[1])
    failures = [c.find("failure") for c in root.iter("testcase")]
    assert [f.get("message") if f is not None else None for f in failures] == [
        "expected denied",
        "expected rules [SUS-002]",
        "expected no mutation",
        None,
    ]


def test_the_requester_and_old_object_decide(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    resumed = {**QUEUED, "spec": {**QUEUED["spec"], "suspend": False}}  # type: ignore[dict-item]
    suspended = {**QUEUED, "spec": {**QUEUED["spec"], "suspend": True}}  # type: ignore[dict-item]
    kueue = {
        "username": "system:serviceaccount:kueue-system:kueue-controller-manager",
        "groups": ["system:serviceaccounts"],
    }
    suite = _suite(
        tmp_path,
        [
            {
                "name": "a user resumes",
                "object": resumed,
                "oldObject": suspended,
                "requester": {"username": "bob"},
                "expect": {"verdict": "denied", "rules": ["SUS-002"]},
            },
            {
                "name": "Kueue resumes",
                "object": resumed,
                "oldObject": suspended,
                "requester": kueue,
                "expect": {"verdict": "allowed", "rules": []},
            },
        ],
    )
    assert main(["test", suite]) == 0, capsys.readouterr().out


def test_config_and_version_options_override_the_suites(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Without the Kueue policy the queued Job is not suspended, and the suite's cases fail.
    reference = str(ROOT / "examples" / "config" / "reference.yaml")
    assert main(["test", str(EXAMPLE), "--config", reference]) == 1
    assert "FAIL" in capsys.readouterr().out
    assert main(["test", str(EXAMPLE), "--kubernetes-version", "1.34"]) == 0
    with pytest.raises(SystemExit) as refused:
        main(["test", str(EXAMPLE), "--kubernetes-version", "0.9"])
    assert refused.value.code == 2


@pytest.mark.parametrize(
    ("cases", "problem"),
    [
        ([{"name": "x", "object": QUEUED}], "cases.0.expect: Field required"),
        (
            [{"name": "x", "object": QUEUED, "review": "r.json", "expect": {"verdict": "allowed"}}],
            "give exactly one of review, object, file",
        ),
        (
            [{"name": "x", "object": QUEUED, "expect": {"verdict": "maybe"}}],
            "cases.0.expect.verdict: Input should be 'allowed' or 'denied'",
        ),
        (
            [{"name": "x", "object": QUEUED, "bogus": 1, "expect": {"verdict": "allowed"}}],
            "cases.0.bogus: Extra inputs are not permitted",
        ),
        (
            [
                {
                    "name": "x",
                    "object": QUEUED,
                    "operation": "UPDATE",
                    "expect": {"verdict": "allowed"},
                }
            ],
            "case 'x': an UPDATE needs oldObject or oldFile",
        ),
        (
            [{"name": "x", "review": "missing.json", "expect": {"verdict": "allowed"}}],
            "case 'x': missing.json: No such file or directory",
        ),
        (
            [{"name": "x", "object": {"kind": "Pod"}, "expect": {"verdict": "allowed"}}],
            "case 'x': not a batch/v1 Job or CronJob",
        ),
        ([], "cases: List should have at least 1 item"),
    ],
)
def test_unusable_suites_exit_2_naming_the_problem(
    cases: list[dict[str, object]],
    problem: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    suite = _suite(tmp_path, cases)
    assert main(["test", suite]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"jobguard: {suite}: ") and problem in err


def test_review_mutate_first_answers_as_the_api_server_would(
    capsys: pytest.CaptureFixture[str],
) -> None:
    review = str(ROOT / "examples" / "reviews" / "user-creates-queued-job.json")
    config = str(ROOT / "examples" / "config" / "kueue.yaml")
    # As /validate received it from a cluster without jobguard's /mutate: denied.
    assert main(["review", "--config", config, review]) == 1
    assert "SUS-001" in capsys.readouterr().out
    # The API server applies /mutate's patch first: allowed, and said so.
    assert main(["review", "--mutate-first", "--config", config, review]) == 0
    out, err = capsys.readouterr()
    assert '"allowed": true' in out and "SUS-001" not in out
    assert err == "jobguard: /mutate set spec.suspend: true first\n"
    assert main(["review", "--mutate", "--mutate-first", review]) == 2


def test_the_readme_suite_is_part_of_the_example() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Testing your policies", 1)[1]
    shown = yaml.safe_load(section.split("```yaml\n", 1)[1].split("```", 1)[0])
    example = yaml.safe_load(EXAMPLE.read_text())
    assert shown["config"] == example["config"]
    assert all(case in example["cases"] for case in shown["cases"])
