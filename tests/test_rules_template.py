"""Section A: template mutability (TM-001..TM-007) and immutable fields (IM-001..IM-008)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.builders import (
    START,
    UID,
    causes,
    cond,
    create,
    job,
    messages,
    settings,
    update,
    with_status,
)
from tests.cases import read_object, read_update


def edit(obj: dict[str, Any], **pod_spec: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["spec"]["template"]["spec"].update(pod_spec)
    return out


SUSPENDED_NEW = job(suspend=True)
RUNNING = with_status(job(), startTime=START, active=1)
SUSPENDED_AFTER_RUN = with_status(
    job(suspend=True), startTime=START, active=0, conditions=[cond("Suspended")]
)
SCHEDULING_EDITS: list[dict[str, Any]] = [
    {"nodeSelector": {"zone": "a"}},
    {"tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]},
    {"schedulingGates": [{"name": "kueue"}]},
    {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                    ]
                }
            }
        }
    },
]


@pytest.mark.parametrize("pod_edit", SCHEDULING_EDITS)
def test_tm002_scheduling_directives_mutable_while_suspended_and_never_started(pod_edit):
    assert causes(update(edit(SUSPENDED_NEW, **pod_edit), SUSPENDED_NEW)) == []


def test_tm002_template_labels_and_annotations_mutable_while_suspended():
    new = copy.deepcopy(SUSPENDED_NEW)
    new["spec"]["template"]["metadata"]["annotations"] = {"kueue.x-k8s.io/podset": "main"}
    new["spec"]["template"]["metadata"]["labels"]["team"] = "a"
    assert causes(update(new, SUSPENDED_NEW)) == []


@pytest.mark.parametrize("pod_edit", SCHEDULING_EDITS)
def test_tm001_scheduling_directives_immutable_once_running(pod_edit):
    verdict = update(edit(RUNNING, **pod_edit), RUNNING)
    assert causes(verdict) == [("TM-001", "spec.template", "FieldValueInvalid")]
    assert messages(verdict)[0].startswith("spec.template: Invalid value: {")
    assert messages(verdict)[0].endswith(": field is immutable")


def test_tm001_image_change_rejected_even_when_suspended():
    old = read_object("cases/tm/suspended.yaml")
    new = read_object("cases/tm/suspended-new-image.yaml")
    assert old == SUSPENDED_NEW
    assert causes(update(new, old)) == [("TM-001", "spec.template", "FieldValueInvalid")]


def test_tm001_semantic_equality_quantities_and_empty_collections():
    new = copy.deepcopy(RUNNING)
    new["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "0.1"
    new["spec"]["template"]["spec"]["volumes"] = []
    new["spec"]["template"]["metadata"]["annotations"] = {}
    assert causes(update(new, RUNNING)) == []


def test_tm002_pod_affinity_stays_immutable():
    new = edit(
        SUSPENDED_NEW,
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "zone", "labelSelector": {"matchLabels": {"a": "b"}}}
                ]
            }
        },
    )
    assert causes(update(new, SUSPENDED_NEW)) == [("TM-001", "spec.template", "FieldValueInvalid")]


def test_tm002_removing_affinity_with_only_node_affinity_allowed():
    old = edit(SUSPENDED_NEW, affinity=SCHEDULING_EDITS[3]["affinity"])
    new = copy.deepcopy(old)
    del new["spec"]["template"]["spec"]["affinity"]
    assert causes(update(new, old)) == []
    old_with_pod = copy.deepcopy(old)
    old_with_pod["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"] = {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": {"topologyKey": "zone"}}
        ]
    }
    assert causes(update(new, old_with_pod)) == [("TM-001", "spec.template", "FieldValueInvalid")]


@pytest.mark.parametrize("version", ["1.33", "1.34", "1.35"])
def test_tm002_job_that_ran_cannot_change_scheduling_before_136(version):
    new = edit(SUSPENDED_AFTER_RUN, nodeSelector={"zone": "b"})
    verdict = update(new, SUSPENDED_AFTER_RUN, settings(version))
    assert causes(verdict) == [("TM-001", "spec.template", "FieldValueInvalid")]


def test_tm002_predicate_p_on_136_allows_job_that_ran_and_is_fully_suspended():
    new = edit(SUSPENDED_AFTER_RUN, nodeSelector={"zone": "b"})
    assert causes(update(new, SUSPENDED_AFTER_RUN, settings("1.36"))) == []


def test_tm002_predicate_p_requires_no_active_pods():
    old = with_status(job(suspend=True), active=1)
    new = edit(old, nodeSelector={"zone": "b"})
    assert causes(update(new, old, settings("1.35"))) == []  # gate off: never started suffices
    assert causes(update(new, old, settings("1.36"))) == [
        ("TM-001", "spec.template", "FieldValueInvalid")
    ]


def test_tm003_resources_mutable_on_136_only():
    new = copy.deepcopy(SUSPENDED_NEW)
    new["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "2"},
        "limits": {"nvidia.com/gpu": "1"},
    }
    assert causes(update(new, SUSPENDED_NEW, settings("1.36"))) == []
    assert causes(update(new, SUSPENDED_NEW, settings("1.35"))) == [
        ("TM-001", "spec.template", "FieldValueInvalid")
    ]


def test_tm003_other_pod_changes_report_pod_spec_path():
    new = copy.deepcopy(SUSPENDED_NEW)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "other"
    verdict = update(new, SUSPENDED_NEW, settings("1.36"))
    assert causes(verdict) == [("TM-003", "spec.template.spec", "FieldValueInvalid")]


def test_tm003_renamed_container_resources_not_mutable():
    new = copy.deepcopy(SUSPENDED_NEW)
    container = new["spec"]["template"]["spec"]["containers"][0]
    container["name"] = "renamed"
    container["resources"] = {"requests": {"cpu": "3"}}
    assert causes(update(new, SUSPENDED_NEW, settings("1.36"))) == [
        ("TM-003", "spec.template.spec", "FieldValueInvalid")
    ]


def test_tm004_resume_and_edit_in_one_request_allowed():
    new, old = read_update("cases/tm/resume-and-edit.json")
    assert (old["spec"]["suspend"], new["spec"]["suspend"]) == (True, False)
    assert causes(update(new, old)) == []


def test_tm004_suspend_and_edit_in_one_request_rejected():
    new, old = read_update("cases/tm/suspend-and-edit.json")
    assert (old["spec"]["suspend"], new["spec"]["suspend"]) == (False, True)
    assert causes(update(new, old)) == [("TM-001", "spec.template", "FieldValueInvalid")]


def test_tm005_generated_labels_must_match():
    obj = job()
    obj["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/job-name"] = "other"
    verdict = create(obj)
    assert causes(verdict) == [
        (
            "TM-005",
            "spec.template.metadata.labels[batch.kubernetes.io/job-name]",
            "FieldValueInvalid",
        )
    ]
    assert messages(verdict)[0].endswith(": must be 'pi'")


def test_tm005_missing_label_is_required():
    obj = job()
    del obj["spec"]["template"]["metadata"]["labels"]["controller-uid"]
    verdict = create(obj)
    assert causes(verdict) == [
        ("TM-005", "spec.template.metadata.labels[controller-uid]", "FieldValueRequired")
    ]
    assert messages(verdict) == [
        f"spec.template.metadata.labels[controller-uid]: Required value: must be '{UID}'"
    ]


def test_tm005_selector_not_auto_generated():
    obj = job()
    obj["spec"]["selector"]["matchLabels"]["app"] = "x"
    obj["spec"]["template"]["metadata"]["labels"]["app"] = "x"
    assert causes(create(obj)) == [("TM-005", "spec.selector", "FieldValueInvalid")]


def test_tm005_skipped_for_manual_selector():
    obj = job(manualSelector=True, selector={"matchLabels": {"app": "x"}})
    obj["spec"]["template"]["metadata"]["labels"] = {"app": "x"}
    assert causes(create(obj)) == []


def test_tm005_prefixed_labels_not_required_for_old_jobs_without_them():
    old = job()
    for key in ("batch.kubernetes.io/job-name", "batch.kubernetes.io/controller-uid"):
        del old["spec"]["template"]["metadata"]["labels"][key]
    old["spec"]["selector"] = {"matchLabels": {"controller-uid": UID}}
    new = copy.deepcopy(old)
    new["spec"]["parallelism"] = 1
    assert causes(update(new, old)) == []


def test_tm006_selector_must_match_template_labels():
    obj = job(manualSelector=True, selector={"matchLabels": {"app": "x"}})
    obj["spec"]["template"]["metadata"]["labels"] = {"app": "y"}
    verdict = create(obj)
    assert causes(verdict) == [("TM-006", "spec.template.metadata.labels", "FieldValueInvalid")]
    assert messages(verdict)[0].endswith("`selector` does not match template `labels`")


def test_tm007_selector_required_with_manual_selector():
    obj = job(manualSelector=True)
    del obj["spec"]["selector"]
    # A null selector selects nothing, so upstream reports the labels mismatch as well.
    assert causes(create(obj)) == [
        ("TM-007", "spec.selector", "FieldValueRequired"),
        ("TM-006", "spec.template.metadata.labels", "FieldValueInvalid"),
    ]


def test_tm007_malformed_selector():
    obj = job(
        manualSelector=True,
        selector={
            "matchExpressions": [{"key": "app", "operator": "In"}, {"key": "b", "operator": "Near"}]
        },
    )
    assert causes(create(obj)) == [
        ("TM-007", "spec.selector.matchExpressions[0].values", "FieldValueRequired"),
        ("TM-007", "spec.selector.matchExpressions[1].operator", "FieldValueInvalid"),
    ]


# --- IM-001..IM-008 ---------------------------------------------------------------------------


def changed(**spec: Any) -> dict[str, Any]:
    new = job()
    new["spec"].update(spec)
    return new


@pytest.mark.parametrize(
    ("rule", "path", "new"),
    [
        (
            "IM-001",
            "spec.selector",
            changed(
                selector={
                    "matchLabels": {
                        "batch.kubernetes.io/controller-uid": UID,
                        "controller-uid": UID,
                    }
                }
            ),
        ),
        ("IM-002", "spec.completions", changed(completions=2)),
        (
            "IM-004",
            "spec.podFailurePolicy",
            changed(
                podFailurePolicy={
                    "rules": [
                        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}
                    ]
                },
                podReplacementPolicy="Failed",
            ),
        ),
        ("IM-006", "spec.managedBy", changed(managedBy="kueue.x-k8s.io/multikueue")),
    ],
)
def test_immutable_fields(rule, path, new):
    verdict = update(new, job())
    assert (rule, path, "FieldValueInvalid") in causes(verdict)
    assert any(
        m.startswith(f"{path}: Invalid value:") and m.endswith("field is immutable")
        for m in messages(verdict)
    )


def test_im003_completion_mode_immutable():
    old = read_object("cases/im/indexed.yaml")
    new = read_object("cases/im/indexed-made-non-indexed.yaml")
    assert causes(update(new, old)) == [("IM-003", "spec.completionMode", "FieldValueInvalid")]
    assert messages(update(new, old)) == [
        'spec.completionMode: Invalid value: "NonIndexed": field is immutable'
    ]


def test_im005_backoff_limit_per_index_immutable():
    old = job(completionMode="Indexed", completions=3, parallelism=3, backoffLimitPerIndex=1)
    new = copy.deepcopy(old)
    new["spec"]["backoffLimitPerIndex"] = 2
    assert causes(update(new, old)) == [
        ("IM-005", "spec.backoffLimitPerIndex", "FieldValueInvalid")
    ]


def test_im007_success_policy_immutable():
    old = job(
        completionMode="Indexed",
        completions=3,
        parallelism=3,
        successPolicy={"rules": [{"succeededCount": 1}]},
    )
    new = copy.deepcopy(old)
    new["spec"]["successPolicy"]["rules"][0]["succeededCount"] = 2
    assert causes(update(new, old)) == [("IM-007", "spec.successPolicy", "FieldValueInvalid")]


def test_im002_elastic_indexed_scales_in_tandem():
    old = read_object("cases/im/indexed.yaml")
    assert old == job(completionMode="Indexed", completions=3, parallelism=3)
    tandem = read_object("cases/im/indexed-scaled-in-tandem.yaml")
    assert causes(update(tandem, old)) == []
    alone = read_object("cases/im/indexed-completions-alone.yaml")
    verdict = update(alone, old)
    assert causes(verdict) == [("IM-002", "spec.completions", "FieldValueInvalid")]
    assert messages(verdict) == [
        "spec.completions: Invalid value: 5: can only be modified in tandem with spec.parallelism"
    ]


def test_mutable_fields_accepted():
    new = changed(
        parallelism=4,
        activeDeadlineSeconds=60,
        backoffLimit=2,
        ttlSecondsAfterFinished=30,
        suspend=True,
    )
    assert causes(update(new, job())) == []


def test_im008_metadata_immutable_and_label_syntax():
    new = job()
    new["metadata"]["uid"] = "other"
    new["metadata"]["labels"] = {"bad key!": "v"}
    found = causes(update(new, job()))
    assert ("IM-008", "metadata.uid", "FieldValueInvalid") in found
    assert ("IM-008", "metadata.labels", "FieldValueInvalid") in found
    assert causes(update(job(), job())) == []
