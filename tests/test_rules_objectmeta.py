"""Object metadata on CREATE (OM-001..OM-003), and IM-008 on CronJobs and pod templates."""

from __future__ import annotations

import copy
from typing import Any

from jobguard.validators import Operation, Request, evaluate
from tests.builders import create, detailed_causes, job, settings, update

SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def manifest(**metadata: Any) -> dict[str, Any]:
    """A Job as written in a file."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi", **metadata},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox"}],
                }
            }
        },
    }


def cronjob(name: str = "nightly", **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, **metadata},
        "spec": {
            "schedule": "0 3 * * *",
            "jobTemplate": {"spec": manifest()["spec"]},
        },
    }


def test_the_issue_example_uppercase_name_is_refused() -> None:
    assert detailed_causes(create(manifest(name="Pi"))) == [
        ("OM-001", "metadata.name", "FieldValueInvalid", f'Invalid value: "Pi": {SUBDOMAIN}')
    ]


def test_valid_names_and_prepared_objects_pass() -> None:
    assert create(manifest(name="pi-2.batch")).violations == []
    assert create(job("pi")).violations == []
    assert create(cronjob("a" * 52, namespace="team-a"), kind="CronJob").violations == []


def test_a_missing_name_is_required() -> None:
    obj = manifest()
    del obj["metadata"]["name"]
    assert detailed_causes(create(obj))[0] == (
        "OM-001",
        "metadata.name",
        "FieldValueRequired",
        "Required value: name or generateName is required",
    )


def test_generate_name_may_end_in_a_dash_and_is_judged_with_its_generated_name() -> None:
    obj = manifest(generateName="pi-")
    del obj["metadata"]["name"]
    assert create(obj).violations == []
    obj["metadata"]["generateName"] = "Pi-"
    assert detailed_causes(create(obj)) == [
        (
            "OM-001",
            "metadata.generateName",
            "FieldValueInvalid",
            f'Invalid value: "Pi-": {SUBDOMAIN}',
        ),
        ("OM-001", "metadata.name", "FieldValueInvalid", f'Invalid value: "Pi-xxxxx": {SUBDOMAIN}'),
    ]


def test_a_long_generate_name_is_cut_to_58_characters_as_the_server_cuts_it() -> None:
    # 58 + 5 = 63: the generated job-name label still fits a label value.
    obj = manifest(generateName="a" * 70)
    del obj["metadata"]["name"]
    assert create(obj).violations == []


def test_namespace_is_a_dns_label_the_objects_or_the_requests() -> None:
    body = f'Invalid value: "Team_A": {LABEL}'
    assert detailed_causes(create(manifest(namespace="Team_A"))) == [
        ("OM-003", "metadata.namespace", "FieldValueInvalid", body)
    ]
    request = Request("Job", Operation.CREATE, manifest(), namespace="Team_A")
    assert detailed_causes(evaluate(request, settings())) == [
        ("OM-003", "metadata.namespace", "FieldValueInvalid", body)
    ]
    assert create(manifest(namespace="team-a")).violations == []


def test_names_are_not_judged_again_on_update() -> None:
    # Upstream's ValidateObjectMetaUpdate keeps the name immutable, not its syntax.
    old = job("Pi")
    assert update(copy.deepcopy(old), old).violations == []


def test_cronjob_names_have_at_most_52_characters_on_create_only() -> None:
    long = cronjob("a" * 53)
    assert detailed_causes(create(long, kind="CronJob")) == [
        (
            "OM-002",
            "metadata.name",
            "FieldValueInvalid",
            f'Invalid value: "{"a" * 53}": must be no more than 52 characters',
        )
    ]
    assert update(long, copy.deepcopy(long), kind="CronJob").violations == []


def test_cronjob_metadata_checks_in_upstream_order() -> None:
    obj = cronjob("Nightly-" + "x" * 50, namespace="Team", labels={"a/b/c": "x"})
    assert [(rule, path) for rule, path, _, _ in detailed_causes(create(obj, kind="CronJob"))] == [
        ("OM-001", "metadata.name"),
        ("OM-003", "metadata.namespace"),
        ("IM-008", "metadata.labels"),
        ("OM-002", "metadata.name"),
    ]


def test_cronjob_update_keeps_metadata_immutable() -> None:
    old = cronjob(uid="c0ffee00-0000-4000-8000-000000000001")
    new = copy.deepcopy(old)
    new["metadata"]["uid"] = "c0ffee00-0000-4000-8000-000000000002"
    assert detailed_causes(update(new, old, kind="CronJob")) == [
        (
            "IM-008",
            "metadata.uid",
            "FieldValueInvalid",
            'Invalid value: "c0ffee00-0000-4000-8000-000000000002": field is immutable',
        )
    ]


def test_a_job_name_too_long_for_its_generated_label_is_refused_on_the_template() -> None:
    # The API server labels the pod template job-name=<name> (plain and prefixed): label values
    # of at most 63 bytes (1.35's content.IsLabelValue words it so).
    name = "j" * 64
    verdict = create(manifest(name=name))
    body = f'Invalid value: "{name}": must be no more than 63 bytes'
    assert detailed_causes(verdict) == [
        ("IM-008", "spec.template.labels", "FieldValueInvalid", body)
    ]
    assert [v.error.path for v in verdict.violations] == ["spec.template.labels"] * 2
