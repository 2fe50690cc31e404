"""Every case of tests/data/cases.yaml, through the library, through `jobguard check` or
`jobguard review` (and `/validate` for reviews), with exactly the answer the index records;
and the README's replay commands, run as written."""

from __future__ import annotations

import functools
import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient

from jobguard.app.config import load_config
from jobguard.app.server.app import create_app
from jobguard.validators import Verdict
from tests.cases import Case, Finding, admit_case, load_cases, read_review, settings_for
from tests.commands import run
from tests.corpus import DATA, KUEUE_SETUP

ROOT = Path(__file__).resolve().parents[1]
CASES = load_cases()
FAMILIES = ("TM", "IM", "JS", "SP", "ST", "CJ", "NE", "SUS", "DEC")


def findings(verdict: Verdict) -> list[Finding]:
    """What the library found, in the index's terms (DEC-001 for an unreadable object)."""
    if verdict.decode_error is not None:
        return [("DEC-001", verdict.decode_error.field, "deny")]
    return [(v.error.rule, v.error.path, v.enforcement.value) for v in verdict.unique()]


@functools.cache
def webhook(config: str | None) -> TestClient:
    return TestClient(create_app(load_config(str(DATA / config) if config else None)))


def test_every_family_has_accepted_and_rejected_cases() -> None:
    for family in FAMILIES:
        rejected = [c for c in CASES if any(r.startswith(f"{family}-") for r, _, _ in c.violations)]
        folder = f"cases/{family.lower()}/"
        accepted = [c for c in CASES if c.file.startswith(folder) and c.allowed]
        assert rejected and accepted, family
    assert {c.command for c in CASES} == {"check", "review"}


def test_index_is_consistent() -> None:
    for case in CASES:
        denied = any(e == "deny" for _, _, e in case.violations)
        assert case.allowed is not denied, case.id
        assert case.exit == (0 if case.allowed else 1), case.id
        assert (case.code is not None) is (case.command == "review" and not case.allowed), case.id
        assert case.command == "check" or (case.old, case.subresource) == (None, ""), case.id
    assert len({(c.file, c.config) for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_through_the_library(case: Case) -> None:
    settings = settings_for(case)
    verdict = admit_case(case, settings).verdict
    assert verdict is not None
    assert verdict.judged
    assert findings(verdict) == list(case.violations)
    assert verdict.allowed is case.allowed


@pytest.mark.parametrize("case", [c for c in CASES if c.command == "check"], ids=lambda c: c.id)
def test_case_through_check(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([*case.args()[:1], "--output", "json", *case.args()[1:]], capsys)
    assert code == case.exit
    report = json.loads(out)
    assert report["summary"]["checked"] == 1
    (result,) = report["results"]
    found = [(v["rule"], v["field"], v["enforcement"]) for v in result["violations"]]
    assert found == list(case.violations)


@pytest.mark.parametrize("case", [c for c in CASES if c.command == "review"], ids=lambda c: c.id)
def test_case_through_review(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(case.args(), capsys)
    assert code == case.exit
    answer = json.loads(out)
    body = read_review(case.file)
    assert answer == webhook(case.config).post("/validate", json=body).json()
    response: dict[str, Any] = answer["response"]
    assert response["uid"] == body["request"]["uid"]
    assert response["allowed"] is case.allowed
    status = response.get("status")
    assert (status or {}).get("code") == case.code
    # Denials as causes (upstream repeats an UPDATE's spec errors: each is counted once),
    # warnings as "RULE path: ..." lines, and every rule that fired in the audit annotation.
    causes = dict.fromkeys(
        (c["field"], c["message"]) for c in (status or {}).get("details", {}).get("causes", [])
    )
    assert [field for field, _ in causes] == [p for _, p, e in case.violations if e == "deny"]
    warned = [w.split(":")[0] for w in response.get("warnings", [])]
    assert warned == [f"{r} {p}" for r, p, e in case.violations if e == "warn"]
    fired = [r for r, _, _ in case.violations if r != "DEC-001"]
    audited = response.get("auditAnnotations", {}).get("violations", "")
    assert [entry.split("=")[0] for entry in audited.split(",") if entry] == fired


# --- the README's replay commands ---------------------------------------------------------------


def readme_commands() -> list[tuple[list[str], int, str]]:
    """(arguments, exit code, rule) of each `jobguard ...  # exit N: RULE` line of the README's
    Tests section."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Tests\n", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^jobguard (.+?)\s+# exit (\d): (\S+)$", section, re.M)
    return [(shlex.split(args), int(code), rule) for args, code, rule in commands]


def test_readme_replays_a_check_and_a_review() -> None:
    assert {args[0] for args, _, _ in readme_commands()} == {"check", "review"}


@pytest.mark.parametrize(("args", "exit_code", "rule"), readme_commands())
def test_readme_command(
    args: list[str],
    exit_code: int,
    rule: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (case,) = [c for c in CASES if c.args(Path("tests/data")) == args]
    assert exit_code == case.exit
    assert rule in [r for r, _, _ in case.violations]
    monkeypatch.chdir(ROOT)
    code, out, _ = run(args, capsys)
    assert code == exit_code
    assert rule in out


def test_readme_kueue_setup_is_the_kueue_configuration() -> None:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("A complete Kueue set-up:\n\n```yaml\n", 1)[1].split("```", 1)[0]
    assert yaml.safe_load(block) == yaml.safe_load(KUEUE_SETUP.read_text())
