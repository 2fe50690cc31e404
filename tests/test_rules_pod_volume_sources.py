"""POD-015: the legacy in-tree volume sources (upstream's TestValidateVolumes cases for iscsi,
glusterfs, flocker, rbd, cinder, cephfs, fc, flexVolume, azureFile, quobyte, azureDisk and
scaleIO, and TestValidateFlexVolumeSource), with the API server's paths and messages, after
v1 defaulting; and the sources those tables leave out."""

from __future__ import annotations

from typing import Any

import pytest

from jobguard.validators.rules.pod_volume_sources import split_host_port_error
from jobguard.validators.versions import RELEASES
from tests.pod_cases import S, job, pod_causes

INV, REQ, NS = "FieldValueInvalid", "FieldValueRequired", "FieldValueNotSupported"
V0 = f"{S}.volumes[0]"
IQN = "iqn.2015-02.example.com:test"
FORMAT = "must be valid format"
QUOBYTE = "must be a host:port pair or multiple pairs separated by commas"
BLOB_URI = '"https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"'
DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def volume(name: str = "v", **source: Any) -> dict[str, Any]:
    return job(volumes=[{"name": name, **source}])


def iscsi(**fields: Any) -> dict[str, Any]:
    return volume(iscsi={"targetPortal": "127.0.0.1", "iqn": IQN, "lun": 1, **fields})


VALID: list[tuple[str, dict[str, Any]]] = [
    ("gcePersistentDisk", volume(gcePersistentDisk={"pdName": "my-PD", "partition": 1})),
    ("awsElasticBlockStore", volume(awsElasticBlockStore={"volumeID": "my-PD", "partition": 1})),
    ("iscsi", iscsi()),
    ("iscsi eui", iscsi(iqn="eui.0123456789ABCDEF")),
    ("iscsi naa", iscsi(iqn="naa.62004567BA64678D0123456789ABCDEF")),
    ("iscsi initiatorName", iscsi(initiatorName="iqn.2015-02.example.com:init")),
    ("glusterfs", volume(glusterfs={"endpoints": "host1", "path": "path"})),
    ("flocker datasetUUID", volume(flocker={"datasetUUID": "d846b09d-223d-43df-ab5b"})),
    ("flocker datasetName", volume(flocker={"datasetName": "datasetName"})),
    ("rbd", volume(rbd={"monitors": ["foo"], "image": "bar"})),
    ("cinder", volume(cinder={"volumeID": "29ea5088-4f60-4757-962e-dba678767887"})),
    ("cephfs", volume(cephfs={"monitors": ["foo"]})),
    ("fc targetWWNs and lun", volume(fc={"targetWWNs": ["some_wwn"], "lun": 1})),
    ("fc wwids", volume(fc={"wwids": ["some_wwid"]})),
    ("flexVolume", volume(flexVolume={"driver": "kubernetes.io/blue"})),
    ("flexVolume options", volume(flexVolume={"driver": "foo", "options": {"foo": "bar"}})),
    ("azureFile", volume(azureFile={"secretName": "key", "shareName": "share"})),
    (
        "quobyte",
        volume(
            quobyte={
                "registry": "registry:7861",
                "volume": "volume",
                "user": "root",
                "group": "root",
                "tenant": "ThisIsSomeTenantUUID",
            }
        ),
    ),
    ("quobyte empty tenant", volume(quobyte={"registry": "registry:7861", "volume": "/test"})),
    ("azureDisk", volume(azureDisk={"diskName": "foo", "diskURI": "https://blob/vhds/bar.vhd"})),
    (
        "azureDisk managed",
        volume(azureDisk={"diskName": "d", "diskURI": "/subscriptions/s/d", "kind": "Managed"}),
    ),
    (
        "scaleIO",
        volume(
            scaleIO={
                "gateway": "http://abcd/efg",
                "system": "test-system",
                "volumeName": "test-vol-1",
                "secretRef": {"name": "s"},
            }
        ),
    ),
    ("vsphereVolume", volume(vsphereVolume={"volumePath": "[ds] vol.vmdk"})),
    ("photonPersistentDisk", volume(photonPersistentDisk={"pdID": "p"})),
    ("portworxVolume", volume(portworxVolume={"volumeID": "p"})),
    ("storageos", volume(storageos={"volumeName": "vol", "volumeNamespace": "ns"})),
]


@pytest.mark.parametrize(("name", "obj"), VALID, ids=[name for name, _ in VALID])
def test_valid_legacy_sources_pass(name: str, obj: dict[str, Any]) -> None:
    assert pod_causes(obj, "1.37") == []


