"""`jobguard test`: suites of requests with their expected verdicts, run against a configuration
(as `kyverno test` and `gator verify` run theirs).

A suite file (YAML) names a configuration and lists cases. Each case is a request: an
AdmissionReview file (`review:`), or a manifest (`object:` inline, or `file:`, the first Job or
CronJob of a YAML file) with the requester, operation, old object and subresource it is sent
with. Each runs through the admission chain as the API server runs it (jobguard's mutation
first, then validation of the mutated object; `mutate: false` replays what /validate received)
and its verdict, rules and mutation are compared with `expect:`. A thin shell: the chain judges.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from jobguard.app.admission.review import BadReview, parse_review
from jobguard.app.cli.check import kind_problem, with_namespace
from jobguard.app.cli.manifests import ManifestError, read_manifests
from jobguard.app.config import ConfigError, FileConfig, load_config
from jobguard.validators import (
    BOTH_STAGES,
    Operation,
    Requester,
    Settings,
    Stage,
    admit,
)
from jobguard.validators.context import Request, resolve_namespace

DEFAULT_USER = "jobguard-test"
DEFAULT_GROUPS = ("system:authenticated",)


class SuiteError(ValueError):
    """A suite that cannot be run: its file, and what is wrong where."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class RequesterSpec(_Strict):
    username: str = DEFAULT_USER
    groups: list[str] = Field(default_factory=lambda: list(DEFAULT_GROUPS))


class Expectation(_Strict):
    verdict: Literal["allowed", "denied"]
    rules: list[str] | None = None
    """Exactly the rules that fire, whatever their enforcement (None: not compared)."""
    mutated: bool | None = None
    """Whether jobguard's /mutate patches the request (None: not compared)."""


class Case(_Strict):
    name: str = Field(min_length=1)
    review: str | None = None
    object: dict[str, Any] | None = None
    file: str | None = None
    old_object: dict[str, Any] | None = Field(None, alias="oldObject")
    old_file: str | None = Field(None, alias="oldFile")
    operation: Literal["CREATE", "UPDATE"] | None = None
    subresource: Literal["", "status"] = ""
    requester: RequesterSpec | None = None
    mutate: bool = True
    expect: Expectation

    @model_validator(mode="after")
    def _one_request(self) -> Case:
        given = [k for k in ("review", "object", "file") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of review, object, file")
        if self.review is not None and (
            self.old_object is not None
            or self.old_file is not None
            or self.operation is not None
            or self.subresource
        ):
            raise ValueError("a review carries its own operation, old object and subresource")
        if self.old_object is not None and self.old_file is not None:
            raise ValueError("give at most one of oldObject, oldFile")
        return self


class Suite(_Strict):
    config: str | None = None
    """The configuration file, relative to the suite (--config overrides it)."""
    cases: list[Case] = Field(min_length=1)


@dataclass(frozen=True, slots=True)
class CaseResult:
    suite: str
    name: str
    failures: tuple[str, ...]
    got: str
    """What happened, in the words of README's tables: "denied (SUS-002)", "allowed, ..."."""

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass(slots=True)
class SuiteReport:
    results: list[CaseResult] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return sum(not r.passed for r in self.results)


def load_suite(path: str) -> Suite:
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise SuiteError(f"{path}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise SuiteError(f"{path}: not YAML: {exc}") from None
    try:
        return Suite.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'the file'}: {e['msg']}" for e in exc.errors()
        )
        raise SuiteError(f"{path}: {problems}") from None


def suite_config(path: str, suite: Suite, override: str | None) -> FileConfig:
    """The configuration a suite runs against: --config, else the suite's, else the defaults
    (never $JOBGUARD_CONFIG: a suite's verdicts must not depend on the caller's shell)."""
    config = override or (_beside(path, suite.config) if suite.config else None)
    try:
        return load_config(config) if config else FileConfig()
    except ConfigError as exc:
        raise SuiteError(f"{path}: configuration {config}: {exc}") from None


def _beside(suite: str, relative: str) -> str:
    return os.path.join(os.path.dirname(suite), relative)


def _manifest(suite: str, case: Case, inline: dict[str, Any] | None, file: str | None) -> Any:
    if inline is not None:
        return inline
    if file is None:
        return None
    try:
        for manifest in read_manifests(_beside(suite, file)):
            if kind_problem(manifest.data)[0]:
                return manifest.data
    except ManifestError as exc:
        raise SuiteError(f"{suite}: case {case.name!r}: {exc}") from None
    raise SuiteError(f"{suite}: case {case.name!r}: {file} holds no batch/v1 Job or CronJob")


