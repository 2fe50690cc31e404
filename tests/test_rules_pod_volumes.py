"""POD-015: volume sources (upstream's TestValidateVolumes and TestValidateProjectedVolume-
Source cases), after v1 defaulting."""

from __future__ import annotations

from typing import Any

import pytest

from tests.pod_cases import QUANTITY_FORMAT, S, job, pod_causes

INV, REQ, FORB, NS, TL = (
    "FieldValueInvalid",
    "FieldValueRequired",
    "FieldValueForbidden",
    "FieldValueNotSupported",
    "FieldValueTooLong",
)
V0 = f"{S}.volumes[0]"
FILE_MODE = "must be a number between 0 and 0777 (octal), both inclusive"


def volume(**source: Any) -> dict[str, Any]:
    return job(volumes=[{"name": "v", **source}])


VALID: list[tuple[str, dict[str, Any]]] = [
    ("no source is an emptyDir", volume()),
    ("emptyDir", volume(emptyDir={"medium": "Memory", "sizeLimit": "1Gi"})),
    (
        "configMap",
        volume(
            configMap={
                "name": "c",
                "defaultMode": 0o755,
                "items": [{"key": "k", "path": "a/b", "mode": 0o400}],
            }
        ),
    ),
    ("secret", volume(secret={"secretName": "s", "optional": True})),
    ("hostPath", volume(hostPath={"path": "/var/log", "type": "Directory"})),
    ("pvc", volume(persistentVolumeClaim={"claimName": "data"})),
    (
        "projected with a default token",
        volume(
            projected={
                "sources": [
                    {"serviceAccountToken": {"path": "token", "audience": "vault"}},
                    {"configMap": {"name": "c"}},
                    {
                        "downwardAPI": {
                            "items": [
                                {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}
                            ]
                        }
                    },
                ]
            }
        ),
    ),
    (
        "downwardAPI",
        volume(
            downwardAPI={
                "items": [
                    {
                        "path": "cpu",
                        "resourceFieldRef": {"containerName": "main", "resource": "limits.cpu"},
                    }
                ]
            }
        ),
    ),
    (
        "csi",
        volume(
            csi={
                "driver": "secrets-store.csi.k8s.io",
                "readOnly": True,
                "nodePublishSecretRef": {"name": "creds"},
            }
        ),
    ),
    (
        "ephemeral",
        volume(
            ephemeral={
                "volumeClaimTemplate": {
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}},
                    }
                }
            }
        ),
    ),
    ("nfs", volume(nfs={"server": "nfs.local", "path": "/exports"})),
]


@pytest.mark.parametrize(("name", "obj"), VALID, ids=[name for name, _ in VALID])
def test_valid_volumes_pass(name: str, obj: dict[str, Any]) -> None:
    assert pod_causes(obj) == []


