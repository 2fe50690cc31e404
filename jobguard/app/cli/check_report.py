"""Output formats of `jobguard check`: text, json, junit, sarif.

Each carries everything the check found: violations with their enforcement, what a policy's
mutation would change, the fields an immutability finding is about, skipped documents, and
every input error (unreadable, unparsable, empty, a Job or CronJob the API server would not
serve) with its file and line.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import orjson

from jobguard import __version__
from jobguard.app.cli.check import (
    ChangeRecord,
    CheckReport,
    DocumentResult,
    InputError,
    SkippedDocument,
    ViolationRecord,
)
from jobguard.app.cli.manifests import STDIN_DISPLAY
from jobguard.validators import RULES_BY_ID
from jobguard.validators.errors import render_value

if TYPE_CHECKING:
    from xml.etree import ElementTree as ET

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/jobguard/jobguard"
RULES_URI = f"{INFORMATION_URI}/blob/main/docs/RULES.md"
FINGERPRINT = "jobguard/v1"
"""The `partialFingerprints` key: a hash of file, object identity, rule and field."""
SARIF_LEVEL = {"deny": "error", "warn": "warning", "dryrun": "note"}


def _scalar(value: Any) -> bool:
    return not isinstance(value, dict | list)


def describe_change(change: ChangeRecord) -> str:
    """`containers[0].image ("app:1" -> "app:2")`, `nodeSelector.zone (added "b")`."""
    old, new = change.old, change.new
    if old is None:
        what = f"added {render_value(new)}" if _scalar(new) else "added"
    elif new is None:
        what = f"removed {render_value(old)}" if _scalar(old) else "removed"
    elif _scalar(old) and _scalar(new):
        what = f"{render_value(old)} -> {render_value(new)}"
    else:
        what = "changed"
    return f"{change.field} ({what})"


def violation_message(v: ViolationRecord) -> str:
    """The message to show a person: for immutability findings, which fields differ instead
    of the whole value (the webhook's answer keeps upstream's words)."""
    if not v.changes:
        return v.message
    return f"{v.brief}; differs: " + ", ".join(describe_change(c) for c in v.changes)


def _subject(s: SkippedDocument) -> str:
    if not s.kind:
        return ""
    kind = f"{s.api_version} {s.kind}" if s.api_version else s.kind
    return f"{kind} {s.name}: " if s.name else f"{kind}: "


def skipped_line(s: SkippedDocument) -> str:
    """`FILE:LINE: v1 ConfigMap settings: not a batch/v1 Job or CronJob: skipped`."""
    where = f"{s.file}:{s.line}" if s.line else s.file
    return f"{where}: {_subject(s)}{s.reason}: skipped"


def text(report: CheckReport) -> str:
    """One line per finding, in file order, marked with what it means for the build (deny,
    warn, dryrun; mutation; skipped; error), then a summary."""
    lines = [_error_line(e) for e in report.input_problems]
    for outcome in report.outcomes:
        for finding in outcome.findings:
            if isinstance(finding, SkippedDocument):
                if not report.quiet:
                    lines.append(skipped_line(finding))
            elif isinstance(finding, InputError):
                lines.append(_error_line(finding))
            else:
                lines += _result_lines(finding)
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def summary_line(report: CheckReport) -> str:
    s = report.summary()
    excluded = f", {s['excluded']} excluded" if s["excluded"] else ""
    return (
        f"{s['violations']} violation(s) ({s['deny']} deny, {s['warn']} warn, {s['dryrun']} "
        f"dryrun) in {s['checked']} checked document(s) of {s['files']} file(s); "
        f"{s['skipped']} skipped, {s['errors']} error(s){excluded}"
    )


_GITHUB_LEVELS = {"deny": "error", "warn": "warning", "dryrun": "notice"}


def _github_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _github_property(text: str) -> str:
    return _github_data(text).replace(":", "%3A").replace(",", "%2C")


def _github_command(level: str, file: str, line: int, column: int, title: str, text: str) -> str:
    where = [f"file={_github_property(file)}"]
    if line:
        where.append(f"line={line}")
        if column:
            where.append(f"col={column}")
    where.append(f"title={_github_property(title)}")
    return f"::{level} {','.join(where)}::{_github_data(text)}"


def github(report: CheckReport) -> str:
    """GitHub Actions workflow commands: an annotation on the pull request's files per
    violation (deny: error, warn: warning, dryrun: notice), mutation (notice) and input error
    (error); skipped documents as plain lines (none with --quiet); the summary last. Needs no
    code scanning, unlike SARIF."""
    lines = [
        _github_command("error", e.file, e.line, 0, "jobguard: input error", e.message)
        for e in report.input_problems
    ]
    for outcome in report.outcomes:
        for finding in outcome.findings:
            if isinstance(finding, SkippedDocument):
                if not report.quiet:
                    lines.append(skipped_line(finding))
            elif isinstance(finding, InputError):
                lines.append(
                    _github_command(
                        "error",
                        finding.file,
                        finding.line,
                        0,
                        "jobguard: input error",
                        finding.message,
                    )
                )
            else:
                r = finding
                lines += [
                    _github_command(
                        "notice", r.file, m.line, m.column, "jobguard: mutation", m.message
                    )
                    for m in r.mutations
                ]
                lines += [
                    _github_command(
                        _GITHUB_LEVELS[v.enforcement],
                        r.file,
                        v.line,
                        v.column,
                        f"jobguard {v.rule} ({v.enforcement})",
                        f"{v.field}: {violation_message(v)}",
                    )
                    for v in r.violations
                ]
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def _result_lines(r: DocumentResult) -> list[str]:
    lines = [f"{r.file}:{m.line}:{m.column}: mutation: {m.message}" for m in r.mutations]
    lines += [
        f"{r.file}:{v.line}:{v.column}: {v.enforcement}: {v.rule} {v.field}: {violation_message(v)}"
        for v in r.violations
    ]
    return lines


def _error_line(e: InputError) -> str:
    where = f"{e.file}:{e.line}" if e.line else e.file
    return f"{where}: error: {e.message}"


def _change_json(c: ChangeRecord) -> dict[str, Any]:
    out: dict[str, Any] = {"field": c.field}
    if c.old is not None:
        out["old"] = c.old
    if c.new is not None:
        out["new"] = c.new
    return out


def _violation_json(v: ViolationRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "rule": v.rule,
        "field": v.field,
        "type": v.type,
        "message": v.message,
        "enforcement": v.enforcement,
        "line": v.line,
        "column": v.column,
    }
    if v.changes:
        out["changes"] = [_change_json(c) for c in v.changes]
    return out


def _result_json(r: DocumentResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "file": r.file,
        "document": r.document,
        "kind": r.kind,
        "namespace": r.namespace,
        "name": r.name,
        "violations": [_violation_json(v) for v in r.violations],
    }
    if r.recreated:  # a stored version exists, and the deployer recreates the object
        out["recreated"] = r.recreated
    if r.mutations:
        out["mutations"] = [
            {
                "field": m.field,
                "value": m.value,
                "policy": m.policy,
                "message": m.message,
                "line": m.line,
                "column": m.column,
            }
            for m in r.mutations
        ]
    return out


def _skipped_json(s: SkippedDocument) -> dict[str, Any]:
    return {
        "file": s.file,
        "document": s.document,
        "line": s.line,
        "apiVersion": s.api_version,
        "kind": s.kind,
        "name": s.name,
        "reason": s.reason,
    }


def _error_json(e: InputError) -> dict[str, Any]:
    return {"file": e.file, "line": e.line, "document": e.document, "message": e.message}


def json(report: CheckReport) -> str:
    body = {
        "summary": report.summary(),
        "results": [_result_json(r) for r in report.results],
        "skipped": [_skipped_json(s) for s in report.skipped_documents],
        "errors": [_error_json(e) for e in report.problems],
        "excluded": report.excluded,
    }
    return orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n"


# Characters XML 1.0 cannot carry, even escaped (control characters but tab and newlines).
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_safe(element: ET.Element) -> None:
    for node in element.iter():
        node.attrib = {k: _XML_INVALID.sub("\ufffd", v) for k, v in node.attrib.items()}
        if node.text:
            node.text = _XML_INVALID.sub("\ufffd", node.text)


def junit(report: CheckReport) -> str:
    """A testcase per document (judged, skipped or in error) and per input error; counts are
    of testcases, as JUnit readers count them: `failures` those with a deny-level violation,
    `errors` those that could not be judged, `skipped` the documents not judged."""
    from xml.etree import ElementTree as ET  # here: the other formats need no XML (5 ms)

    results = report.results
    skipped = report.skipped_documents
    problems = report.problems
    failed = sum(1 for r in results if any(v.enforcement == "deny" for v in r.violations))
    counts = {
        "tests": str(len(results) + len(skipped) + len(problems)),
        "failures": str(failed),
        "errors": str(len(problems)),
    }
    suites = ET.Element("testsuites", {"name": "jobguard", **counts})
    suite = ET.SubElement(
        suites, "testsuite", {"name": "jobguard check", **counts, "skipped": str(len(skipped))}
    )
    for r in results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=r.file,
            name=f"{r.kind} {r.namespace}/{r.name} (document {r.document})",
        )
        for v in r.violations:
            if v.enforcement != "deny":
                continue
            message = violation_message(v)
            failure = ET.SubElement(case, "failure", type=v.rule, message=f"{v.field}: {message}")
            failure.text = f"{r.file}:{v.line}:{v.column}: {v.rule} {v.field}: {message}"
        others = [
            f"{v.enforcement}: {v.rule} {v.field}: {violation_message(v)}"
            for v in r.violations
            if v.enforcement != "deny"
        ] + [f"mutation: {m.message}" for m in r.mutations]
        if others:
            ET.SubElement(case, "system-out").text = "\n".join(others)
    for s in skipped:
        at = f"line {s.line}" if s.line else "file"
        name = f"{_subject(s)}{at}" if s.kind else at
        case = ET.SubElement(suite, "testcase", classname=s.file, name=name)
        ET.SubElement(case, "skipped", message=s.reason)
    for e in problems:
        case = ET.SubElement(
            suite, "testcase", classname=e.file, name=f"line {e.line}" if e.line else "read"
        )
        ET.SubElement(case, "error", message=e.message).text = str(e)
    _xml_safe(suites)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _uri(file: str) -> str:
    """A relative URI reference for a path (spaces, '#' and the like percent-encoded)."""
    return "stdin" if file == STDIN_DISPLAY else quote(file)


def _location(file: str, line: int, column: int = 0) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(file)}}
    if line:
        region = {"startLine": line}
        if column:
            region["startColumn"] = column
        physical["region"] = region
    return {"physicalLocation": physical}


def _notification(level: str, text: str, file: str, line: int, kind: str) -> dict[str, Any]:
    return {
        "level": level,
        "message": {"text": text},
        "locations": [_location(file, line)],
        "descriptor": {"id": kind},
    }


def sarif_rules(rule_ids: list[str]) -> list[dict[str, Any]]:
    """SARIF `tool.driver.rules` for these rule IDs (shared by check and audit)."""
    rules = []
    for rule_id in rule_ids:
        info = RULES_BY_ID.get(rule_id)
        description = info.summary if info is not None else rule_id
        help_text = f"{rule_id}: {description}."
        if info is not None:
            help_text += f" Area: {info.area}; default: {info.default_enforcement.value}."
            if info.source:
                help_text += f" Upstream: {info.source}."
        rules.append(
            {
                "id": rule_id,
                "name": rule_id.replace("-", ""),
                "shortDescription": {"text": description},
                "fullDescription": {"text": f"{rule_id}: {description}"},
                "helpUri": RULES_URI,
                "help": {"text": f"{help_text} See {RULES_URI}"},
            }
        )
    return rules


def fingerprint(r: DocumentResult, v: ViolationRecord) -> str:
    """What a finding is about, not where its line is: the file, the object's identity
    (apiVersion, kind, namespace, name), the rule and the field, hashed."""
    identity = "\0".join((r.file, r.api_version, r.kind, r.namespace, r.name, v.rule, v.field))
    return hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()


def sarif(report: CheckReport) -> str:
    """SARIF 2.1.0: a result per violation; the invocation says whether every input could be
    judged, with a notification per input error (error), skipped document (note) and policy
    mutation (note)."""
    rule_ids = sorted({v.rule for r in report.results for v in r.violations})
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    results = []
    notifications = [
        _notification("error", e.message, e.file, e.line, "input-error") for e in report.problems
    ]
    for r in report.results:
        for v in r.violations:
            results.append(
                {
                    "ruleId": v.rule,
                    "ruleIndex": index[v.rule],
                    "level": SARIF_LEVEL[v.enforcement],
                    "message": {"text": f"{v.field}: {violation_message(v)}"},
                    "locations": [_location(r.file, v.line, v.column)],
                    "partialFingerprints": {FINGERPRINT: fingerprint(r, v)},
                }
            )
        notifications += [
            _notification("note", m.message, r.file, m.line, "mutation") for m in r.mutations
        ]
    notifications += [
        _notification("note", f"{_subject(s)}{s.reason}: skipped", s.file, s.line, "skipped")
        for s in report.skipped_documents
    ]
    invocation = {
        "executionSuccessful": not report.problems,
        "toolExecutionNotifications": notifications,
    }
    return sarif_log(rule_ids, results, [invocation])


def sarif_log(
    rule_ids: list[str],
    results: list[dict[str, Any]],
    invocations: list[dict[str, Any]] | None = None,
) -> str:
    """A SARIF 2.1.0 log of one jobguard run (shared by check and audit): `rule_ids` in the
    order `ruleIndex` counts them."""
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "jobguard",
                "version": __version__,
                "informationUri": INFORMATION_URI,
                "rules": sarif_rules(rule_ids),
            }
        }
    }
    if invocations is not None:
        run["invocations"] = invocations
    run["results"] = results
    body = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n"


FORMATS = {"text": text, "json": json, "junit": junit, "sarif": sarif, "github": github}
