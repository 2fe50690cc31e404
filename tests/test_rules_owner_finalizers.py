"""OM-004 (owner references) and OM-005 (finalizers): the tables of k8s.io/apimachinery
pkg/api/validation/objectmeta_test.go at v0.37.2 (TestValidateObjectMetaOwnerReferences,
TestValidateFinalizersUpdate, TestValidateFinalizersPreventConflictingFinalizers), with their
paths and messages, then the same checks through the pipeline on every request they judge."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jobguard.validators.rules.metadata_update import validate_no_new_finalizers
from jobguard.validators.rules.object_names import (
    validate_finalizers,
    validate_kube_finalizer_name,
    validate_owner_references,
)
from tests.builders import create, detailed_causes, job, settings, status_update, update
from tests.test_rules_objectmeta import cronjob, manifest

QUALIFIED = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
NOT_STANDARD = "name is neither a standard finalizer name nor is it fully qualified"
OWNERS_UID = "metadata.ownerReferences.uid"
INV, REQ = "FieldValueInvalid", "FieldValueRequired"


def ref(kind: str, uid: str, api_version: str = "customresourceVersion", **more: Any) -> dict:
    return {"apiVersion": api_version, "kind": kind, "name": "name", "uid": uid, **more}


# TestValidateObjectMetaOwnerReferences: (description, references, expected first message or "").
OWNER_REFERENCES = [
    ("simple success - third party extension.", [ref("customresourceKind", "1")], ""),
    (
        "simple failures - event shouldn't be set as an owner",
        [ref("Event", "1", "v1")],
        "is disallowed from being an owner",
    ),
    (
        "simple failures - invalid apiVersion with too many slashes",
        [ref("Pod", "1", "a/b/c")],
        "must be <group>/<version> or <version>",
    ),
    (
        "simple failures - invalid apiVersion with empty version",
        [ref("Pod", "1", "foo/")],
        "must be <group>/<version> or <version>",
    ),
    (
        "simple success - apiVersion with no slashes (legacy core group)",
        [ref("Pod", "1", "v1")],
        "",
    ),
    (
        "simple controller ref success - one reference with Controller set",
        [
            ref("customresourceKind", "1", controller=False),
            ref("customresourceKind", "2", controller=True),
            ref("customresourceKind", "3", controller=False),
            ref("customresourceKind", "4"),
        ],
        "",
    ),
    (
        "simple controller ref failure - two references with Controller set",
        [
            ref("customresourceKind1", "1", controller=False),
            ref("customresourceKind2", "2", controller=True),
            ref("customresourceKind3", "3", controller=True),
            ref("customresourceKind4", "4"),
        ],
        'Only one reference can have Controller set to true. Found "true" in references for '
        "customresourceKind2/name and customresourceKind3/name",
    ),
]


@pytest.mark.parametrize(
    ("references", "expected"),
    [c[1:] for c in OWNER_REFERENCES],
    ids=[c[0] for c in OWNER_REFERENCES],
)
def test_upstream_owner_reference_table(references: list[dict], expected: str) -> None:
    errors = validate_owner_references(references, "field", "1.37")
    if not expected:
        assert errors == []
    else:
        assert errors and expected in errors[0].message()


def test_owner_reference_paths_types_and_messages() -> None:
    errors = validate_owner_references(
        [{"controller": True}, ref("Event", "1", "v1", controller=True)],
        "metadata.ownerReferences",
        "1.37",
    )
    assert [(e.rule, e.path, e.type.reason, e.body()) for e in errors] == [
        (
            "OM-004",
            "metadata.ownerReferences[0].apiVersion",
            "FieldValueRequired",
            "Required value: must not be empty",
        ),
        (
            "OM-004",
            "metadata.ownerReferences[0].kind",
            "FieldValueRequired",
            "Required value: must not be empty",
        ),
        (
            "OM-004",
            "metadata.ownerReferences[0].name",
            "FieldValueRequired",
            "Required value: must not be empty",
        ),
        (
            "OM-004",
            "metadata.ownerReferences[0].uid",
            "FieldValueRequired",
            "Required value: must not be empty",
        ),
        (
            "OM-004",
            "metadata.ownerReferences[1]",
            "FieldValueInvalid",
            'Invalid value: {"apiVersion":"v1","controller":true,"kind":"Event","name":"name",'
            '"uid":"1"}: /v1, Kind=Event is disallowed from being an owner',
        ),
        (
            "OM-004",
            "metadata.ownerReferences",
            "FieldValueInvalid",
            'Invalid value: [{"controller":true},{"apiVersion":"v1","controller":true,'
            '"kind":"Event","name":"name","uid":"1"}]: Only one reference can have Controller set '
            'to true. Found "true" in references for / and Event/name',
        ),
    ]


# TestValidateFinalizersUpdate: (old finalizers, new finalizers, expected substring or "").
FINALIZER_UPDATES = {
    "invalid adding finalizers": (["x/a"], ["x/a", "y/b"], "y/b"),
    "invalid changing finalizers": (["x/a"], ["x/b"], "x/b"),
    "valid removing finalizers": (["x/a", "y/b"], ["x/a"], ""),
}


@pytest.mark.parametrize("name", FINALIZER_UPDATES)
def test_upstream_finalizers_update_table_while_deleting(name: str) -> None:
    old, new, expected = FINALIZER_UPDATES[name]
    errors = validate_no_new_finalizers(new, old, "field.finalizers")
    if not expected:
        assert errors == []
    else:
        assert [(e.rule, e.path, e.type.reason) for e in errors] == [
            ("OM-005", "field.finalizers", "FieldValueForbidden")
        ]
        assert expected in errors[0].body()


def test_no_new_finalizers_message_lists_them_as_go_prints_a_string_slice() -> None:
    (error,) = validate_no_new_finalizers(["x/a", "z/c", "y/b"], ["x/a"], "metadata.finalizers")
    assert error.message() == (
        "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being "
        'deleted, found new finalizers []string{"y/b", "z/c"}'
    )


def test_upstream_conflicting_finalizers() -> None:
    errors = validate_finalizers(["orphan", "foregroundDeletion"], "field.finalizers", "1.37")
    assert [e.message() for e in errors] == [
        'field.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and '
        "foregroundDeletion cannot be both set"
    ]


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("kubernetes", ""),
        ("orphan", ""),
        ("foregroundDeletion", ""),
        ("example.com/f", ""),
        ("f", NOT_STANDARD),
        ("bad finalizer", NOT_STANDARD),
        ("a/b c", ""),  # domain-qualified: the qualified-name check is ValidateFinalizers'
    ],
)
def test_kube_finalizer_names(name: str, problem: str) -> None:
    errors = validate_kube_finalizer_name(name, "metadata.finalizers[0]")
    assert [e.detail for e in errors] == ([problem] if problem else [])


def test_a_job_create_reports_owner_references_then_finalizers_after_the_labels() -> None:
    obj = manifest(
        labels={"-a": "b"},
        ownerReferences=[{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": ""}],
        finalizers=["example.com/ok", "bad finalizer"],
    )
    verdict = create(obj, settings("1.37"))
    assert [(rule, path, body) for rule, path, _, body in detailed_causes(verdict)] == [
        ("IM-008", "metadata.labels", f'Invalid value: "-a": {QUALIFIED}'),
        ("OM-004", "metadata.ownerReferences[0].uid", "Required value: must not be empty"),
        ("OM-005", "metadata.finalizers", f'Invalid value: "bad finalizer": {QUALIFIED}'),
        ("OM-005", "metadata.finalizers[1]", f'Invalid value: "bad finalizer": {NOT_STANDARD}'),
    ]


def test_valid_owner_references_and_finalizers_pass_on_jobs_and_cronjobs() -> None:
    metadata: dict[str, Any] = {
        "ownerReferences": [ref("Workload", "1", "example.com/v1", controller=True)],
        "finalizers": ["kubernetes", "example.com/keep"],
    }
    assert create(manifest(**metadata)).violations == []
    assert create(cronjob(**metadata), kind="CronJob").violations == []


def test_a_cronjob_create_and_update_judge_them() -> None:
    obj = cronjob(finalizers=["f"])
    expected = [
        (
            "OM-005",
            "metadata.finalizers[0]",
            "FieldValueInvalid",
            f'Invalid value: "f": {NOT_STANDARD}',
        )
    ]
    assert detailed_causes(create(obj, kind="CronJob")) == expected
    assert detailed_causes(update(obj, cronjob(), kind="CronJob")) == expected


@pytest.mark.parametrize("version", ["1.36", "1.37"])
def test_an_update_judges_the_whole_new_metadata_as_the_registry_does(version: str) -> None:
    # validateCommonFields runs ValidateObjectMetaAccessor (ValidateFinalizers included) before
    # every update, then core's ValidateObjectMetaUpdate the Kubernetes finalizer names; the
    # same finalizer already stored is judged again.
    s = settings(version)
    old = job()
    new = copy.deepcopy(old)
    new["metadata"]["finalizers"] = ["bad finalizer"]
    new["metadata"]["ownerReferences"] = [ref("Pod", "", "v1")]
    expected = [
        ("OM-004", "metadata.ownerReferences[0].uid" if version == "1.37" else OWNERS_UID),
        ("OM-005", "metadata.finalizers"),
        ("OM-005", "metadata.finalizers[0]"),
    ]
    assert [(r, p) for r, p, _, _ in detailed_causes(update(new, old, s))] == expected
    assert [
        (r, p) for r, p, _, _ in detailed_causes(update(new, copy.deepcopy(new), s))
    ] == expected
    assert [(r, p) for r, p, _, _ in detailed_causes(status_update(new, old, s))] == expected


def test_an_object_being_deleted_gains_no_finalizer() -> None:
    old = job()
    old["metadata"] |= {"deletionTimestamp": "2026-01-02T00:00:00Z", "finalizers": ["x/a"]}
    new = copy.deepcopy(old)
    new["metadata"]["finalizers"] = ["x/a", "y/b"]
    assert detailed_causes(update(new, old)) == [
        (
            "OM-005",
            "metadata.finalizers",
            "FieldValueForbidden",
            "Forbidden: no new finalizers can be added if the object is being deleted, found new "
            'finalizers []string{"y/b"}',
        )
    ]
    new["metadata"]["finalizers"] = []
    assert update(new, old).violations == []
    # Not being deleted: finalizers may be added.
    del old["metadata"]["deletionTimestamp"], new["metadata"]["deletionTimestamp"]
    new["metadata"]["finalizers"] = ["x/a", "y/b"]
    assert update(new, old).violations == []


def test_values_of_other_types_are_left_to_the_decoder() -> None:
    assert validate_owner_references("x", "p", "1.37") == []
    assert validate_owner_references([1, None], "p", "1.37") == []
    assert validate_finalizers({"a": 1}, "p", "1.37") == []
    assert validate_no_new_finalizers(None, "x", "p") == []


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        # v0.33: the member named in the message, under the list's path.
        (
            "1.33",
            [
                (
                    "metadata.ownerReferences.apiVersion",
                    INV,
                    'Invalid value: "a/b/c": version must not be empty',
                ),
                ("metadata.ownerReferences.kind", INV, 'Invalid value: "": kind must not be empty'),
                ("metadata.ownerReferences.uid", INV, 'Invalid value: "": uid must not be empty'),
            ],
        ),
        # v0.34..v0.36 (the API server 1.36.3 answers so).
        (
            "1.36",
            [
                (
                    "metadata.ownerReferences.apiVersion",
                    INV,
                    'Invalid value: "a/b/c": version must not be empty',
                ),
                ("metadata.ownerReferences.kind", INV, 'Invalid value: "": must not be empty'),
                ("metadata.ownerReferences.uid", INV, 'Invalid value: "": must not be empty'),
            ],
        ),
        # v0.37: under the index, Required.
        (
            "1.37",
            [
                (
                    "metadata.ownerReferences[0].apiVersion",
                    INV,
                    'Invalid value: "a/b/c": must be <group>/<version> or <version>',
                ),
                ("metadata.ownerReferences[0].kind", REQ, "Required value: must not be empty"),
                ("metadata.ownerReferences[0].uid", REQ, "Required value: must not be empty"),
            ],
        ),
    ],
)
def test_owner_reference_errors_per_release(
    version: str, expected: list[tuple[str, str, str]]
) -> None:
    obj = manifest(ownerReferences=[{"apiVersion": "a/b/c", "kind": "", "name": "n", "uid": ""}])
    causes = detailed_causes(create(obj, settings(version)))
    assert [(path, reason, body) for _, path, reason, body in causes] == expected
