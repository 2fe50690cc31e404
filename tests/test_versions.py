"""The one table of releases (jobguard/validators/versions.py): every version-dependent
decision reads it, unknown versions are refused, a newer cluster gets the newest release's
semantics; and the verdict changes of the 1.37 line."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from jobguard.validators.rules.pod_common import pod_options
from jobguard.validators.versions import (
    CHANGES,
    GATES,
    RELEASES,
    Release,
    Semantics,
    UnsupportedVersionError,
    choose_version,
)
from tests.builders import causes, job, settings, update

ROOT = Path(__file__).resolve().parents[1]


def test_the_table_names_only_supported_releases() -> None:
    keys = [tuple(int(p) for p in v.split(".")) for v in RELEASES]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    for since in [*GATES.values(), *CHANGES.values()]:
        assert since is None or since in RELEASES


def test_rules_never_compare_version_strings() -> None:
    # Any "1.NN" literal in the rule library outside the table is a decision the table misses.
    literal = re.compile(r"""["']1\.\d\d["']""")
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "jobguard" / "validators").rglob("*.py"))
        if path.name != "versions.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if literal.search(line)
    ]
    assert offenders == []


@pytest.mark.parametrize("version", ["1.32", "1.38", "", "v1.37", "1.37.2"])
def test_an_unknown_version_is_refused_everywhere(version: str) -> None:
    with pytest.raises(UnsupportedVersionError, match="accepted values are"):
        Semantics.for_version(version)
    with pytest.raises(UnsupportedVersionError):
        pod_options(version)
    with pytest.raises(UnsupportedVersionError):
        Release.of(version)


def test_a_gate_not_in_the_table_is_an_error_not_off() -> None:
    with pytest.raises(KeyError):
        Release.of("1.37").gate("NoSuchGate")


@pytest.mark.parametrize(
    ("major", "minor", "chosen", "exact", "newer"),
    [
        ("1", "37", "1.37", True, False),
        ("1", "38", "1.37", False, True),
        ("1", "40+", "1.37", False, True),
        ("1", "29", "1.33", False, False),
    ],
)
def test_choose_version(major: str, minor: str, chosen: str, exact: bool, newer: bool) -> None:
    choice = choose_version(major, minor)
    assert (choice.version, choice.exact, choice.newer) == (chosen, exact, newer)


def test_the_gates_each_release_turns_on() -> None:
    on = {v: {g for g in GATES if Release.of(v).gate(g)} for v in RELEASES}
    assert on["1.37"] - on["1.36"] == {
        "SELinuxMount",
        "ClusterTrustBundleProjection",
        "PodCertificateRequest",
    }
    assert "TaintTolerationComparisonOperators" not in on["1.37"]


def test_an_update_of_a_job_is_validated_once_from_1_37() -> None:
    """1.36: ValidateJob then ValidateJobUpdate (the spec's errors twice in `causes`); 1.37:
    ValidateJobUpdate alone."""
    stored = job(parallelism=-1)
    changed = copy.deepcopy(stored)
    changed["metadata"]["labels"] = {"team": "a"}
    spec_error = ("JS-001", "spec.parallelism", "FieldValueInvalid")

    def all_causes(version: str) -> list[tuple[str, str, str]]:
        verdict = update(changed, stored, settings(version))
        return [(v.error.rule, v.error.path, v.error.type.reason) for v in verdict.violations]

    assert all_causes("1.36").count(spec_error) == 2
    assert all_causes("1.37").count(spec_error) == 1
    assert causes(update(changed, stored, settings("1.37"))) == [spec_error]


def test_the_generated_selector_is_checked_on_update_only_before_1_37() -> None:
    """validateGeneratedSelector is part of ValidateJob(Create): 1.37 no longer runs it on
    UPDATE."""
    stored = job()
    stored["spec"]["template"]["metadata"]["labels"]["job-name"] = "other"
    changed = copy.deepcopy(stored)
    changed["metadata"]["labels"] = {"team": "a"}
    assert [c[0] for c in causes(update(changed, stored, settings("1.36")))] == ["TM-005"]
    assert causes(update(changed, stored, settings("1.37"))) == []


def test_share_process_namespace_with_host_pid_moved_in_1_37() -> None:
    """1.37 validateShareProcessNamespace: after the pod security context, at the pod spec's
    path (before: inside validatePodSpecSecurityContext, under securityContext)."""
    from tests.builders import create, detailed_causes
    from tests.pod_cases import job as pod_job

    obj = pod_job(
        shareProcessNamespace=True,
        hostPID=True,
        securityContext={"fsGroupChangePolicy": "Sometimes"},
    )
    share = "Invalid value: true: ShareProcessNamespace and HostPID cannot both be enabled"
    fs = 'Unsupported value: "Sometimes": supported values: "Always", "OnRootMismatch"'
    s = "spec.template.spec"

    def found(version: str) -> list[tuple[str, str]]:
        causes = detailed_causes(create(obj, settings(version)))
        return [(c[1], c[3]) for c in causes if c[0] == "POD-018"]

    assert found("1.36") == [
        (f"{s}.securityContext.shareProcessNamespace", share),
        (f"{s}.securityContext.fsGroupChangePolicy", fs),
    ]
    assert found("1.37") == [
        (f"{s}.securityContext.fsGroupChangePolicy", fs),
        (f"{s}.shareProcessNamespace", share),
    ]


def test_a_windows_pod_s_host_namespace_fields_moved_in_1_37() -> None:
    """validateWindows: 1.37 checks hostPID after the security context's fields."""
    from tests.builders import create, detailed_causes
    from tests.pod_cases import job as pod_job

    obj = pod_job(os={"name": "windows"}, hostPID=True, securityContext={"runAsUser": 1})
    s = "spec.template.spec"

    def paths(version: str) -> list[str]:
        causes = detailed_causes(create(obj, settings(version)))
        return [c[1] for c in causes if c[0] == "POD-019"]

    assert paths("1.36") == [f"{s}.hostPID", f"{s}.securityContext.runAsUser"]
    assert paths("1.37") == [f"{s}.securityContext.runAsUser", f"{s}.hostPID"]
