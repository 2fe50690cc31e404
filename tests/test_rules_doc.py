"""The rule reference: `jobguard rules`, docs/RULES.md and README.md's table are generated from
the catalogue, and the catalogue's `checked_in` index matches the code in both directions."""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from jobguard.app.cli.main import build_parser, main
from jobguard.app.cli.rules_doc import (
    README_BEGIN,
    README_END,
    ReadmeMarkersError,
    readme_table_region,
    render_markdown,
    render_readme_table,
    replace_readme_table,
)
from jobguard.app.cli.rules_doc import main as rules_doc_main
from jobguard.validators import RULES, RULES_BY_ID
from jobguard.validators.catalog import AREAS, AREAS_BY_KEY, Reporting, RuleInfo

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "RULES.md"
README = ROOT / "README.md"
PACKAGE = ROOT / "jobguard"
RULE_MODULES = sorted((PACKAGE / "validators" / "rules").glob("*.py"))
RULE_ID = re.compile(r"[A-Z]{2,3}-[0-9]{3}")
REGENERATE = "the catalogue changed without `make docs`"


# --- generated files ---------------------------------------------------------------------------


def test_docs_file_is_the_generated_reference() -> None:
    assert DOCS.read_text(encoding="utf-8") == render_markdown(), REGENERATE


def test_readme_rule_table_is_the_generated_one() -> None:
    readme = README.read_text(encoding="utf-8")
    start, end = readme_table_region(readme)
    assert readme[start:end] == "\n" + render_readme_table(), REGENERATE


def test_docs_name_the_regenerating_command_at_the_top() -> None:
    head = DOCS.read_text(encoding="utf-8").split("\n## ", 1)[0]
    assert "jobguard rules --markdown" in head
    assert "make docs" in head


def _headings(markdown: str) -> list[str]:
    return [line.lstrip("#").strip() for line in markdown.splitlines() if line.startswith("#")]


def test_one_section_per_area_with_a_row_per_rule() -> None:
    docs = render_markdown()
    assert _headings(docs) == ["jobguard rules"] + [area.title for area in AREAS]
    sections = docs.split("\n## ")[1:]
    for area, section in zip(AREAS, sections, strict=True):
        rows = re.findall(r"^\| ([A-Z]+-[0-9]{3}) \|", section, re.MULTILINE)
        assert rows == [rule.id for rule in RULES if rule.area == area.key]
        assert area.description in section


# --- the catalogue's own consistency -------------------------------------------------------------


def test_every_rule_has_a_described_area() -> None:
    assert len(AREAS_BY_KEY) == len(AREAS)
    assert {rule.area for rule in RULES} == set(AREAS_BY_KEY)
    assert len({area.title for area in AREAS}) == len(AREAS)
    for area in AREAS:
        own = [rule.id for rule in RULES if rule.area == area.key]
        assert any(rule_id in area.description for rule_id in own), area.key


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.id)
def test_reporting_fields_agree(rule: RuleInfo) -> None:
    assert (rule.reporting is Reporting.ALIAS) == (rule.alias_of is not None)
    assert (rule.reporting is Reporting.CONDITION) == bool(rule.condition_for)
    for other in (*rule.condition_for, *([rule.alias_of] if rule.alias_of else [])):
        assert RULES_BY_ID[other].reporting is Reporting.OWN
    if rule.reporting is not Reporting.NOTHING_TO_CHECK:
        assert rule.checked_in, "say where it is checked"
    policy_only = rule.source.startswith("jobguard policy (not enforced upstream)")
    assert policy_only == (not rule.upstream), rule.source
    assert rule.source


def test_rules_without_errors_of_their_own_are_exactly_these() -> None:
    silent = {rule.id: rule.reporting for rule in RULES if rule.reporting is not Reporting.OWN}
    assert silent == {
        "TM-002": Reporting.CONDITION,
        "TM-004": Reporting.CONDITION,
        "SP-010": Reporting.ALIAS,
        "CJ-002": Reporting.NOTHING_TO_CHECK,
        "CJ-004": Reporting.NOTHING_TO_CHECK,
    }


# --- one hop from an ID to its code, and back ----------------------------------------------------


@dataclass
class ModuleIds:
    """The rule-ID literals of a module, per top-level function."""

    functions: dict[str, set[str]] = field(default_factory=dict)
    stray: list[tuple[int, str]] = field(default_factory=list)
    """Literals outside any function that are not a module constant (line, ID)."""


def _literals(node: ast.AST) -> list[tuple[ast.Constant, str]]:
    """The rule-ID string constants under `node`, with their values."""
    return [
        (n, n.value)
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and RULE_ID.fullmatch(n.value)
    ]


_FUNCTION = ast.FunctionDef | ast.AsyncFunctionDef


def _function_nodes(tree: ast.Module) -> dict[str, ast.AST]:
    """Top-level functions by name, and methods of top-level classes as `Class.method`."""
    found: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, _FUNCTION):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, _FUNCTION):
                    found[f"{node.name}.{item.name}"] = item
    return found


