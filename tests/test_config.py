"""The configuration file: versions, rule overrides, errors with key path and line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jobguard.app.config import (
    MAX_CONFIG_BYTES,
    MAX_DEPTH,
    MAX_NODES,
    ConfigError,
    effective_config,
    load_config,
    parse_config,
)
from jobguard.validators import SUPPORTED_VERSIONS, Enforcement


def test_defaults() -> None:
    settings = parse_config("{}").to_settings()
    assert settings.semantics.version == "1.35"
    assert settings.enabled("TM-001") and not settings.enabled("NE-003")
    assert settings.enabled("NE-001") and settings.enabled("NE-002")


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_supported_versions(version: str) -> None:
    assert (
        parse_config(f"kubernetesVersion: '{version}'").to_settings().semantics.version == version
    )


@pytest.mark.parametrize("value", ["'1.32'", "'1.38'", "1.35", "latest"])
def test_unsupported_version_names_accepted_values(value: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(f"kubernetesVersion: {value}\n", "cfg.yaml")
    assert str(info.value).startswith("cfg.yaml:1: kubernetesVersion: ")
    assert 'accepted values are "1.33", "1.34", "1.35", "1.36", "1.37"' in str(info.value)


def test_rule_overrides_with_globs_and_exact_ids() -> None:
    settings = parse_config(
        "rules:\n  'ST-*': {enforcement: warn}\n  ST-001: {enforcement: deny}\n"
        "  NE-001: {enabled: true}\n"
    ).to_settings()
    assert settings.rule("ST-002").enforcement is Enforcement.WARN
    assert settings.rule("ST-001").enforcement is Enforcement.DENY
    assert settings.enabled("NE-001")


def test_errors_name_key_path_and_line() -> None:
    with pytest.raises(ConfigError, match=r"^c.yaml:3: rules.NE-001.enabled: "):
        parse_config("kubernetesVersion: '1.35'\nrules:\n  NE-001: {enabled: 'maybe'}\n", "c.yaml")
    with pytest.raises(ConfigError, match=r"^c.yaml:1: bogus: Extra inputs"):
        parse_config("bogus: 1\n", "c.yaml")
    with pytest.raises(ConfigError, match="matches no rule ID"):
        parse_config("rules:\n  XX-*: {enabled: false}\n", "c.yaml")
    with pytest.raises(ConfigError, match="not valid YAML"):
        parse_config("rules: [\n", "c.yaml")


def test_global_enforcement_applies_to_deny_by_default_rules() -> None:
    warn = parse_config("enforcement: warn\n").to_settings()
    assert warn.rule("SUS-002").enforcement is Enforcement.WARN
    assert warn.rule("TM-001").enforcement is Enforcement.WARN
    assert warn.rule("NE-001").enforcement is Enforcement.WARN
    assert warn.rule("NE-004").enforcement is Enforcement.WARN
    dryrun = parse_config("enforcement: dryrun\n").to_settings()
    assert dryrun.rule("NE-004").enforcement is Enforcement.DRYRUN
    assert dryrun.rule("SUS-001").enforcement is Enforcement.DRYRUN
    deny = parse_config("{}").to_settings()
    assert deny.rule("NE-004").enforcement is Enforcement.WARN
    assert deny.rule("SUS-005").enforcement is Enforcement.DENY


# --- every problem at once, with hints ------------------------------------------------------------

MISTAKES = """kubernetesVersion: 1.35
enforcment: deny
rules:
  NE-07: {enabled: true}
  NE-007: {enabled: true, params: {user: [a]}}
  "ST-*": {enforcement: block}
exemptions:
  serviceAccounts: [kueue]
