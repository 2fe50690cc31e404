"""A rule's facts are written once, in its catalogue entry (`jobguard.validators.catalog`): the
requests it judges, whether it holds at rest and why, whether it is exported as CEL and why not,
its parameters. Everything else reads them; outside the catalogue a rule ID is written only where
code emits it or is keyed by it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from jobguard.app.config import RULE_PARAMS, parse_config
from jobguard.validators import AT_REST, NOT_AT_REST, RULES, RULES_BY_ID, export_vap
from jobguard.validators.catalog import REQUESTS, AtRest, RuleInfo, _r
from jobguard.validators.registrations import per_policy
from jobguard.validators.vap import NE_BUILDERS, NOT_BUILT, SUS_BUILDERS
from tests.test_vap import everything

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "jobguard"
CATALOG = PACKAGE / "validators" / "catalog.py"
RULES_PACKAGE = PACKAGE / "validators" / "rules"
RULE_ID = re.compile(r"[A-Z]{2,3}-[0-9]{3}")
ID_START = re.compile(r"[A-Z]{2,3}-[0-9]*")
"""How an f-string building rule IDs from numbers starts (`f"JS-00{i}"`)."""


# --- the catalogue's facts ------------------------------------------------------------------------


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.id)
def test_every_rule_states_its_facts(rule: RuleInfo) -> None:
    assert rule.requests and set(rule.requests) <= set(REQUESTS)
    assert len(set(rule.requests)) == len(rule.requests)
    assert rule.at_rest.reason.strip()
    # A reason exactly when never exported; the API server's own rules are never exported.
    assert bool(rule.vap.reason) is not rule.vap.exported
    if rule.upstream:
        assert not rule.vap.exported
    assert set(rule.params) == set(RULE_PARAMS.get(rule.id, ()))


def test_policy_rules_must_say_what_they_judge_and_whether_cel_carries_them() -> None:
    holds = AtRest(holds=True, reason="r")
    with pytest.raises(ValueError, match="say which requests"):
        _r("NE-999", "suspend", "s", at_rest=holds, upstream=False)
    with pytest.raises(ValueError, match="exported as CEL"):
        _r("NE-999", "suspend", "s", at_rest=holds, upstream=False, requests=REQUESTS)
    upstream = _r("TM-999", "template", "s", at_rest=holds)
    assert upstream.requests == RULES_BY_ID["TM-005"].requests
    assert upstream.vap == RULES_BY_ID["TM-005"].vap


def test_views_read_the_catalogue() -> None:
    assert {r.id: r.at_rest.reason for r in RULES if r.at_rest.holds} == AT_REST
    assert {r.id: r.at_rest.reason for r in RULES if not r.at_rest.holds} == NOT_AT_REST
    assert {rule.id for rule in RULES if per_policy(rule)} == {
        f"SUS-00{i}" for i in (1, 2, 3, 4, 5, 6, 8, 9)
    }


def test_cel_builders_are_exactly_the_rules_the_catalogue_exports() -> None:
    exported = {rule.id for rule in RULES if rule.vap.exported}
    assert set(SUS_BUILDERS) | set(NE_BUILDERS) == exported
    assert not set(SUS_BUILDERS) & set(NE_BUILDERS)
    assert all(rule_id.startswith("SUS-") for rule_id in SUS_BUILDERS)
    assert all(rule_id.startswith("NE-") for rule_id in NE_BUILDERS)
    # Only SUS builders decline for a policy, and each that does says why.
    assert set(NOT_BUILT) <= set(SUS_BUILDERS)


def test_a_configuration_enabling_everything_exports_every_exported_rule() -> None:
    export = export_vap(parse_config(everything()).to_settings())
    assert {e.subject for e in export.exported} == {r.id for r in RULES if r.vap.exported}
    reasons = {e.subject: e.reason for e in export.not_exported}
    for rule in RULES:
        if not rule.vap.exported:
            assert reasons[rule.id] == rule.vap.reason


# --- rule IDs outside the catalogue -----------------------------------------------------------


def _is_id(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and RULE_ID.fullmatch(node.value) is not None
    )


def _ids_in(node: ast.AST) -> list[ast.Constant]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Constant) and _is_id(n)]


def _names_ids(node: ast.AST) -> bool:
    """An ID literal, or a tuple, list or set of them (what a comparison tests against)."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_is_id(element) for element in node.elts)
    return _is_id(node)