def scan_rule_ids(source: str) -> ModuleIds:
    """Rule-ID string literals by function; a function using a module constant such as
    `RULE = "JS-008"` counts as holding that ID."""
    tree = ast.parse(source)
    functions = _function_nodes(tree)
    inside = {id(n) for function in functions.values() for n in ast.walk(function)}
    constants: dict[str, str] = {}
    result = ModuleIds()
    for node in tree.body:
        literals = _literals(node)
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and [n for n, _ in literals] == [node.value]
        ):
            constants[node.targets[0].id] = literals[0][1]
            continue
        result.stray += [(n.lineno, value) for n, value in literals if id(n) not in inside]
    for name, function in functions.items():
        ids = {value for _, value in _literals(function)}
        ids |= {
            constants[n.id]
            for n in ast.walk(function)
            if isinstance(n, ast.Name) and n.id in constants
        }
        result.functions[name] = ids
    return result


def test_scanner_reads_literals_constants_and_strays() -> None:
    scanned = scan_rule_ids(
        'RULE = "JS-008"\nOTHER = ("ST-001",)\n'
        'def a():\n    """TM-002 in a docstring is no literal."""\n    return "IM-001", RULE\n'
        "def b():\n    return 'ST-' + 'x'\n"
        'class C:\n    KIND = "NE-001"\n    def m(self):\n        return "SUS-002"\n'
    )
    assert scanned.functions == {"a": {"IM-001", "JS-008"}, "b": set(), "C.m": {"SUS-002"}}
    assert scanned.stray == [(2, "ST-001"), (9, "NE-001")]


def _module_of(qualified: str) -> tuple[str, str]:
    module, _, function = qualified.partition(":")
    return module, function


def _source_path(module: str) -> Path:
    origin = importlib.import_module(module).__file__
    assert origin is not None
    return Path(origin)


def _scan_module(module: str) -> ModuleIds:
    return scan_rule_ids(_source_path(module).read_text(encoding="utf-8"))


def _function_source(module: str, function: str) -> str:
    """The source of `function` ("f" or "Class.method"), read from its module's file."""
    source = _source_path(module).read_text(encoding="utf-8")
    scope: list[ast.stmt] = ast.parse(source).body
    found: ast.stmt | None = None
    for part in function.split("."):
        found = next(
            node
            for node in scope
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == part
        )
        scope = found.body
    assert found is not None
    segment = ast.get_source_segment(source, found)
    assert segment is not None
    return segment


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.id)
def test_checked_in_functions_exist_and_hold_the_id(rule: RuleInfo) -> None:
    for qualified in rule.checked_in:
        module, function = _module_of(qualified)
        target: object = importlib.import_module(module)
        for part in function.split("."):
            target = getattr(target, part, None)
        assert callable(target), f"{qualified} (named for {rule.id}) does not exist"
        ids = _scan_module(module).functions[function]
        if rule.reporting is Reporting.OWN:
            assert rule.id in ids, f"{qualified} holds no {rule.id!r} literal"
        elif rule.reporting is Reporting.ALIAS:
            assert rule.alias_of in ids, f"{qualified} holds no {rule.alias_of!r} literal"
        elif rule.reporting is Reporting.CONDITION:
            # No literal to find: the function computes the condition and says so.
            assert rule.id in _function_source(module, function), (
                f"{qualified} never mentions {rule.id}"
            )


@pytest.mark.parametrize("path", RULE_MODULES, ids=lambda path: path.name)
def test_every_rule_id_literal_is_in_a_function_the_catalogue_names(path: Path) -> None:
    module = f"jobguard.validators.rules.{path.stem}"
    scanned = scan_rule_ids(path.read_text(encoding="utf-8"))
    assert scanned.stray == [], "rule IDs outside functions cannot be indexed"
    for function, ids in scanned.functions.items():
        for rule_id in ids:
            assert rule_id in RULES_BY_ID, f"{module}:{function} uses unknown {rule_id}"
            assert f"{module}:{function}" in RULES_BY_ID[rule_id].checked_in, (
                f"{rule_id} is reported in {module}:{function}, which the catalogue does not name"
            )


def test_the_scan_finds_every_rule_checked_in_rule_modules() -> None:
    found = set()
    for path in RULE_MODULES:
        for ids in scan_rule_ids(path.read_text(encoding="utf-8")).functions.values():
            found |= ids
    expected = {
        rule.id
        for rule in RULES
        if rule.reporting is Reporting.OWN
        and any(name.startswith("jobguard.validators.rules.") for name in rule.checked_in)
    }
    assert found == expected


# --- citations of docs/RULES.md ------------------------------------------------------------------

CITATION = re.compile(r'docs/RULES\.md,\s+("[^"\n]+"(?:(?:,\s+|\s+and\s+)"[^"\n]+")*)')


def _sources() -> list[tuple[Path, str]]:
    return [(path, path.read_text(encoding="utf-8")) for path in sorted(PACKAGE.rglob("*.py"))]


def _cited(text: str) -> list[str]:
    return [
        heading
        for match in CITATION.finditer(text)
        for heading in re.findall(r'"([^"]+)"', match.group(1))
    ]


