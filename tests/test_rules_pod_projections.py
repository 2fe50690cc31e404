"""POD-015: the clusterTrustBundle and podCertificate sources of a projected volume (upstream
validateProjectionSources at v1.37.2, with the cases of its TestValidatePodSpec,
TestValidatePod and TestValidateVolumes tables), judged from 1.37, where their gates are on by
default; before, the API server drops them unless the stored template uses them. The tables
also run against the real API server (tests/realapi/differential.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jobguard.validators.rules.pod_projections import (
    extract_signer_name_from_cluster_trust_bundle_name,
    is_kubernetes_signer_name,
    validate_cluster_trust_bundle_name,
    validate_signer_name,
)
from jobguard.validators.versions import RELEASES
from tests.builders import create, detailed_causes, settings, update
from tests.builders import job as stored_job
from tests.pod_cases import S, job, pod_causes

INV, REQ, FORB, NS, TL = (
    "FieldValueInvalid",
    "FieldValueRequired",
    "FieldValueForbidden",
    "FieldValueNotSupported",
    "FieldValueTooLong",
)
P = f"{S}.volumes[0].projected"
CTB = f"{P}.sources[0].clusterTrustBundle"
PC = f"{P}.sources[0].podCertificate"
KEY_TYPES = '"RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"'
LABEL_KEY_REGEX = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
VERSION = "1.37"


def projected(*sources: dict[str, Any]) -> dict[str, Any]:
    return job(volumes=[{"name": "projected-volume", "projected": {"sources": list(sources)}}])


def bundle(**fields: Any) -> dict[str, Any]:
    return projected({"clusterTrustBundle": fields})


def certificate(**fields: Any) -> dict[str, Any]:
    return projected({"podCertificate": fields})


VALID: list[tuple[str, dict[str, Any]]] = [
    ("ClusterTrustBundle by name", bundle(path="foo-path", name="foo")),
    (
        "ClusterTrustBundle by signer name",
        bundle(
            path="foo-path",
            signerName="example.com/foo",
            labelSelector={"matchLabels": {"version": "live"}},
        ),
    ),
    ("ClusterTrustBundle named for its signer", bundle(path="p", name="example.com:foo:bar")),
    (
        "PodCertificate, minimal",
        certificate(
            signerName="example.com/foo", keyType="ED25519", credentialBundlePath="credbundle.pem"
        ),
    ),
    (
        "PodCertificate, explicit max expiration",
        certificate(
            signerName="example.com/foo",
            keyType="ED25519",
            maxExpirationSeconds=3600,
            credentialBundlePath="credbundle.pem",
        ),
    ),
    (
        "PodCertificate, separate key and cert",
        certificate(
            signerName="example.com/foo",
            keyType="ED25519",
            maxExpirationSeconds=3600,
            keyPath="key.pem",
            certificateChainPath="certificates.pem",
        ),
    ),
    (
        "PodCertificate with user annotations",
        certificate(
            signerName="example.com/foo",
            keyType="ED25519",
            keyPath="key.pem",
            certificateChainPath="certificates.pem",
            userAnnotations={"test.domain/attribute": "test-value"},
        ),
    ),
    (
        "PodCertificate of a kubernetes.io signer for a day",
        certificate(
            signerName="kubernetes.io/kube-apiserver-client",
            keyType="RSA3072",
            maxExpirationSeconds=86400,
            keyPath="key.pem",
        ),
    ),
]

INVALID: list[tuple[str, dict[str, Any], list[tuple[str, str, str, str]]]] = [
    (
        "ClusterTrustBundle using both byName and bySigner",
        bundle(
            path="foo-path",
            signerName="example.com/foo",
            labelSelector={"matchLabels": {"version": "live"}},
            name="foo",
        ),
        [
            (
                "POD-015",
                CTB,
                INV,
                'Invalid value: {"labelSelector":{"matchLabels":{"version":"live"}},'
                '"name":"foo","path":"foo-path","signerName":"example.com/foo"}: '
                "only one of name and signerName may be used",
            )
        ],
    ),
    (
        "ClusterTrustBundle byName with no name",
        bundle(path="foo-path", name=""),
        [
            ("POD-015", f"{CTB}.name", REQ, "Required value: must be a valid object name"),
            (
                "POD-015",
                f"{CTB}.name",
                INV,
                f'Invalid value: "": not a valid clustertrustbundlename: {SUBDOMAIN}',
            ),
        ],
    ),
    (
        "ClusterTrustBundle bySigner with no signer name",
        bundle(path="foo-path", signerName="", labelSelector={"matchLabels": {"foo": "bar"}}),
        [
            ("POD-015", f"{CTB}.signerName", REQ, "Required value: must be a valid signer name"),
            ("POD-015", f"{CTB}.signerName", REQ, "Required value"),
        ],
    ),
    (
        "ClusterTrustBundle bySigner with invalid signer name",
        bundle(path="foo-path", signerName="example.com/foo/invalid"),
        [
            (
                "POD-015",
                f"{CTB}.signerName",
                INV,
                'Invalid value: "example.com/foo/invalid": must be a fully qualified domain and '
                "path of the form 'example.com/signer-name'",
            )
        ],
    ),
    (
        "ClusterTrustBundle with neither name nor signer name, no path",
        bundle(),
        [
            ("POD-015", CTB, REQ, "Required value: either name or signerName must be specified"),
            ("POD-015", f"{CTB}.path", REQ, "Required value"),
        ],
    ),
    (
        "ClusterTrustBundle named for another signer, with a selector and a path up",
        bundle(path="../up", name="a/b:c", labelSelector={}),
        [
            (
                "POD-015",
                f"{CTB}.name",
                INV,
                'Invalid value: "a/b:c": not a valid clustertrustbundlename: ClusterTrustBundle '
                "for signerName a/b must be named with prefix a:b:",
            ),
            (
                "POD-015",
                f"{CTB}.labelSelector",
                INV,
                "Invalid value: {}: labelSelector must be unset if name is specified",
            ),
            ("POD-015", f"{CTB}.path", INV, "Invalid value: \"../up\": must not contain '..'"),
        ],
    ),
    (
        "two ClusterTrustBundles writing one path",
        projected(
            {"clusterTrustBundle": {"path": "ca.pem", "name": "a"}},
            {"clusterTrustBundle": {"path": "ca.pem", "name": "b"}},
        ),
        [("POD-015", P, INV, 'Invalid value: "ca.pem": conflicting duplicate paths')],
    ),
    (
        "ClusterTrustBundle and a secret in one source",
        projected({"secret": {"name": "s"}, "clusterTrustBundle": {"path": "ca.pem", "name": "a"}}),
        [
            (
                "POD-015",
                f"{P}.sources[0]",
                FORB,
                "Forbidden: may not specify more than 1 volume type per source",
            )
        ],
    ),
    (
        "PodCertificate with no signer name",
        certificate(keyType="ED25519", credentialBundlePath="credbundle.pem"),
        [("POD-015", f"{PC}.signerName", REQ, "Required value")],
    ),
    (
        "PodCertificate with bad signer name",
        certificate(
            signerName="example.com/foo/invalid",
            keyType="ED25519",
            credentialBundlePath="credbundle.pem",
        ),
        [
            (
                "POD-015",
                f"{PC}.signerName",
                INV,
                'Invalid value: "example.com/foo/invalid": must be a fully qualified domain and '
                "path of the form 'example.com/signer-name'",
            )
        ],
    ),
    (
        "PodCertificate with a one-label signer domain and a bad path label",
        certificate(signerName="example/Foo", keyType="ED25519", keyPath="k"),
        [
            (
                "POD-015",
                f"{PC}.signerName",
                INV,
                'Invalid value: "example": should be a domain with at least two segments '
                "separated by dots",
            ),
            (
                "POD-015",
                f"{PC}.signerName",
                INV,
                f'Invalid value: "Foo": validating label "Foo": {SUBDOMAIN}',
            ),
        ],
    ),
    (
        "PodCertificate with bad key type",
        certificate(signerName="example.com/foo", keyType="BAD", credentialBundlePath="c.pem"),
        [
            (
                "POD-015",
                f"{PC}.keyType",
                NS,
                f'Unsupported value: "BAD": supported values: {KEY_TYPES}',
            )
        ],
    ),
    (
        "PodCertificate with no paths",
        certificate(signerName="example.com/foo", keyType="ED25519"),
        [
            (
                "POD-015",
                PC,
                REQ,
                "Required value: specify at least one of credentialBundlePath, keyPath, and "
                "certificateChainPath",
            )
        ],
    ),
    (
        "PodCertificate with conflicting paths",
        certificate(
            signerName="example.com/foo",
            keyType="ED25519",
            keyPath="same.pem",
            certificateChainPath="same.pem",
        ),
        [("POD-015", P, INV, 'Invalid value: "same.pem": conflicting duplicate paths')],
    ),
    (
        "PodCertificate with bad cred bundle path (and no key type)",
        certificate(signerName="example.com/foo", credentialBundlePath="/absolute.pem"),
        [
            (
                "POD-015",
                f"{PC}.keyType",
                NS,
                f'Unsupported value: "": supported values: {KEY_TYPES}',
            ),
            (
                "POD-015",
                f"{PC}.credentialBundlePath",
                INV,
                'Invalid value: "/absolute.pem": must be a relative path',
            ),
        ],
    ),
    (
        "PodCertificate with bad key path",
        certificate(
            signerName="example.com/foo",
            keyType="ED25519",
            keyPath="/absolute.pem",
            certificateChainPath="certificates.pem",
        ),
        [
            (
                "POD-015",
                f"{PC}.keyPath",
                INV,
                'Invalid value: "/absolute.pem": must be a relative path',
            )
        ],
    ),
    (
        "PodCertificate with bad certificates path",
        certificate(
            signerName="example.com/foo",
            keyType="ED25519",
            keyPath="key.pem",
            certificateChainPath="/certificates.pem",
        ),
        [
            (
                "POD-015",
                f"{PC}.certificateChainPath",
                INV,
                'Invalid value: "/certificates.pem": must be a relative path',
            )
        ],
    ),
    (
        "PodCertificate with a path another source writes",
        projected(
            {"configMap": {"name": "c", "items": [{"key": "k", "path": "ca.pem"}]}},
            {
                "podCertificate": {
                    "signerName": "example.com/foo",
                    "keyType": "ED25519",
                    "credentialBundlePath": "ca.pem",
                }
            },
        ),
        [("POD-015", P, INV, 'Invalid value: "ca.pem": conflicting duplicate paths')],
    ),
    (
        "PodCertificate with max expiration out of bounds",
        certificate(
            signerName="example.com/foo",
            keyType="ED25519",
            keyPath="k",
            maxExpirationSeconds=3599,
        ),
        [
            (
                "POD-015",
                f"{PC}.maxExpirationSeconds",
                INV,
                "Invalid value: 3599: if provided, maxExpirationSeconds must be >= 3600",
            )
        ],
    ),
    (
        "PodCertificate of a kubernetes.io signer over a day",
        certificate(
            signerName="foo.kubernetes.io/bar",
            keyType="ED25519",
            keyPath="k",
            maxExpirationSeconds=86401,
        ),
        [
            (
                "POD-015",
                f"{PC}.maxExpirationSeconds",
                INV,
                "Invalid value: 86401: if provided, maxExpirationSeconds must be <= 86400",
            )
        ],
    ),
    (
        "PodCertificate with bad user annotations, invalid key",
        certificate(
            signerName="example.com/foo",
            keyType="ED25519",
            keyPath="key.pem",
            certificateChainPath="certificates.pem",
            userAnnotations={"only/one/slash": "bar"},
        ),
        [
            (
                "POD-015",
                f"{PC}.userAnnotations",
                INV,
                f'Invalid value: "only/one/slash": a valid label key {LABEL_KEY_REGEX} with an '
                "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
            )
        ],
    ),
    (
        "PodCertificate with bad user annotations, too long key prefix size",
        certificate(
            signerName="example.com/foo",
            keyType="ED25519",
            keyPath="key.pem",
            certificateChainPath="certificates.pem",
            userAnnotations={"a" * 254 + "/foo": "bar"},
        ),
        [
            (
                "POD-015",
                f"{PC}.userAnnotations",
                INV,
                f'Invalid value: "{"a" * 254}/foo": prefix part must be no more than 253 bytes',
            )
        ],
    ),
    (
        "PodCertificate with bad user annotations, too long total key/value size",
        certificate(
            signerName="example.com/foo",
            keyType="ED25519",
            keyPath="key.pem",
            certificateChainPath="certificates.pem",
            userAnnotations={"domain/a": "d" * 262144},
        ),
        [("POD-015", f"{PC}.userAnnotations", TL, "Too long: may not be more than 262144 bytes")],
    ),
    (
        "PodCertificate with an annotation key without a domain (upper case is lowered)",
        certificate(
            signerName="example.com/foo",
            keyType="ED25519",
            keyPath="key.pem",
            userAnnotations={"Attribute": "x"},
        ),
        [
            (
                "POD-015",
                f"{PC}.userAnnotations",
                INV,
                'Invalid value: "attribute": must be a domain-prefixed key (such as "acme.io/foo")',
            )
        ],
    ),
]


@pytest.mark.parametrize(("name", "obj"), VALID, ids=[name for name, _ in VALID])
def test_valid_projections_pass(name: str, obj: dict[str, Any]) -> None:
    assert pod_causes(obj, VERSION) == []


@pytest.mark.parametrize(("name", "obj", "expected"), INVALID, ids=[name for name, *_ in INVALID])
def test_invalid_projections_are_reported_as_upstream_does(
    name: str, obj: dict[str, Any], expected: list[tuple[str, str, str, str]]
) -> None:
    assert pod_causes(obj, VERSION) == expected


def test_before_1_37_the_sources_are_dropped_and_nothing_is_required_of_them() -> None:
    # Their required members (path, signerName, keyType) are the pod rules' to report, not the
    # schema's: before 1.37 the API server drops the whole source first and accepts the Job.
    obj = projected({"clusterTrustBundle": {}}, {"podCertificate": {}})
    for version in RELEASES[1:-1]:  # 1.33 has no podCertificate (SC-001)
        assert detailed_causes_of(obj, version) == [], version
    assert [path for _, path, _, _ in detailed_causes_of(obj, VERSION)] == [
        f"{P}.sources[0].clusterTrustBundle",
        f"{P}.sources[0].clusterTrustBundle.path",
        f"{P}.sources[1].podCertificate.signerName",
        f"{P}.sources[1].podCertificate.keyType",
        f"{P}.sources[1].podCertificate",
    ]


def detailed_causes_of(obj: dict[str, Any], version: str) -> list[tuple[str, str, str, str]]:
    return detailed_causes(create(obj, settings(version)))


def _stored_with(source: dict[str, Any]) -> dict[str, Any]:
    stored = stored_job()
    stored["spec"]["template"]["spec"]["volumes"] = [
        {"name": "projected-volume", "projected": {"sources": [source]}}
    ]
    return stored


@pytest.mark.parametrize(
    ("source", "path"),
    [
        ({"clusterTrustBundle": {"path": "foo-path", "name": "foo", "user": 2147483648}}, CTB),
        ({"clusterTrustBundle": {"path": "foo-path", "name": "foo", "user": -1}}, CTB),
        (
            {
                "podCertificate": {
                    "signerName": "example.com/foo",
                    "keyType": "ED25519",
                    "credentialBundlePath": "credbundle.pem",
                    "user": -1,
                }
            },
            PC,
        ),
    ],
)
def test_a_user_kept_by_the_stored_template_is_judged(source: dict[str, Any], path: str) -> None:
    # `user` is alpha (AtomicWriteVolumeUserFields) and dropped, unless the stored template
    # uses it: then validateUserField judges it (TestValidateVolumes' user cases).
    stored = _stored_with(source)
    value = next(iter(source.values()))["user"]
    assert detailed_causes(update(copy.deepcopy(stored), stored, settings(VERSION))) == [
        (
            "POD-015",
            f"{path}.user",
            INV,
            f"Invalid value: {value}: must be between 0 and 2147483647, inclusive",
        )
    ]
    valid = copy.deepcopy(stored)
    next(iter(valid["spec"]["template"]["spec"]["volumes"][0]["projected"]["sources"][0].values()))[
        "user"
    ] = 1001
    assert detailed_causes(update(copy.deepcopy(valid), valid, settings(VERSION))) == []


def test_a_source_kept_by_the_stored_template_is_judged_before_1_37() -> None:
    # The gate is off in 1.36, but the stored template uses the projection: it is kept (drop.py)
    # and judged by 1.36's validateProjectionSources, the same branch.
    stored = _stored_with({"clusterTrustBundle": {"path": "p", "name": "Bad"}})
    causes = detailed_causes(update(copy.deepcopy(stored), stored, settings("1.36")))
    assert [(rule, path) for rule, path, _, _ in causes] == [("POD-015", f"{CTB}.name")]


def test_signer_names() -> None:
    # names_test.go TestIsKubernetesSignerName and ValidateSignerName's branches.
    assert is_kubernetes_signer_name("kubernetes.io/kube-apiserver-client")
    assert is_kubernetes_signer_name("foo.kubernetes.io/bar")
    assert not is_kubernetes_signer_name("fookubernetes.io/bar")
    assert not is_kubernetes_signer_name("example.com/kubernetes.io")
    assert validate_signer_name("f", "example.com/foo.bar") == []
    too_long = "a." * 126 + "com"
    assert [e.body() for e in validate_signer_name("f", f"{too_long}/{'b' * 63}.{'c' * 253}")] == [
        "Too long: may not be more than 253 bytes",
        "Too long: may not be more than 571 bytes",
    ]
    assert [e.body() for e in validate_signer_name("f", "-a.com/x")] == [
        'Invalid value: "-a.com": validating label "-a": a lowercase RFC 1123 label must consist '
        "of lower case alphanumeric characters or '-', and must start and end with an "
        "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    ]


def test_cluster_trust_bundle_names() -> None:
    assert extract_signer_name_from_cluster_trust_bundle_name("a.com:b:c") == ("a.com/b", True)
    assert extract_signer_name_from_cluster_trust_bundle_name("abc") == ("", False)
    assert validate_cluster_trust_bundle_name("a.com/b")("a.com:b:c", False) == ()
    assert validate_cluster_trust_bundle_name("")("a:b", False) == (
        'ClusterTrustBundle without signer name must not have ":" in its name',
    )
    assert validate_cluster_trust_bundle_name("")("Abc", False) == (SUBDOMAIN,)