INVALID: list[tuple[str, dict[str, Any], list[tuple[str, str, str, str]]]] = [
    (
        "configMap without name",
        volume(configMap={}),
        [("POD-015", f"{V0}.configMap.name", REQ, "Required value")],
    ),
    (
        "decimal 755 defaultMode",
        volume(configMap={"name": "c", "defaultMode": 755}),
        [("POD-015", f"{V0}.configMap.defaultMode", INV, f"Invalid value: 755: {FILE_MODE}")],
    ),
    (
        "two sources",
        volume(emptyDir={}, configMap={"name": "c"}),
        [
            (
                "POD-015",
                f"{V0}.configMap",
                FORB,
                "Forbidden: may not specify more than 1 volume type",
            )
        ],
    ),
    (
        "gcePersistentDisk second, under its own name (its errors say persistentDisk)",
        volume(emptyDir={}, gcePersistentDisk={"pdName": "d"}),
        [
            (
                "POD-015",
                f"{V0}.gcePersistentDisk",
                FORB,
                "Forbidden: may not specify more than 1 volume type",
            )
        ],
    ),
    (
        "cephfs second, spelled cephFS (its errors say cephfs)",
        volume(emptyDir={}, cephfs={"monitors": ["m"]}),
        [("POD-015", f"{V0}.cephFS", FORB, "Forbidden: may not specify more than 1 volume type")],
    ),
    (
        "projected comes before scaleIO",
        volume(scaleIO={"gateway": "g", "system": "s", "secretRef": {"name": "n"}}, projected={}),
        [("POD-015", f"{V0}.scaleIO", FORB, "Forbidden: may not specify more than 1 volume type")],
    ),
    (
        "downwardAPI second, with upstream's spelling",
        volume(secret={"secretName": "s"}, downwardAPI={}),
        [
            (
                "POD-015",
                f"{V0}.downwarAPI",
                FORB,
                "Forbidden: may not specify more than 1 volume type",
            )
        ],
    ),
    (
        "cephfs and gcePersistentDisk second, with upstream's spellings",
        volume(
            hostPath={"path": "/x"},
            cephfs={"monitors": ["m"]},
            gcePersistentDisk={"pdName": "p"},
        ),
        [
            (
                "POD-015",
                f"{V0}.gcePersistentDisk",
                FORB,
                "Forbidden: may not specify more than 1 volume type",
            ),
            ("POD-015", f"{V0}.cephFS", FORB, "Forbidden: may not specify more than 1 volume type"),
        ],
    ),
    (
        "item paths",
        volume(
            secret={
                "secretName": "s",
                "items": [{"key": "", "path": "../x"}, {"key": "k", "path": "..x", "mode": -1}],
            }
        ),
        [
            ("POD-015", f"{V0}.secret.items[0].key", REQ, "Required value"),
            (
                "POD-015",
                f"{V0}.secret.items[0].path",
                INV,
                "Invalid value: \"../x\": must not contain '..'",
            ),
            (
                "POD-015",
                f"{V0}.secret.items[1].path",
                INV,
                "Invalid value: \"..x\": must not start with '..'",
            ),
            ("POD-015", f"{V0}.secret.items[1].mode", INV, f"Invalid value: -1: {FILE_MODE}"),
        ],
    ),
    (
        "hostPath",
        volume(hostPath={"path": "/a/../b", "type": "Dir"}),
        [
            (
                "POD-015",
                f"{V0}.hostPath.path",
                INV,
                "Invalid value: \"/a/../b\": must not contain '..'",
            ),
            (
                "POD-015",
                f"{V0}.hostPath.type",
                NS,
                'Unsupported value: "Dir": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"',
            ),
        ],
    ),
    (
        "pvc without claimName",
        volume(persistentVolumeClaim={}),
        [("POD-015", f"{V0}.persistentVolumeClaim.claimName", REQ, "Required value")],
    ),
    (
        "short token",
        volume(
            projected={"sources": [{"serviceAccountToken": {"path": "t", "expirationSeconds": 60}}]}
        ),
        [
            (
                "POD-015",
                f"{V0}.projected.sources[0].serviceAccountToken.expirationSeconds",
                INV,
                "Invalid value: 60: may not specify a duration less than 10 minutes",
            )
        ],
    ),
    (
        "token path at the projection",
        volume(projected={"sources": [{"serviceAccountToken": {"path": "/t"}}]}),
        [("POD-015", f"{V0}.projected.path", INV, 'Invalid value: "/t": must be a relative path')],
    ),
    (
        "two kinds in one projection",
        volume(projected={"sources": [{"secret": {"name": "s"}, "configMap": {"name": "c"}}]}),
        [
            (
                "POD-015",
                f"{V0}.projected.sources[0]",
                FORB,
                "Forbidden: may not specify more than 1 volume type per source",
            )
        ],
    ),
    (
        "duplicate projected paths",
        volume(
            projected={
                "sources": [
                    {"secret": {"name": "s", "items": [{"key": "a", "path": "p"}]}},
                    {"configMap": {"name": "c", "items": [{"key": "b", "path": "p"}]}},
                ]
            }
        ),
        [("POD-015", f"{V0}.projected", INV, 'Invalid value: "c": conflicting duplicate paths')],
    ),
    (
        "downwardAPI item without a source",
        volume(downwardAPI={"items": [{"path": "x"}]}),
        [
            (
                "POD-015",
                f"{V0}.downwardAPI",
                REQ,
                "Required value: one of fieldRef and resourceFieldRef is required",
            )
        ],
    ),
    (
        "downwardAPI resource without container",
        volume(
            downwardAPI={"items": [{"path": "x", "resourceFieldRef": {"resource": "limits.cpu"}}]}
        ),
        [("POD-015", f"{V0}.downwardAPI.resourceFieldRef.containerName", REQ, "Required value")],
    ),
    (
        "csi driver",
        volume(csi={"driver": ""}),
        [("POD-015", f"{V0}.csi.driver", REQ, "Required value")],
    ),
    (
        "ephemeral without template",
        volume(ephemeral={}),
        [("POD-015", f"{V0}.ephemeral.volumeClaimTemplate", REQ, "Required value")],
    ),
    (
        "ephemeral claim spec",
        volume(ephemeral={"volumeClaimTemplate": {"spec": {}}}),
        [
            (
                "POD-015",
                f"{V0}.ephemeral.volumeClaimTemplate.spec.accessModes",
                REQ,
                "Required value: at least 1 access mode is required",
            ),
            (
                "POD-015",
                f"{V0}.ephemeral.volumeClaimTemplate.spec.resources[storage]",
                REQ,
                "Required value",
            ),
        ],
    ),
    (
        "nfs relative path",
        volume(nfs={"server": "s", "path": "exports"}),
        [("POD-015", f"{V0}.nfs.path", INV, 'Invalid value: "exports": must be an absolute path')],
    ),
    (
        "a sizeLimit that is not a quantity (the API server cannot decode the Job)",
        volume(emptyDir={"sizeLimit": "1Gb"}),
        [("POD-015", f"{V0}.emptyDir.sizeLimit", INV, f'Invalid value: "1Gb": {QUANTITY_FORMAT}')],
    ),
    (
        "negative sizeLimit",
        volume(emptyDir={"sizeLimit": "-1Gi"}),
        [
            (
                "POD-015",
                f"{V0}.emptyDir.sizeLimit",
                FORB,
                "Forbidden: SizeLimit field must be a valid resource quantity",
            )
        ],
    ),
]


