"""The rule reference, rendered from the catalogue (`jobguard.validators.catalog`).

`jobguard rules` prints it as text, `jobguard rules --markdown` as docs/RULES.md, and
`python -m jobguard.app.cli.rules_doc README.md` rewrites the rule table of README.md between its
marker comments (`make docs` runs both). Tests keep the committed files equal to the output.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from jobguard.app.exits import ExitCode
from jobguard.validators.catalog import AREAS, RULES, Area, Reporting, RuleInfo

README_BEGIN = "<!-- rules:begin -->"
README_END = "<!-- rules:end -->"
REGENERATE = "jobguard rules --markdown > docs/RULES.md"

_TEXT_HEADER = ("ID", "AREA", "ENFORCEMENT", "BY DEFAULT", "SUMMARY", "CHECKED IN")

_INTRO = f"""\
This file is generated from `jobguard/validators/catalog.py` by
`{REGENERATE}`; `make docs` regenerates it and the rule table in
README.md. Do not edit it by hand.

Every rule has a stable ID. The configuration's `rules:` entries switch rules on or off and set
their enforcement by ID or glob (`NE-001`, `"ST-*"`). In the tables, **default** says whether a
rule is on without configuration and how it is enforced then (`deny`, `warn` or `dryrun`);
**upstream source** is the Kubernetes code the rule mirrors (paths in kubernetes/kubernetes) or,
for rules the API server does not enforce, the design it follows; **checked in** names the
functions (`module:function`) whose code holds the rule ID, so `grep -rn '"ST-031"' jobguard/`
lands in the same place. Rules that produce no errors of their own say so there. **judges** lists
the admission requests (`resource:OPERATION`) the rule judges, which the webhook registrations
(and the Helm chart) are made of; **at rest** says whether `jobguard audit` reports the rule for
a stored object and why (not); **VAP** says whether `jobguard export vap` writes the rule as a
ValidatingAdmissionPolicy, and if it never does, why (an exported rule is left out when the
configuration disables it or has no suspend policy it needs; the export says so).
"""


class ReadmeMarkersError(ValueError):
    """README.md lacks one well-ordered pair of rule-table markers."""


def default_label(rule: RuleInfo) -> str:
    """`on (deny)`, `off (warn)`, ...: on or off without configuration, and the enforcement."""
    state = "on" if rule.enabled_by_default else "off"
    return f"{state} ({rule.default_enforcement.value})"


def where_checked(rule: RuleInfo, code: Callable[[str], str] = str) -> str:
    """The checking functions, with why a rule reports no errors of its own when it does not."""
    functions = ", ".join(code(name) for name in rule.checked_in)
    if rule.reporting is Reporting.CONDITION:
        return (
            f"no errors of its own (a condition for {', '.join(rule.condition_for)}): {functions}"
        )
    if rule.reporting is Reporting.ALIAS:
        return f"reported as {rule.alias_of}: {functions}"
    if rule.reporting is Reporting.NOTHING_TO_CHECK:
        return f"nothing to check (see {functions})" if functions else "nothing to check"
    return functions


def at_rest_label(rule: RuleInfo) -> str:
    """`yes: why` or `no: why`: whether the rule holds for a stored object (`jobguard audit`)."""
    return f"{'yes' if rule.at_rest.holds else 'no'}: {rule.at_rest.reason}"


def vap_label(rule: RuleInfo) -> str:
    """`exported`, or `no: why` for a rule `jobguard export vap` never writes."""
    return "exported" if rule.vap.exported else f"no: {rule.vap.reason}"


def render_text(rules: Sequence[RuleInfo] = RULES) -> str:
    """One line per rule under a header, in columns."""
    rows = [_TEXT_HEADER] + [
        (
            rule.id,
            rule.area,
            rule.default_enforcement.value,
            "on" if rule.enabled_by_default else "off",
            rule.summary,
            where_checked(rule),
        )
        for rule in rules
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_TEXT_HEADER) - 1)]
    lines = [
        "  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[-1]])
        for row in rows
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{text}`"


def _anchor(title: str) -> str:
    """The fragment GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def _area_section(area: Area, rules: Sequence[RuleInfo]) -> str:
    lines = [
        f"## {area.title}",
        "",
        area.description,
        "",
        "| ID | summary | default | upstream source | checked in | judges | at rest | VAP |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for rule in rules:
        cells = (
            rule.id,
            rule.summary,
            default_label(rule),
            rule.source,
            where_checked(rule, _code),
            ", ".join(_code(request) for request in rule.requests),
            at_rest_label(rule),
            vap_label(rule),
        )
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def render_markdown(rules: Sequence[RuleInfo] = RULES, areas: Sequence[Area] = AREAS) -> str:
    """docs/RULES.md: an introduction, then one section per area with its rules' table."""
    contents = "\n".join(f"- [{area.title}](#{_anchor(area.title)})" for area in areas)
    sections = [
        _area_section(area, [rule for rule in rules if rule.area == area.key]) for area in areas
    ]
    return "\n".join(["# jobguard rules", "", _INTRO, contents, "", *sections]).rstrip() + "\n"


def render_readme_table(rules: Sequence[RuleInfo] = RULES) -> str:
    """The README's rule table: ID, area, summary and default."""
    lines = ["| ID | area | what | default |", "|---|---|---|---|"]
    for rule in rules:
        cells = (rule.id, rule.area, rule.summary, default_label(rule))
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def readme_table_region(readme: str) -> tuple[int, int]:
    """Start and end offsets of the text between the markers (raises ReadmeMarkersError)."""
    if readme.count(README_BEGIN) != 1 or readme.count(README_END) != 1:
        raise ReadmeMarkersError(f"needs exactly one {README_BEGIN} and one {README_END} line")
    start = readme.index(README_BEGIN) + len(README_BEGIN)
    end = readme.index(README_END)
    if end < start:
        raise ReadmeMarkersError(f"{README_END} comes before {README_BEGIN}")
    return start, end


def replace_readme_table(readme: str, table: str) -> str:
    """The README with `table` between the markers and everything else unchanged."""
    start, end = readme_table_region(readme)
    return readme[:start] + "\n" + table + readme[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jobguard.app.cli.rules_doc",
        description="Rewrite the generated rule table of README files in place.",
    )
    parser.add_argument(
        "readmes",
        nargs="+",
        metavar="README",
        help=f"a file with one {README_BEGIN} ... {README_END} region",
    )
    args = parser.parse_args(argv)
    table = render_readme_table()
    for name in args.readmes:
        path = Path(name)
        try:
            text = path.read_text(encoding="utf-8")
            updated = replace_readme_table(text, table)
        except (OSError, ReadmeMarkersError) as exc:
            print(f"rules_doc: {name}: {exc}", file=sys.stderr)
            return ExitCode.UNUSABLE
        if updated != text:
            path.write_text(updated, encoding="utf-8")
    return ExitCode.OK


if __name__ == "__main__":
    raise SystemExit(main())
