"""`jobguard export vap`: the policies it writes are valid objects for the target version, say
what the webhook says on the webhook's own policy cases (evaluated with cel-cpp, see
tests/vap_eval.py), and every rule is reported as exported or not, with the reason."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import orjson
import pytest
import yaml

from jobguard.app.cli.main import main
from jobguard.app.config import parse_config
from jobguard.validators import SUPPORTED_VERSIONS, Semantics, export_vap
from jobguard.validators.vap import object_name
from tests.corpus import KUEUE_SETUP
from tests.test_policy import config_text
from tests.vap_cases import (
    DOCS,
    NE_ALL,
    PolicyCase,
    cel_findings,
    policy_cases,
    render,
    webhook_findings,
)
from tests.vap_eval import ENV


def everything(version: str = "1.35") -> str:
    """Every SUS and NE rule on (SUS-002 as warn), users may not suspend."""
    return config_text(
        version=version,
        users_may_suspend=False,
        rules={"NE-00*": {"enabled": True}, "SUS-002": {"enforcement": "warn"}},
    )


EVERYTHING = everything()


@pytest.mark.parametrize("case", policy_cases(), ids=lambda c: c.name)
def test_webhook_and_exported_cel_agree(case: PolicyCase) -> None:
    # The same rules, validation actions and messages ("RULE: path: Forbidden: ...").
    assert cel_findings(case) == webhook_findings(case)


def test_the_cases_exercise_every_exported_rule_and_action() -> None:
    fired = {f for case in policy_cases() for f in webhook_findings(case)}
    assert {rule for rule, _, _ in fired} == {f"SUS-00{i}" for i in (1, 2, 3, 4, 5, 6, 8, 9)} | {
        f"NE-00{i}" for i in range(1, 10)
    }
    assert {action for _, action, _ in fired} == {"Deny", "Warn", "Audit"}
    allowed = [c for c in policy_cases() if not webhook_findings(c)]
    assert len(allowed) >= 30  # the policies also let through what the webhook lets through


def test_docs_agreement_table_is_current() -> None:
    text = DOCS.read_text()
    assert text == render(text), "docs/VAP.md is stale: run `python -m tests.vap_cases`"
    assert "**no**" not in text


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_exported_objects_are_valid_for_the_target_version(version: str) -> None:
    export = export_vap(parse_config(everything(version)).to_settings())
    assert export.version == version
    kinds = [o["kind"] for o in export.objects]
    assert kinds == ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"] * (
        len(kinds) // 2
    )
    for obj in export.objects:
        kubernetes_validate.validate(obj, f"{version}.0", strict=True)
    # From 1.36 NE-009 never fires (KEP-5440), so it is not exported there.
    assert len(kinds) // 2 == (
        16
        if Semantics.for_version(version).mutable_scheduling_directives_for_suspended_jobs
        else 17
    )


def test_every_expression_compiles_in_cel_cpp() -> None:
    export = export_vap(parse_config(EVERYTHING).to_settings())
    expressions = []
    for obj in export.objects:
        spec = obj["spec"]
        for key in ("matchConditions", "variables", "validations"):
            for item in spec.get(key, []):
                expressions += [item.get("expression"), item.get("messageExpression")]
    compiled = [ENV.compile(e) for e in expressions if e]
    assert len(compiled) >= 35


def test_enforcement_maps_to_validation_actions() -> None:
    export = export_vap(parse_config(EVERYTHING).to_settings())
    actions = {
        o["metadata"]["annotations"]["jobguard.io/rule"]: o["spec"]["validationActions"]
        for o in export.objects
        if o["kind"] == "ValidatingAdmissionPolicyBinding"
    }
    assert actions["SUS-001"] == ["Deny"]
    assert actions["SUS-002"] == ["Warn"]
    assert actions["NE-004"] == ["Warn"]  # warn by default
    dryrun = export_vap(
        parse_config(config_text(rules={"SUS-*": {"enforcement": "dryrun"}})).to_settings()
    )
    assert {
        tuple(o["spec"]["validationActions"])
        for o in dryrun.objects
        if o["kind"] == "ValidatingAdmissionPolicyBinding"
        and o["metadata"]["annotations"]["jobguard.io/rule"].startswith("SUS-")
    } == {("Audit",)}


def test_policy_objects_carry_the_configuration() -> None:
    export = export_vap(parse_config(KUEUE_SETUP.read_text()).to_settings())
    policy = next(o for o in export.objects if o["metadata"]["name"] == "jobguard-sus-002-queued")
    constraints = policy["spec"]["matchConstraints"]
    assert constraints["resourceRules"] == [
        {
            "apiGroups": ["batch"],
            "apiVersions": ["v1"],
            "operations": ["UPDATE"],
            "resources": ["jobs"],
            "scope": "Namespaced",
        }
    ]
    # Exact exempt namespaces select namespaces; team-* is a glob, left to the match condition.
    assert constraints["namespaceSelector"] == {
        "matchExpressions": [
            {
                "key": "kubernetes.io/metadata.name",
                "operator": "NotIn",
                "values": ["kube-system", "kueue-system"],
            }
        ]
    }
    assert constraints["objectSelector"] == {
        "matchExpressions": [{"key": "kueue.x-k8s.io/queue-name", "operator": "Exists"}]
    }
    assert [c["name"] for c in policy["spec"]["matchConditions"]] == [
        "not-exempt",
        "not-a-controller",
        "policy-applies",
    ]
    (validation,) = policy["spec"]["validations"]
    assert validation["message"] == (
        "SUS-002: spec.suspend: Forbidden: only kueue-system:kueue-controller-manager may resume "
        "jobs matched by policy 'queued'"
    )
    assert validation["reason"] == "Forbidden"
    assert policy["spec"]["failurePolicy"] == "Fail"
    ne002 = next(o for o in export.objects if o["metadata"]["name"] == "jobguard-ne-002")
    assert ne002["spec"]["matchConstraints"]["resourceRules"][0]["resources"] == ["jobs/status"]
    assert ne002["spec"]["failurePolicy"] == "Ignore"


def test_what_is_not_exported_says_why() -> None:
    export = export_vap(parse_config(KUEUE_SETUP.read_text()).to_settings())
    reasons = {e.subject: e.reason for e in export.not_exported}
    assert reasons["TM-001"] == "enforced by the API server itself"
    assert reasons["DEC-001"] == "the API server decodes objects itself"
    assert reasons["NE-003"] == "disabled in the configuration"
    assert reasons["forceSuspendOnCreate (policy 'queued')"].startswith(
        "the mutating webhook has no ValidatingAdmissionPolicy equivalent"
    )
    assert {e.subject for e in export.exported} == {
        "NE-001",
        "NE-002",
        *(f"SUS-00{i}" for i in (1, 2, 3, 4, 5, 6, 8, 9)),
    }
    assert reasons["SUS-007"].startswith("informational note on CronJobs")
    assert len(export.entries) == len({e.subject for e in export.entries})
    users_may_suspend = export_vap(parse_config(config_text()).to_settings())
    assert {e.subject: e.reason for e in users_may_suspend.not_exported}["SUS-003"] == (
        "every suspend policy lets users suspend (usersMaySuspend: true)"
    )
    no_force = export_vap(parse_config(config_text(force_suspend=False)).to_settings())
    assert {e.subject: e.reason for e in no_force.not_exported}["SUS-008"] == (
        "no suspend policy sets forceSuspendOnCreate"
    )
    no_built_in = KUEUE_SETUP.read_text().replace(
        "exemptions:\n", "exemptions:\n  builtIn: false\n"
    )
    assert {
        e.subject: e.reason
        for e in export_vap(parse_config(no_built_in).to_settings()).not_exported
    }["SUS-008"].startswith("the built-in controllers are not exempt")
    no_policies = export_vap(parse_config("{}").to_settings())
    assert {e.subject: e.reason for e in no_policies.not_exported}["SUS-001"] == (
        "no suspend policies are configured"
    )
    on_136 = export_vap(parse_config(NE_ALL.replace("'1.35'", "'1.36'")).to_settings())
    assert {e.subject: e.reason for e in on_136.not_exported}["NE-009"].startswith(
        "never fires on Kubernetes 1.36"
    )


def test_object_names_are_dns_subdomains() -> None:
    assert object_name("sus-001", "queued") == "jobguard-sus-001-queued"
    odd = object_name("sus-001", "Queued Jobs!")
    assert odd.startswith("jobguard-sus-001-queued-jobs-") and len(odd) <= 253
    assert odd != object_name("sus-001", "queued jobs")


def test_export_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "vap", "--config", str(KUEUE_SETUP)]) == 0
    out, err = capsys.readouterr()
    objects = list(yaml.safe_load_all(out))
    assert objects == export_vap(parse_config(KUEUE_SETUP.read_text()).to_settings()).objects
    assert "exported: SUS-002 (deny -> Deny): jobguard-sus-002-queued" in err.splitlines()
    assert "not exported: DEC-001: the API server decodes objects itself" in err.splitlines()
    assert any(
        line.startswith("not exported: TM-001, TM-002,")
        and line.endswith(": enforced by the API server itself")
        for line in err.splitlines()
    )
    assert (
        "not exported: NE-003, NE-004, NE-005, NE-006, NE-007, NE-008, NE-009: disabled in the configuration"
        in err
    )
    assert (
        main(
            [
                "export",
                "vap",
                "--config",
                str(KUEUE_SETUP),
                "--output",
                "json",
                "--kubernetes-version",
                "1.36",
            ]
        )
        == 0
    )
    out, err = capsys.readouterr()
    body: dict[str, Any] = orjson.loads(out)
    assert body["kind"] == "List" and len(body["items"]) == len(objects)
    assert "for Kubernetes 1.36" in err


def test_export_command_rejects_what_it_cannot_use(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kubernetesVersion: 1.30\n")
    assert main(["export", "vap", "--config", str(bad)]) == 2
    auto = tmp_path / "auto.yaml"
    auto.write_text("kubernetesVersion: auto\n")
    assert main(["export", "vap", "--config", str(auto)]) == 2
    assert "give --kubernetes-version" in capsys.readouterr().err
    assert main(["export", "vap", "--config", str(auto), "--kubernetes-version", "1.34"]) == 0
