"""The configuration file: versions, rule overrides, errors with key path and line."""

from __future__ import annotations

import pytest

from jobguard.app.config import ConfigError, parse_config
from jobguard.validators import Enforcement


def test_defaults() -> None:
    settings = parse_config("{}").to_settings()
    assert settings.semantics.version == "1.35"
    assert settings.enabled("TM-001") and not settings.enabled("NE-003")
    assert settings.enabled("NE-001") and settings.enabled("NE-002")


@pytest.mark.parametrize("version", ["1.33", "1.34", "1.35", "1.36"])
def test_supported_versions(version: str) -> None:
    assert (
        parse_config(f"kubernetesVersion: '{version}'").to_settings().semantics.version == version
    )


@pytest.mark.parametrize("value", ["'1.32'", "'1.37'", "1.35", "latest"])
def test_unsupported_version_names_accepted_values(value: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(f"kubernetesVersion: {value}\n", "cfg.yaml")
    assert str(info.value).startswith("cfg.yaml:1: kubernetesVersion: ")
    assert 'accepted values are "1.33", "1.34", "1.35", "1.36"' in str(info.value)


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
        '"1.34", "1.35", "1.36"; quote it, as in kubernetesVersion: "1.35" (YAML reads an unquoted '
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