"""


def test_every_problem_is_reported_at_once_in_line_order() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(MISTAKES, "cfg.yaml")
    assert str(info.value).splitlines() == [
        'cfg.yaml:1: kubernetesVersion: unsupported kubernetesVersion 1.35: accepted values are "1.33", '
        '"1.34", "1.35", "1.36", "1.37"; quote it, as in kubernetesVersion: "1.35" (YAML reads an unquoted '
        "1.35 as a number)",
        "cfg.yaml:2: enforcment: Extra inputs are not permitted; did you mean enforcement?",
        "cfg.yaml:4: rules.NE-07: 'NE-07' matches no rule ID; did you mean NE-007? `jobguard rules` "
        "lists them",
        "cfg.yaml:5: rules.NE-007.params.user: NE-007 takes no parameter 'user' (parameters: "
        "groups, users)",
        "cfg.yaml:6: rules.ST-*.enforcement: Input should be 'deny', 'warn' or 'dryrun'",
        "cfg.yaml:8: exemptions.serviceAccounts: 'kueue' is not \"namespace:name\"",
    ]
    assert [p.line for p in info.value.problems] == [1, 2, 4, 5, 6, 8]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "rules:\n  TM-001: {params: {users: [a]}}\n",
            "TM-001 takes no parameter 'users' (parameters: none)",
        ),
        (
            "rules:\n  NE-007: {params: {users: a}}\n",
            'rules.NE-007.params.users: must be of type array: "string"',
        ),
        ("exemptions: {builtin: false}\n", "did you mean builtIn?"),
    ],
    ids=["no-params", "params-are-lists", "misspelt-builtIn"],
)
def test_parameter_and_key_mistakes(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "c.yaml")
    assert expected in str(info.value)


def test_rule_parameters_are_given_to_the_rule() -> None:
    settings = parse_config("rules:\n  NE-007: {params: {users: [a], groups: [g]}}\n").to_settings()
    assert settings.params["NE-007"] == {"users": ["a"], "groups": ["g"]}


# --- fail safe: files that must not be taken for a configuration ----------------------------------

MINIMAL_POLICY = (
    "suspendPolicies:\n"
    "  - name: p\n"
    "    match: {namespaces: ['*']}\n"
    "    controllers: {users: [kueue]}\n"
)


@pytest.mark.parametrize("text", ["", "\n\n", "# only\n# comments\n", "---\n", "~\n"])
def test_an_empty_or_comment_only_file_is_an_error(text: str) -> None:
    with pytest.raises(ConfigError, match=r"^c.yaml: holds no configuration .* write \{\}"):
        parse_config(text, "c.yaml")


def test_no_file_means_the_defaults_and_so_does_an_empty_mapping(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("{}\n")
    assert load_config(str(path)) == load_config(None) == parse_config("# defaults\n{}\n")
    path.write_text("")
    with pytest.raises(ConfigError, match=f"^{path}: holds no configuration"):
        load_config(str(path))


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("rules: " + "[" * 20_000 + "]" * 20_000, 1),
        ("a: " + "{a: " * 20_000 + "1" + "}" * 20_000, 1),
        ("rules:\n" + "".join("  " * i + "- \n" for i in range(1, 200)), 101),
    ],
    ids=["flow-lists", "flow-mappings", "block-lists"],
)
def test_nesting_deeper_than_the_limit_is_refused_before_the_parser_recurses(
    text: str, line: int
) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "c.yaml")
    assert str(info.value) == (
        f"c.yaml:{line}: nested deeper than {MAX_DEPTH} levels of mappings and lists"
    )


def test_nesting_up_to_the_limit_is_parsed() -> None:
    text = "rules: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"
    with pytest.raises(ConfigError, match="rules: must be of type object"):
        parse_config(text, "c.yaml")


def test_aliases_count_expanded() -> None:
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for level in "bcde":
        previous = chr(ord(level) - 1)
        laughs += f"{level}: &{level} [{', '.join([f'*{previous}'] * 10)}]\n"
    with pytest.raises(ConfigError, match=rf"^c.yaml:\d: more than {MAX_NODES} values"):
        parse_config(laughs, "c.yaml")
    deep = "a: &a " + "[" * 60 + "]" * 60 + "\nb: " + "[" * 50 + "*a" + "]" * 50 + "\n"
    with pytest.raises(ConfigError, match=r"^c.yaml:2: nested deeper than 100"):
        parse_config(deep, "c.yaml")
    with pytest.raises(ConfigError, match=r"^c.yaml:1: the alias \*a is inside its own anchor"):
        parse_config("a: &a [*a]\n", "c.yaml")
    shared = "exemptions: {users: &ops [ops], groups: *ops}\n"
    assert parse_config(shared).to_settings().policies.exemptions.subjects.groups == ("ops",)


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("# padding\n" * (MAX_CONFIG_BYTES // 10 + 1) + "{}\n")
    size = path.stat().st_size
    with pytest.raises(ConfigError) as info:
        load_config(str(path))
    assert str(info.value) == (
        f"{path}: larger than {MAX_CONFIG_BYTES} bytes (1 MiB, what a ConfigMap holds): "
        f"{size} bytes"
    )
    with pytest.raises(ConfigError, match=r"^c\.yaml: larger than"):
        parse_config(path.read_text(), "c.yaml")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"kubernetesVersion: '1.35'\nrules: \xff\n", "c.yaml:2: not UTF-8 text (byte 33)"),
        (b"kubernetesVersion: 2026-13-01\n", "c.yaml: not valid YAML: month must be in 1..12"),
    ],
    ids=["not-utf8", "impossible-date"],
)
def test_reader_failures_are_config_errors(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as info:
        load_config(str(path))
    assert str(info.value) == expected.replace("c.yaml", str(path))


# --- suspend policies must say what they match and who controls it -------------------------------


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("{name: p, controllers: {users: [k]}}", "suspendPolicies[0].match: Field required"),
        ("{name: p, match: {namespaces: [a]}}", "suspendPolicies[0].controllers: Field required"),
        (
            "{name: p, match: {}, controllers: {users: [k]}}",
            'suspendPolicies[0].match: give namespaces or labelSelector (namespaces: ["*"]',
        ),
        (
            "{name: p, match: {namespaces: []}, controllers: {users: [k]}}",
            'match.namespaces: name at least one namespace, or "*" for every namespace',
        ),
        (
            "{name: p, match: {namespaces: ['*', a]}, controllers: {users: [k]}}",
            'match.namespaces: "*" (every namespace) stands alone',
        ),
        (
            "{name: p, match: {labelSelector: {matchLabels: {}}}, controllers: {users: [k]}}",
            "match.labelSelector: an empty labelSelector selects every Job",
        ),
        (
            "{name: p, match: {namespaces: [a]}, controllers: {}}",
            "suspendPolicies[0].controllers: name at least one of users, groups or "
            "serviceAccounts (else nobody may resume)",
        ),
        (
            "{name: p, match: {namespaces: [a]}, controllers: {users: [], groups: []}}",
            "suspendPolicies[0].controllers: name at least one of users",
        ),
    ],
    ids=[
        "no-match",
        "no-controllers",
        "empty-match",
        "no-namespace",
        "star-with-others",
        "empty-selector",
        "empty-controllers",
        "empty-lists",
    ],
)
def test_a_policy_must_say_what_it_matches_and_who_controls_it(policy: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(f"suspendPolicies:\n  - {policy}\n", "c.yaml")
    assert expected in str(info.value)
    assert str(info.value).startswith("c.yaml:2: suspendPolicies[0].")


def test_star_means_every_namespace() -> None:
    policy = parse_config(MINIMAL_POLICY).to_settings().policies.policies[0]
    assert policy.namespaces is None and policy.matches("any", {})
    assert effective_config(parse_config(MINIMAL_POLICY).to_settings())["suspendPolicies"][0][
        "match"
    ] == {"namespaces": ["*"]}


@pytest.mark.parametrize(
    ("text", "path"),
    [
        (
            MINIMAL_POLICY + "    forceSuspendOnCreate: 'no'\n",
            "suspendPolicies[0].forceSuspendOnCreate",
        ),
        (MINIMAL_POLICY + "    usersMaySuspend: 'false'\n", "suspendPolicies[0].usersMaySuspend"),
        ("exemptions: {builtIn: 'false'}\n", "exemptions.builtIn"),
        ("rules: {NE-001: {enabled: 'yes'}}\n", "rules.NE-001.enabled"),
        ("rules: {NE-001: {enabled: 1}}\n", "rules.NE-001.enabled"),
    ],
)
def test_booleans_are_strict(text: str, path: str) -> None:
    with pytest.raises(ConfigError, match=rf": {re.escape(path)}: must be of type boolean"):
        parse_config(text, "c.yaml")


_POLICY = "controllers: {{users: [x]}}, match: {{{match}}}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "exemptions: {namespaces: ['team-[^x]*']}",
            "cfg.yaml:1: exemptions.namespaces[0]: not a namespace name or glob: 'team-[^x]*': "
            "'[^' is a negation in Go and shells but a literal '^' in fnmatch; write '[!...]' "
            "to negate",
        ),
        (
            "suspendPolicies: [{name: q, " + _POLICY.format(match="namespaces: [Team-A]") + "}]",
            "cfg.yaml:1: suspendPolicies[0].match.namespaces[0]: not a namespace name or glob: "
            "'Team-A': 'T' cannot occur in a name",
        ),
        (
            "rules: {'NE-00[1': {enabled: true}}",
            "cfg.yaml:1: rules.NE-00[1: 'NE-00[1': '[' at 5 is never closed",
        ),
        (
            "suspendPolicies: [{name: q, "
            + _POLICY.format(match="labelSelector: {matchLabels: {q: ''}}")
            + "}]",
            "cfg.yaml:1: suspendPolicies[0].match.labelSelector.matchLabels: q: the empty value "
            "is never matched: a policy reads a label with an empty value as absent (as Kueue "
            "reads an empty queue name); use DoesNotExist or NotIn to say absent",
        ),
        (
            "suspendPolicies: [{name: q, "
            + _POLICY.format(
                match="labelSelector: {matchExpressions: [{key: q, operator: NotIn, values: ['']}]}"
            )
            + "}]",
            "cfg.yaml:1: suspendPolicies[0].match.labelSelector.matchExpressions: q: the empty "
            "value is never matched",
        ),
    ],
)
def test_globs_and_empty_values_that_would_read_differently_are_refused(
    text: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "cfg.yaml")
    assert str(info.value).startswith(expected)


def test_rule_globs_whose_outcome_depends_on_their_order_are_refused() -> None:
    text = "rules:\n  'SUS-0??': {enforcement: warn}\n  'SUS-00[18]': {enforcement: deny}\n"
    with pytest.raises(ConfigError) as info:
        parse_config(text, "cfg.yaml")
    assert str(info.value) == (
        "cfg.yaml:3: rules.SUS-00[18]: 'SUS-0??' and 'SUS-00[18]' both set enforcement of "
        "SUS-001, SUS-008 (warn and deny): the outcome would depend on the order of the keys, "
        "which YAML tools and Helm do not keep; set these rules by exact ID, or make the globs "
        "disjoint"
    )
    # An exact entry decides, whatever the globs say; disjoint or agreeing globs are fine.
    for extra in ("  SUS-001: {enforcement: deny}\n  SUS-008: {enforcement: deny}\n",):
        settings = parse_config(text + extra).to_settings()
        assert settings.rule("SUS-001").enforcement is Enforcement.DENY
        assert settings.rule("SUS-002").enforcement is Enforcement.WARN
    parse_config("rules:\n  'SUS-0??': {enforcement: warn}\n  'SUS-00[18]': {enabled: true}\n")


def test_overlaps_among_many_policies_of_exact_names_are_found_by_name() -> None:
    """150 policies of 40 exact namespaces each (the size of a 1 MiB configuration's), each
    sharing one name with the next, and a glob policy meeting only the last: the 149 + 1
    overlaps, each named (every pair of names compared by automaton took minutes)."""
    from jobguard.app.config import config_warnings

    policies = []
    for i in range(150):
        names = [f"team-{i:03d}-{n:02d}" for n in range(40)] + [f"shared-{i + 1:03d}"]
        if i:
            names.append(f"shared-{i:03d}")
        policies.append(
            f"  - {{name: p{i:03d}, controllers: {{users: [k]}}, match: {{namespaces: {names}}}}}"
        )
    policies.append(
        "  - {name: last, controllers: {users: [k]}, match: {namespaces: ['*-149-3?']}}"
    )
    warnings = config_warnings(
        parse_config("suspendPolicies:\n" + "\n".join(policies)).to_settings()
    )
    pairs = [w.split(":")[0] for w in warnings]
    expected = [
        f"suspend policies 'p{i - 1:03d}' and 'p{i:03d}' can match the same Jobs"
        for i in range(1, 150)
    ]
    assert pairs == [*expected, "suspend policies 'p149' and 'last' can match the same Jobs"]


def test_overlapping_policies_are_warned_about_with_the_consequence() -> None:
    from jobguard.app.config import config_warnings

    queue = "labelSelector: {matchExpressions: [{key: q, operator: Exists}]}"
    text = (
        "suspendPolicies:\n"
        f"  - {{name: plain, controllers: {{users: [x]}}, match: {{namespaces: [team-a], {queue}}}}}\n"
        f"  - {{name: queued, forceSuspendOnCreate: true, controllers: {{users: [k]}},"
        f" match: {{namespaces: ['team-*'], {queue}}}}}\n"
        "  - {name: apart, controllers: {users: [x]}, match: {namespaces: ['team-[!a]*'],"
        " labelSelector: {matchExpressions: [{key: q, operator: DoesNotExist}]}}}\n"
    )
    assert config_warnings(parse_config(text).to_settings()) == [
        "suspend policies 'plain' and 'queued' can match the same Jobs: the first whose match "
        "fits applies, so 'queued' never applies to them: they are not suspended on CREATE "
        "('queued' forces it, 'plain' does not: the cronjob-controller's Jobs start at once); "
        "x (not k) resume and re-place them. List the narrower policy first, or make their "
        "matches disjoint"
    ]
