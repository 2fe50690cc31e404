"""What each rule fires on across the whole suite, checked against the catalogue's `requests`
(the registrations are built from them: a request a rule judges but the catalogue omits never
reaches the webhook; one it lists but never judges waits on a webhook for nothing).

Imported by conftest.py before any test module, it wraps the pipeline's `evaluate` so that every
verdict any test produces records (rule, request) for each violation, request being
"jobs:CREATE", "jobs/status:UPDATE", ... . Workers hand their records to the controller
(pytest-xdist's `workeroutput`); at the end of the session a rule that fired on a request its
catalogue entry does not list fails the run, naming the rule and the request; so does, when the
whole suite ran, a request a policy rule (NE, SUS) lists that no test fires it on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import jobguard.validators as validators
import jobguard.validators.chain as chain
import jobguard.validators.pipeline as pipeline
from jobguard.validators import RULES_BY_ID, Request, Settings, Verdict
from jobguard.validators.catalog import Reporting

FIRED: set[tuple[str, str]] = set()
_KEY = "jobguard_firings"


def request_key(request: Request) -> str:
    resource = "jobs" if request.kind == "Job" else "cronjobs"
    if request.subresource:
        resource += f"/{request.subresource}"
    return f"{resource}:{request.operation.value}"


def _recording(evaluate: Callable[[Request, Settings], Verdict]) -> Callable[..., Verdict]:
    def recorded(request: Request, settings: Settings) -> Verdict:
        verdict = evaluate(request, settings)
        if verdict.judged and verdict.violations:
            key = request_key(request)
            FIRED.update((v.error.rule, key) for v in verdict.violations)
        return verdict

    return recorded


_RECORDED = _recording(pipeline.evaluate)
_NAME = "evaluate"
for _module in (pipeline, chain, validators):
    setattr(_module, _NAME, _RECORDED)


def unlisted(fired: set[tuple[str, str]]) -> list[str]:
    """Each (rule, request) fired that the rule's catalogue entry does not list."""
    out = []
    for rule, request in sorted(fired):
        info = RULES_BY_ID.get(rule)
        if info is not None and request not in info.requests:
            out.append(f"{rule} fired on {request}, which its catalogue entry does not list")
    return out


def worker_done(config: pytest.Config) -> None:
    output: dict[str, Any] | None = getattr(config, "workeroutput", None)
    if output is not None:
        output[_KEY] = sorted(FIRED)


def node_down(node: Any) -> None:
    FIRED.update((rule, request) for rule, request in node.workeroutput.get(_KEY, []))


def unwitnessed(fired: set[tuple[str, str]]) -> list[str]:
    """Each request a policy rule's catalogue entry lists that none of the suite's cases fires
    it on (only meaningful when the whole suite ran): the policy rules' requests make the
    registrations of the default profile, where a request listed but never judged would wait on
    a webhook for nothing (the upstream rules' only widen the `full` profile's)."""
    out = []
    for info in RULES_BY_ID.values():
        if info.upstream:
            continue
        for request in info.requests:
            # Aliases are reported under another ID, conditions (TM-002, TM-004) under the
            # rules they condition.
            if info.alias_of is not None or info.reporting is Reporting.CONDITION:
                continue
            if (info.id, request) not in fired:
                out.append(f"{info.id} lists {request}, which no test fires it on")
    return out


def _whole_suite(config: pytest.Config) -> bool:
    """Every test ran: no paths, keywords or markers beyond the default deselection."""
    paths = {str(arg).rstrip("/") for arg in config.args}
    markers = (config.option.markexpr or "").strip()
    return (
        paths <= {"tests", str(config.rootpath / "tests")}
        and not config.option.keyword
        and markers in ("", "not controlplane")
        and not config.option.lf
    )


def check(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):
        return  # a worker: the controller checks
    problems = unlisted(FIRED)
    if _whole_suite(session.config) and session.testscollected:
        problems += unwitnessed(FIRED)
    if not problems:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    for problem in problems:
        if reporter is not None:
            reporter.write_line(f"catalogue: {problem}", red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