def _request(suite: str, case: Case) -> Request:
    if case.review is not None:
        try:
            parsed = parse_review(Path(_beside(suite, case.review)).read_bytes())
        except OSError as exc:
            raise SuiteError(
                f"{suite}: case {case.name!r}: {case.review}: {exc.strerror}"
            ) from None
        except BadReview as exc:
            raise SuiteError(f"{suite}: case {case.name!r}: {case.review}: {exc}") from None
        request = parsed.request
        if case.requester is not None:
            who = Requester(case.requester.username, tuple(case.requester.groups))
            request = dataclasses.replace(request, requester=who)
        return request
    new = _manifest(suite, case, case.object, case.file)
    old = _manifest(suite, case, case.old_object, case.old_file)
    problem = kind_problem(new)
    if not problem[0]:
        reason = problem[1] or "not a batch/v1 Job or CronJob"
        raise SuiteError(f"{suite}: case {case.name!r}: {reason}")
    operation = case.operation or ("UPDATE" if old is not None else "CREATE")
    if operation == "UPDATE" and old is None:
        raise SuiteError(f"{suite}: case {case.name!r}: an UPDATE needs oldObject or oldFile")
    spec = case.requester or RequesterSpec()
    # As `check` sends a manifest: in the namespace kubectl would apply it to.
    namespace = resolve_namespace("", new)
    return Request(
        str(new["kind"]),
        Operation(operation),
        with_namespace(new, namespace),
        with_namespace(old, namespace) if operation == "UPDATE" else None,
        subresource=case.subresource,
        namespace=namespace,
        requester=Requester(spec.username, tuple(spec.groups)),
        manifest=True,
    )


def run_case(suite: str, case: Case, settings: Settings) -> CaseResult:
    request = _request(suite, case)
    admission = admit(request, settings, BOTH_STAGES if case.mutate else Stage.VALIDATING)
    verdict = admission.verdict
    assert verdict is not None  # the validating stage always judges
    fired = sorted({v.error.rule for v in verdict.violations})
    denied = sorted({v.error.rule for v in verdict.denials})
    mutated = admission.mutation.policy is not None
    got = f"denied ({', '.join(denied)})" if not verdict.allowed else "allowed"
    if mutated:
        got += ", suspended by /mutate"
    others = [rule for rule in fired if rule not in denied]
    if others:
        got += f", fired {', '.join(others)}"
    expect = case.expect
    failures: list[str] = []
    if ("allowed" if verdict.allowed else "denied") != expect.verdict:
        failures.append(f"expected {expect.verdict}")
    if expect.rules is not None and sorted(set(expect.rules)) != fired:
        failures.append(f"expected rules [{', '.join(sorted(set(expect.rules)))}]")
    if expect.mutated is not None and expect.mutated != mutated:
        failures.append("expected a mutation" if expect.mutated else "expected no mutation")
    return CaseResult(suite, case.name, tuple(failures), got)


def run_suites(
    paths: list[str],
    config: str | None,
    report: SuiteReport,
    adjust: Callable[[FileConfig], FileConfig] = lambda config: config,
) -> None:
    """Every case of every suite, into `report` (SuiteError for a suite that cannot run);
    `adjust` changes each configuration (--kubernetes-version)."""
    for path in paths:
        suite = load_suite(path)
        settings = adjust(suite_config(path, suite, config)).to_settings()
        for case in suite.cases:
            report.results.append(run_case(path, case, settings))


def text(report: SuiteReport) -> str:
    lines = []
    for r in report.results:
        if r.passed:
            lines.append(f"PASS  {r.suite}: {r.name}: {r.got}")
        else:
            lines.append(f"FAIL  {r.suite}: {r.name}: {'; '.join(r.failures)}, got {r.got}")
    total = len(report.results)
    lines.append(f"{total - report.failed} of {total} cases passed, {report.failed} failed")
    return "\n".join(lines) + "\n"


def junit(report: SuiteReport) -> str:
    from xml.etree import ElementTree as ET

    root = ET.Element("testsuites", tests=str(len(report.results)), failures=str(report.failed))
    suites: dict[str, ET.Element] = {}
    for r in report.results:
        element = suites.get(r.suite)
        if element is None:
            element = suites[r.suite] = ET.SubElement(root, "testsuite", name=r.suite)
        case = ET.SubElement(element, "testcase", name=r.name, classname=r.suite)
        if not r.passed:
            failure = ET.SubElement(case, "failure", message="; ".join(r.failures))
            failure.text = f"got {r.got}"
        else:
            ET.SubElement(case, "system-out").text = r.got
    for name, element in suites.items():
        mine = [r for r in report.results if r.suite == name]
        element.set("tests", str(len(mine)))
        element.set("failures", str(sum(not r.passed for r in mine)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


FORMATS = {"text": text, "junit": junit}
