"""Output formats of `jobguard check`: text, json, junit, sarif."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote
from xml.etree import ElementTree as ET

import orjson

from jobguard.app.check import CheckReport, DocumentResult
from jobguard.validators import RULES_BY_ID

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/jobguard/jobguard"
_SARIF_LEVEL = {"deny": "error", "warn": "warning", "dryrun": "note"}


def text(report: CheckReport) -> str:
    lines = [
        f"{r.file}:{v.line}:{v.column}: {v.rule} {v.field}: {v.message}"
        for r in report.results
        for v in r.violations
    ]
    s = report.summary()
    lines.append(
        f"{s['violations']} violation(s) ({report.count('deny')} deny, {report.count('warn')} "
        f"warn, {report.count('dryrun')} dryrun) in {s['checked']} checked document(s) of "
        f"{s['files']} file(s); {s['skipped']} skipped"
    )
    return "\n".join(lines) + "\n"


def _result_json(r: DocumentResult) -> dict[str, Any]:
    return {
        "file": r.file,
        "document": r.document,
        "kind": r.kind,
        "namespace": r.namespace,
        "name": r.name,
        "violations": [
            {
                "rule": v.rule,
                "field": v.field,
                "type": v.type,
                "message": v.message,
                "enforcement": v.enforcement,
                "line": v.line,
                "column": v.column,
            }
            for v in r.violations
        ],
    }


def json(report: CheckReport) -> str:
    body = {"summary": report.summary(), "results": [_result_json(r) for r in report.results]}
    return orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n"


# Characters XML 1.0 cannot carry, even escaped (control characters but tab and newlines).
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_safe(element: ET.Element) -> None:
    for node in element.iter():
        node.attrib = {k: _XML_INVALID.sub("\ufffd", v) for k, v in node.attrib.items()}
        if node.text:
            node.text = _XML_INVALID.sub("\ufffd", node.text)


def junit(report: CheckReport) -> str:
    results = report.results
    failures = sum(1 for r in results for v in r.violations if v.enforcement == "deny")
    tests = str(len(results) + len(report.errors))  # unreadable files are error testcases
    suites = ET.Element(
        "testsuites",
        name="jobguard",
        tests=tests,
        failures=str(failures),
        errors=str(len(report.errors)),
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="jobguard check",
        tests=tests,
        failures=str(failures),
        errors=str(len(report.errors)),
        skipped="0",
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
            failure = ET.SubElement(case, "failure", type=v.rule, message=f"{v.field}: {v.message}")
            failure.text = f"{r.file}:{v.line}:{v.column}: {v.rule} {v.field}: {v.message}"
        others = [v for v in r.violations if v.enforcement != "deny"]
        if others:
            out = ET.SubElement(case, "system-out")
            out.text = "\n".join(
                f"{v.enforcement}: {v.rule} {v.field}: {v.message}" for v in others
            )
    for error in report.errors:
        case = ET.SubElement(suite, "testcase", classname=error.split(":", 1)[0], name="read")
        ET.SubElement(case, "error", message=error).text = error
    _xml_safe(suites)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _uri(file: str) -> str:
    """A relative URI reference for a path (spaces, '#' and the like percent-encoded)."""
    return "stdin" if file == "<stdin>" else quote(file)


def sarif(report: CheckReport) -> str:
    rule_ids = sorted({v.rule for r in report.results for v in r.violations})
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    rules = []
    for rule_id in rule_ids:
        info = RULES_BY_ID.get(rule_id)
        description = info.summary if info is not None else rule_id
        rules.append(
            {
                "id": rule_id,
                "name": rule_id.replace("-", ""),
                "shortDescription": {"text": description},
                "fullDescription": {"text": f"{rule_id}: {description}"},
                "helpUri": f"{INFORMATION_URI}#rules",
            }
        )
    results = []
    for r in report.results:
        for v in r.violations:
            results.append(
                {
                    "ruleId": v.rule,
                    "ruleIndex": index[v.rule],
                    "level": _SARIF_LEVEL[v.enforcement],
                    "message": {"text": f"{v.field}: {v.message}"},
                    "locations": [
                        {
                            "physicalLocation": {
                                "artifactLocation": {"uri": _uri(r.file)},
                                "region": {"startLine": v.line, "startColumn": v.column},
                            }
                        }
                    ],
                }
            )
    body = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "jobguard",
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n"


FORMATS = {"text": text, "json": json, "junit": junit, "sarif": sarif}