INVALID: list[tuple[str, dict[str, Any], list[tuple[str, str, str]]]] = [
    # --- upstream's TestValidateVolumes ---
    ("iscsi empty portal", iscsi(targetPortal=""), [("iscsi.targetPortal", REQ, "Required value")]),
    ("iscsi empty iqn", iscsi(iqn=""), [("iscsi.iqn", REQ, "Required value")]),
    (
        "iscsi invalid iqn format",
        iscsi(iqn=f"{IQN};ls;"),
        [("iscsi.iqn", INV, f'Invalid value: "{IQN};ls;": {FORMAT}')],
    ),
    (
        "iscsi invalid eui format",
        iscsi(iqn="eui.0123456789ABCDEFGHIJ"),
        [("iscsi.iqn", INV, f'Invalid value: "eui.0123456789ABCDEFGHIJ": {FORMAT}')],
    ),
    (
        "iscsi invalid naa format",
        iscsi(iqn="naa.62004567BA_4-78D.123456789ABCDEF"),
        [("iscsi.iqn", INV, f'Invalid value: "naa.62004567BA_4-78D.123456789ABCDEF": {FORMAT}')],
    ),
    (
        "iscsi invalid initiatorName",
        iscsi(initiatorName="2015-02.example.com:init"),
        [
            (
                "iscsi.initiatorname",
                INV,
                'Invalid value: "2015-02.example.com:init": must be valid format starting with '
                "iqn, eui, or naa",
            )
        ],
    ),
    (
        "iscsi discovery CHAP without secret",
        iscsi(chapAuthDiscovery=True),
        [("iscsi.secretRef", REQ, "Required value")],
    ),
    (
        "iscsi session CHAP without secret",
        iscsi(chapAuthSession=True),
        [("iscsi.secretRef", REQ, "Required value")],
    ),
    (
        "glusterfs empty hosts",
        volume(glusterfs={"endpoints": "", "path": "path"}),
        [("glusterfs.endpoints", REQ, "Required value")],
    ),
    (
        "glusterfs empty path",
        volume(glusterfs={"endpoints": "host", "path": ""}),
        [("glusterfs.path", REQ, "Required value")],
    ),
    (
        "flocker both empty",
        volume(flocker={"datasetName": ""}),
        [("flocker", REQ, "Required value: one of datasetName and datasetUUID is required")],
    ),
    (
        "flocker both specified",
        volume(flocker={"datasetName": "datasetName", "datasetUUID": "d846b09d"}),
        [
            (
                "flocker",
                INV,
                'Invalid value: "resource": datasetName and datasetUUID can not be specified '
                "simultaneously",
            )
        ],
    ),
    (
        "slash in flocker datasetName",
        volume(flocker={"datasetName": "foo/bar"}),
        [("flocker.datasetName", INV, "Invalid value: \"foo/bar\": must not contain '/'")],
    ),
    (
        "empty rbd monitors",
        volume(rbd={"monitors": [], "image": "bar"}),
        [("rbd.monitors", REQ, "Required value")],
    ),
    (
        "empty rbd image",
        volume(rbd={"monitors": ["foo"], "image": ""}),
        [("rbd.image", REQ, "Required value")],
    ),
    (
        "empty cephfs monitors (reported as cephfs)",
        volume(cephfs={"monitors": []}),
        [("cephfs.monitors", REQ, "Required value")],
    ),
    (
        "fc empty targetWWNs and wwids",
        volume(fc={"targetWWNs": [], "lun": 1, "wwids": []}),
        [
            (
                "fc.targetWWNs",
                REQ,
                "Required value: must specify either targetWWNs or wwids, but not both",
            )
        ],
    ),
    (
        "fc targetWWNs and wwids",
        volume(fc={"targetWWNs": ["some_wwn"], "lun": 1, "wwids": ["some_wwid"]}),
        [
            (
                "fc.targetWWNs",
                INV,
                'Invalid value: ["some_wwn"]: targetWWNs and wwids can not be specified '
                "simultaneously",
            )
        ],
    ),
    (
        "fc targetWWNs without lun",
        volume(fc={"targetWWNs": ["wwn"]}),
        [("fc.lun", REQ, "Required value: lun is required if targetWWNs is specified")],
    ),
    (
        "fc lun out of range",
        volume(fc={"targetWWNs": ["wwn"], "lun": 256}),
        [("fc.lun", INV, "Invalid value: 256: must be between 0 and 255, inclusive")],
    ),
    (
        "azureFile empty secret",
        volume(azureFile={"secretName": "", "shareName": "share"}),
        [("azureFile.secretName", REQ, "Required value")],
    ),
    (
        "azureFile empty share",
        volume(azureFile={"secretName": "name", "shareName": ""}),
        [("azureFile.shareName", REQ, "Required value")],
    ),
    (
        "quobyte empty registry",
        volume(quobyte={"volume": "/test", "tenant": "ThisIsSomeTenantUUID"}),
        [("quobyte.registry", REQ, f"Required value: {QUOBYTE}")],
    ),
    (
        "quobyte registry without port",
        volume(quobyte={"registry": "registry7861", "volume": "/test"}),
        [("quobyte.registry", INV, f'Invalid value: "registry7861": {QUOBYTE}')],
    ),
    (
        "quobyte one of several registries without port",
        volume(quobyte={"registry": "registry:7861,reg2", "volume": "/test"}),
        [("quobyte.registry", INV, f'Invalid value: "registry:7861,reg2": {QUOBYTE}')],
    ),
    (
        "quobyte empty volume",
        volume(quobyte={"registry": "registry:7861", "tenant": "ThisIsSomeTenantUUID"}),
        [("quobyte.volume", REQ, "Required value")],
    ),
    (
        "quobyte tenant too long",
        volume(quobyte={"registry": "registry:7861", "volume": "/test", "tenant": "x" * 65}),
        [
            (
                "quobyte.tenant",
                REQ,
                "Required value: must be a UUID and may not exceed a length of 64 characters",
            )
        ],
    ),
    (
        "azureDisk empty disk name",
        volume(azureDisk={"diskName": "", "diskURI": "https://blob/vhds/bar.vhd"}),
        [("azureDisk.diskName", REQ, "Required value")],
    ),
    (
        # Upstream's table judges the internal type, whose kind is nil; the API server defaults
        # kind to Shared first, so the empty URI is also not a blob URI.
        "azureDisk empty disk uri",
        volume(azureDisk={"diskName": "foo", "diskURI": ""}),
        [
            ("azureDisk.diskURI", REQ, "Required value"),
            ("azureDisk.diskURI", NS, f'Unsupported value: "": supported values: {BLOB_URI}'),
        ],
    ),
    (
        "scaleIO empty volumeName",
        volume(scaleIO={"gateway": "http://abcd/efg", "system": "test-system"}),
        [("scaleIO.volumeName", REQ, "Required value")],
    ),
    (
        "scaleIO empty gateway",
        volume(scaleIO={"gateway": "", "system": "test-system", "volumeName": "v"}),
        [("scaleIO.gateway", REQ, "Required value")],
    ),
    (
        "scaleIO empty system",
        volume(scaleIO={"gateway": "http://agc/efg/gateway", "system": "", "volumeName": "v"}),
        [("scaleIO.system", REQ, "Required value")],
    ),
    # --- TestValidateFlexVolumeSource ---
    (
        "flexVolume without driver",
        volume(flexVolume={}),
        [("flexVolume.driver", REQ, "Required value")],
    ),
    (
        "flexVolume reserved option keys",
        volume(
            flexVolume={
                "driver": "foo",
                "options": {
                    key: "A"
                    for key in (
                        "myns.io",
                        "myns.io/bar",
                        "myns.io/kubernetes.io",
                        "KUBERNETES.IO",
                        "kubernetes.io/",
                        "alpha.kubernetes.io/foo",
                        "k8s.io",
                        "alpha.k8s.io/",
                    )
                },
            }
        ),
        [
            (
                f"flexVolume.options[{key}]",
                INV,
                f'Invalid value: "{key}": kubernetes.io and k8s.io namespaces are reserved',
            )
            for key in (
                "KUBERNETES.IO",
                "kubernetes.io/",
                "alpha.kubernetes.io/foo",
                "k8s.io",
                "alpha.k8s.io/",
            )
        ],
    ),
    # --- the sources upstream's tables leave out ---
    (
        "gcePersistentDisk reported as persistentDisk",
        volume(gcePersistentDisk={"pdName": "", "partition": -1}),
        [
            ("persistentDisk.pdName", REQ, "Required value"),
            (
                "persistentDisk.partition",
                INV,
                "Invalid value: -1: must be between 1 and 255, inclusive",
            ),
        ],
    ),
    (
        "awsElasticBlockStore partition",
        volume(awsElasticBlockStore={"volumeID": "v", "partition": 256}),
        [
            (
                "awsElasticBlockStore.partition",
                INV,
                "Invalid value: 256: must be between 1 and 255, inclusive",
            )
        ],
    ),
    (
        "iscsi lun out of range",
        iscsi(lun=300),
        [("iscsi.lun", INV, "Invalid value: 300: must be between 0 and 255, inclusive")],
    ),
    (
        "cinder secretRef without name",
        volume(cinder={"volumeID": "v", "secretRef": {"name": ""}}),
        [("cinder.secretRef.name", REQ, "Required value")],
    ),
    (
        "storageos names not DNS labels and a secretRef without name",
        volume(
            storageos={"volumeName": "Bad_", "volumeNamespace": "Ns", "secretRef": {"name": ""}}
        ),
        [
            ("storageos.volumeName", INV, f'Invalid value: "Bad_": {DNS_LABEL}'),
            ("storageos.volumeNamespace", INV, f'Invalid value: "Ns": {DNS_LABEL}'),
            ("storageos.secretRef.name", REQ, "Required value"),
        ],
    ),
    (
        "azureDisk caching mode and kind not supported (the URI is then judged as a blob's)",
        volume(azureDisk={"diskName": "d", "diskURI": "u", "cachingMode": "bad", "kind": "Odd"}),
        [
            (
                "azureDisk.cachingMode",
                NS,
                'Unsupported value: "bad": supported values: "None", "ReadOnly", "ReadWrite"',
            ),
            (
                "azureDisk.kind",
                NS,
                'Unsupported value: "Odd": supported values: "Dedicated", "Managed", "Shared"',
            ),
            ("azureDisk.diskURI", NS, f'Unsupported value: "u": supported values: {BLOB_URI}'),
        ],
    ),
    (
        "azureDisk managed with a blob URI",
        volume(azureDisk={"diskName": "d", "diskURI": "https://a/b.vhd", "kind": "Managed"}),
        [
            (
                "azureDisk.diskURI",
                NS,
                'Unsupported value: "https://a/b.vhd": supported values: "/subscriptions/{sub-id}'
                '/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"',
            )
        ],
    ),
    (
        "an empty legacy source is judged",
        volume(rbd={}),
        [("rbd.monitors", REQ, "Required value"), ("rbd.image", REQ, "Required value")],
    ),
]