@pytest.mark.parametrize(("name", "obj", "expected"), INVALID, ids=[name for name, *_ in INVALID])
def test_invalid_volumes_are_reported_as_upstream_does(
    name: str, obj: dict[str, Any], expected: list[tuple[str, str, str, str]]
) -> None:
    assert pod_causes(obj) == expected


def test_image_volumes_from_1_35_and_their_reference_in_templates_from_1_37() -> None:
    # validateImageVolumeSource: before 1.37 the reference is required in pods only
    # (opts.ResourceIsPod), from 1.37 in templates too (AllowEmptyImageVolumeReference).
    obj = volume(image={"pullPolicy": "IfNotPresent"})
    assert pod_causes(obj, "1.35") == []
    assert pod_causes(obj, "1.36") == []
    assert pod_causes(obj, "1.37") == [("POD-015", f"{V0}.image.reference", REQ, "Required value")]


def test_template_defaults_used_for_comparisons() -> None:
    from jobguard.validators.defaults import default_pod_template

    template = {
        "spec": {
            "containers": [
                {
                    "name": "m",
                    "image": "busybox",
                    "livenessProbe": {"httpGet": {"port": 80}},
                    "lifecycle": {"preStop": {"httpGet": {"port": 80}}},
                }
            ],
            "volumes": [
                {"name": "scratch"},
                {"name": "p", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
            ],
        }
    }
    spec = default_pod_template(template)["spec"]
    container = spec["containers"][0]
    assert container["livenessProbe"]["httpGet"] == {"path": "/", "scheme": "HTTP", "port": 80}
    assert container["lifecycle"]["preStop"]["httpGet"]["scheme"] == "HTTP"
    assert spec["volumes"][0]["emptyDir"] == {}
    token = spec["volumes"][1]["projected"]["sources"][0]["serviceAccountToken"]
    assert token["expirationSeconds"] == 3600
    assert default_pod_template(default_pod_template(template)) == default_pod_template(template)


VCT = f"{V0}.ephemeral.volumeClaimTemplate"
GOOD_CLAIM: dict[str, Any] = {
    "accessModes": ["ReadWriteOnce"],
    "resources": {"requests": {"storage": "1Gi"}},
}


def claim(spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    template: dict[str, Any] = {"spec": {**GOOD_CLAIM, **spec}}
    if meta:
        template["metadata"] = meta
    return volume(ephemeral={"volumeClaimTemplate": template})


CLAIMS: list[tuple[str, dict[str, Any], list[tuple[str, str, str, str]]]] = [
    ("a valid claim", claim({}, labels={"app": "x"}), []),
    (
        "metadata beyond labels and annotations",
        claim({}, name="n", uid="u"),
        [
            ("POD-015", f"{VCT}.metadata.name", FORB, "Forbidden: cannot be set"),
            ("POD-015", f"{VCT}.metadata.uID", FORB, "Forbidden: cannot be set"),
        ],
    ),
    (
        "storageClassName not a subdomain",
        claim({"storageClassName": "Fast_SSD"}),
        [
            (
                "POD-015",
                f"{VCT}.spec.storageClassName",
                INV,
                'Invalid value: "Fast_SSD": a lowercase RFC 1123 subdomain must consist of lower '
                "case alphanumeric characters, '-' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            )
        ],
    ),
    (
        "dataSource of the default group that is not a claim",
        claim({"dataSource": {"kind": "Snapshot", "name": "s"}}),
        [
            (
                "POD-015",
                f"{VCT}.spec.dataSource",
                INV,
                "Invalid value: \"Snapshot\": must be 'PersistentVolumeClaim' when referencing "
                "the default apiGroup",
            )
        ],
    ),
    (
        "dataSource and dataSourceRef differ",
        claim(
            {
                "dataSource": {"kind": "PersistentVolumeClaim", "name": "a"},
                "dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "b"},
            }
        ),
        [("POD-015", f"{VCT}.spec", INV, "Invalid value: {}: must match dataSourceRef")],
    ),
    (
        "ReadWriteOncePod twice is alone",
        claim({"accessModes": ["ReadWriteOncePod", "ReadWriteOncePod"]}),
        [],
    ),
]


@pytest.mark.parametrize(("name", "obj", "expected"), CLAIMS, ids=[c[0] for c in CLAIMS])
def test_ephemeral_claim_templates(
    name: str, obj: dict[str, Any], expected: list[tuple[str, str, str, str]]
) -> None:
    assert pod_causes(obj, "1.37") == expected