def test_citation_pattern() -> None:
    text = 'see docs/RULES.md, "A (X)" and "B (Y)"; docs/RULES.md,\n"C (Z)", "D" (E) "F"'
    assert _cited(text) == ["A (X)", "B (Y)", "C (Z)", "D"]


def test_cited_headings_of_the_rule_reference_exist() -> None:
    headings = set(_headings(DOCS.read_text(encoding="utf-8")))
    cited = [(path.name, heading) for path, text in _sources() for heading in _cited(text)]
    assert ("status.py", "Status invariants (ST)") in cited
    missing = [(name, heading) for name, heading in cited if heading not in headings]
    assert missing == []


def test_no_citation_of_documents_outside_the_repository() -> None:
    for path, text in _sources():
        for match in re.finditer(r"(\S*)RULES\.md", text):
            assert match.group(1).endswith("docs/"), f"{path}: {match.group(0)}"
        assert "§" not in text, path
        assert re.search(r"\bSection [A-Z]\b", text) is None, path


# --- the command line ----------------------------------------------------------------------------


def test_rules_text_lists_one_line_per_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 + len(RULES)
    assert re.split(r"\s{2,}", lines[0]) == [
        "ID",
        "AREA",
        "ENFORCEMENT",
        "BY DEFAULT",
        "SUMMARY",
        "CHECKED IN",
    ]
    rows = {line.split()[0]: re.split(r"\s{2,}", line) for line in lines[1:]}
    assert list(rows) == [rule.id for rule in RULES]
    assert rows["ST-031"] == [
        "ST-031",
        "status",
        "deny",
        "on",
        "finished jobs have a startTime",
        "jobguard.validators.rules.status:validate_job_status",
    ]
    assert rows["NE-004"][:4] == ["NE-004", "suspend", "warn", "off"]
    assert rows["TM-002"][-1] == (
        "no errors of its own (a condition for TM-001, TM-003): "
        "jobguard.validators.strategy:job_options"
    )
    assert rows["SP-010"][-1] == (
        "reported as IM-007: jobguard.validators.rules.immutable:validate_job_spec_update"
    )


def test_rules_markdown_is_the_reference(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert out == DOCS.read_text(encoding="utf-8")
    rows = re.findall(r"^\| [A-Z]+-[0-9]{3} \|.*$", out, re.MULTILINE)
    assert len(rows) == len(RULES)
    assert (
        "| ST-031 | finished jobs have a startTime | on (deny) | "
        "pkg/apis/batch/validation/validation.go: validateJobStatus; "
        "pkg/registry/batch/job/strategy.go: getStatusValidationOptions | "
        "`jobguard.validators.rules.status:validate_job_status` | `jobs/status:UPDATE` | yes: a "
        "status invariant of one object (upstream checks it whenever its fields change) | no: "
        "enforced by the API server itself |"
    ) in rows
    assert (
        "| NE-009 | scheduling directives of a Job that already ran | off (warn) | "
        "jobguard policy (not enforced upstream); follows KEP-5440 (mutable from Kubernetes "
        "1.36) | `jobguard.validators.rules.suspend:check_suspend_update` | `jobs:UPDATE` | "
        "no: judges a change of the template | exported |"
    ) in rows
    assert "| CJ-004 | no Job status rules on CronJobs | on (deny) |" in out
    assert (
        "nothing to check (see `jobguard.validators.rules.cronjob_template:validate_job_template_spec`) |"
        in out
    )


def test_rules_through_the_installed_entry_point() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "jobguard", "rules", "--markdown"],
        capture_output=True,
        check=False,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == render_markdown()


def test_every_rules_flag_has_help() -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    actions = commands["rules"]._actions
    assert {option for a in actions for option in a.option_strings} == {
        "-h",
        "--help",
        "--markdown",
    }
    assert all(a.help for a in actions)


# --- make docs: rewriting README.md's region -----------------------------------------------------


def test_readme_region_is_rewritten_and_nothing_else(tmp_path: Path) -> None:
    path = tmp_path / "README.md"
    before, after = "# title\n\nintro\n\n", "\n## next\n\ntext\n"
    path.write_text(f"{before}{README_BEGIN}\n| stale |\n{README_END}{after}", encoding="utf-8")
    assert rules_doc_main([str(path)]) == 0
    expected = f"{before}{README_BEGIN}\n{render_readme_table()}{README_END}{after}"
    assert path.read_text(encoding="utf-8") == expected
    assert rules_doc_main([str(path)]) == 0
    assert path.read_text(encoding="utf-8") == expected


@pytest.mark.parametrize(
    "text",
    [
        "no markers\n",
        f"{README_END}\n{README_BEGIN}\n",
        f"{README_BEGIN}\n{README_BEGIN}\n{README_END}\n",
    ],
)
def test_readme_without_one_ordered_marker_pair_is_refused(
    tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "README.md"
    path.write_text(text, encoding="utf-8")
    assert rules_doc_main([str(path)]) == 2
    assert "README.md" in capsys.readouterr().err
    assert path.read_text(encoding="utf-8") == text
    with pytest.raises(ReadmeMarkersError):
        replace_readme_table(text, "| x |\n")