@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize(("name", "obj", "expected"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_legacy_sources(
    name: str, obj: dict[str, Any], expected: list[tuple[str, str, str]], version: str
) -> None:
    """The legacy checks are the same from v1.33.0 to v1.37.2."""
    assert pod_causes(obj, version) == [
        ("POD-015", f"{V0}.{path}", reason, message) for path, reason, message in expected
    ]


def test_empty_vsphere_photon_and_portworx_identifiers() -> None:
    obj = job(
        volumes=[
            {"name": "a", "vsphereVolume": {"volumePath": ""}},
            {"name": "b", "photonPersistentDisk": {"pdID": ""}},
            {"name": "c", "portworxVolume": {}},
        ]
    )
    assert pod_causes(obj, "1.37") == [
        ("POD-015", f"{S}.volumes[0].vsphereVolume.volumePath", REQ, "Required value"),
        ("POD-015", f"{S}.volumes[1].photonPersistentDisk.pdID", REQ, "Required value"),
        ("POD-015", f"{S}.volumes[2].portworxVolume.volumeID", REQ, "Required value"),
    ]


NAME_TOO_LONG = "must be under 64 characters if iscsi.initiatorName is specified."


@pytest.mark.parametrize("version", RELEASES)
def test_iscsi_volume_name_and_portal_at_most_64_bytes_with_an_initiator(version: str) -> None:
    """validateVolumeSource checks it even when iscsi is not the volume's first source; every
    release alike."""
    name = "v" * 50
    portal = "10.0.0.1:3260"  # 50 + 1 + 13 = 64 bytes: allowed
    initiator = "iqn.2015-02.example.com:init"
    fine = {"targetPortal": portal, "iqn": IQN, "initiatorName": initiator}
    assert pod_causes(volume(name, iscsi=fine), version) == []
    assert pod_causes(volume(name, iscsi={**fine, "initiatorName": None}), version) == []
    long = {**fine, "targetPortal": portal + "0"}
    message = (
        f'Invalid value: "{name}": Total length of <volume name>:<iscsi.targetPortal> '
        + NAME_TOO_LONG
    )
    too_long = ("POD-015", f"{V0}.name", INV, message)
    assert pod_causes(volume(name, iscsi=long), version) == [too_long]
    assert pod_causes(volume(name, emptyDir={}, iscsi=long, rbd={}), version) == [
        ("POD-015", f"{V0}.iscsi", "FieldValueForbidden", MORE_THAN_ONE),
        too_long,
        ("POD-015", f"{V0}.rbd", "FieldValueForbidden", MORE_THAN_ONE),
    ]


MORE_THAN_ONE = "Forbidden: may not specify more than 1 volume type"


@pytest.mark.parametrize(
    ("hostport", "problem"),
    [
        ("registry:7861", None),
        ("[::1]:80", None),
        (":80", None),
        ("registry", "missing port in address"),
        ("::1:80", "too many colons in address"),
        ("[::1]", "missing port in address"),
        ("[::1", "missing ']' in address"),
        ("[::1]x:80", "missing port in address"),
        ("[::1]::80", "too many colons in address"),
        ("a[b:80", "unexpected '[' in address"),
        ("a]b:80", "unexpected ']' in address"),
    ],
)
def test_split_host_port_as_go(hostport: str, problem: str | None) -> None:
    assert split_host_port_error(hostport) == problem