_FUNCTION = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def _functions(tree: ast.Module) -> set[str]:
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def _code_keyed_by_id(node: ast.Dict, functions: set[str]) -> bool:
    """A dict whose keys are rule IDs and whose values are the module's functions."""
    return (
        bool(node.keys)
        and all(key is not None and _is_id(key) for key in node.keys)
        and all(isinstance(v, ast.Name) and v.id in functions for v in node.values)
    )


def restated_facts(source: str, *, rule_module: bool = False) -> list[tuple[int, str]]:
    """Where a module (not the catalogue) writes down a fact about rules by ID (line, what).

    Allowed: a rule ID inside a function (code that emits it, or reads its configuration); a
    module constant naming one ID (`DECODE_RULE = "DEC-001"`); a dict from IDs to the module's
    functions (code keyed by ID, such as CEL builders). Not allowed: any other table of IDs at
    module level, an ID compared with something in a function (a rule's fact decided in code:
    `rule.id == "IM-008"`), or an f-string making IDs from numbers (a table in disguise).
    Rule modules (`rule_module`) compare IDs as they please: the IDs are theirs.
    """
    tree = ast.parse(source)
    functions = _functions(tree)
    found: list[tuple[int, str]] = []
    in_functions: set[int] = set()
    keyed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, _FUNCTION):
            in_functions |= {id(n) for n in ast.walk(node)}
        if isinstance(node, ast.Dict) and _code_keyed_by_id(node, functions):
            keyed |= {id(key) for key in node.keys if key is not None}
        if isinstance(node, ast.JoinedStr) and node.values:
            first = node.values[0]
            if (
                isinstance(first, ast.Constant)
                and isinstance(first.value, str)
                and ID_START.fullmatch(first.value)
                and len(node.values) > 1
            ):
                found.append((node.lineno, f"an ID built from a number: f{first.value!r}..."))
        if (
            isinstance(node, ast.Compare)
            and not rule_module
            and any(_names_ids(operand) for operand in (node.left, *node.comparators))
        ):
            found.append((node.lineno, "an ID compared in code"))
    constants = {
        id(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and node.value is not None
        and _is_id(node.value)
    }
    for literal in _ids_in(tree):
        if id(literal) in in_functions or id(literal) in keyed or id(literal) in constants:
            continue
        found.append((literal.lineno, f"{literal.value!s} in a table"))
    return sorted(found)


def test_the_scan_catches_tables_and_decisions_and_allows_code() -> None:
    restating = (
        'AT_REST = {"TM-005": "spec", **{f"JS-00{i}": "spec" for i in range(1, 9)}}\n'
        'REQUESTS = {"NE-001": ("jobs:UPDATE",)}\n'
        "def judged(rule):\n"
        '    if rule.id == "IM-008":\n'
        '        return ("jobs:CREATE",)\n'
        '    return "why" if rule.id in ("SUS-003", "SUS-008") else ""\n'
        "class C:\n"
        '    KIND = "NE-001"\n'
    )
    assert restated_facts(restating) == [
        (1, "TM-005 in a table"),
        (1, "an ID built from a number: f'JS-00'..."),
        (2, "NE-001 in a table"),
        (4, "an ID compared in code"),
        (6, "an ID compared in code"),
        (8, "NE-001 in a table"),
    ]
    allowed = (
        'DECODE_RULE = "DEC-001"\n'
        'def _sus_001(scope):\n    return forbidden("SUS-001", "spec.suspend", "")\n'
        'BUILDERS = {"SUS-001": _sus_001}\n'
        'def read(settings):\n    return settings.enforcements["NE-007"] is not None\n'
    )
    assert restated_facts(allowed) == []
    assert restated_facts('def f(e):\n    return e.rule == "TM-001"\n', rule_module=True) == []


def _modules() -> list[Path]:
    return [path for path in sorted(PACKAGE.rglob("*.py")) if path != CATALOG]


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_rule_facts_are_written_only_in_the_catalogue(path: Path) -> None:
    rule_module = path.parent == RULES_PACKAGE
    assert restated_facts(path.read_text(encoding="utf-8"), rule_module=rule_module) == []


def test_the_catalogue_is_where_the_facts_are() -> None:
    facts = restated_facts(CATALOG.read_text(encoding="utf-8"))
    assert {what for _, what in facts} >= {"NE-002 in a table", "SUS-008 in a table"}
