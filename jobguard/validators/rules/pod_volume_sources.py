"""POD-015: the legacy in-tree volume sources of validateVolumeSource (iscsi, fc, rbd, cinder,
azureDisk, ...), `(source, fld_path) -> list[FieldError]` as upstream's validate*VolumeSource.

Judged after v1 defaulting (an azureDisk's `kind` defaults to Shared, so its diskURI must then
start with https://). `pod_volumes` dispatches to `LEGACY_SOURCES` by the source's JSON key.

Upstream: `pkg/apis/core/validation/validation.go`, kubernetes v1.37.2 (git tag v1.37.2); these
functions, their messages and the regular expressions are the same in v1.33.0 (commit
60a317eadfcb839692a68eab88b2096f4d708f4f), so every release of versions.RELEASES shares them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from jobguard.validators.errors import FieldError, invalid, not_supported, required
from jobguard.validators.names import byte_length, dns1123_label_problems, inclusive_range_error
from jobguard.validators.rules.pod_common import as_dict, as_list, each, integer, text

PD_PARTITION = inclusive_range_error(1, 255)
"""pdPartitionErrorMsg (the range it names is 1..255; 0 is accepted too)."""
LUN_RANGE = inclusive_range_error(0, 255)
ISCSI_PREFIX = "must be valid format starting with iqn, eui, or naa"
ISCSI_FORMAT = "must be valid format"
ISCSI_NAME_TOO_LONG = (
    "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if "
    "iscsi.initiatorName is specified."
)
QUOBYTE_REGISTRY = "must be a host:port pair or multiple pairs separated by commas"

# Go's RE2 classes spelled for Python: \d and [[:alnum:]] are ASCII, \s is [\t\n\f\r ] (no \v),
# and `$` is the end of the text (Python's `$` also matches before a final newline). The IQN
# expression has no `^`: upstream matches it anywhere in the value.
_IQN = re.compile(r"iqn\.[0-9]{4}-[0-9]{2}\.([0-9A-Za-z.-]+)(:[^,;*&$|\t\n\f\r ]+)\Z")
_EUI = re.compile(r"eui.[0-9A-Za-z]{16}\Z")
_NAA = re.compile(r"naa.[0-9A-Za-z]{32}\Z")

AZURE_CACHING_MODES = ["None", "ReadOnly", "ReadWrite"]
AZURE_DISK_KINDS = ["Dedicated", "Managed", "Shared"]
_AZURE_MANAGED_URI = [
    "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"
]
_AZURE_BLOB_URI = ["https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"]


def _empty(value: Any) -> bool:
    """len(field) == 0 for a string field (absent or null is ""; another type is not judged)."""
    return text(value) == ""


def _require(rule: str, source: dict[str, Any], fld_path: str, *names: str) -> list[FieldError]:
    """field.Required(fldPath.Child(name), "") for each empty string field, in order."""
    return [required(rule, f"{fld_path}.{name}") for name in names if _empty(source.get(name))]


def _secret_ref_name(rule: str, source: dict[str, Any], fld_path: str) -> list[FieldError]:
    """A secretRef, when set, names its secret."""
    ref = source.get("secretRef")
    if isinstance(ref, dict) and _empty(ref.get("name")):
        return [required(rule, f"{fld_path}.secretRef.name")]
    return []


def _iscsi_name_problem(value: str) -> str | None:
    """The IQN / initiator name format checks (None when valid)."""
    if value.startswith("iqn"):
        return None if _IQN.search(value) else ISCSI_FORMAT
    if value.startswith("eui"):
        return None if _EUI.match(value) else ISCSI_FORMAT
    if value.startswith("naa"):
        return None if _NAA.match(value) else ISCSI_FORMAT
    return ISCSI_PREFIX


def validate_iscsi_volume_source(iscsi: dict[str, Any], fld_path: str) -> list[FieldError]:
    """validateISCSIVolumeSource."""
    errors = _require("POD-015", iscsi, fld_path, "targetPortal")
    iqn = text(iscsi.get("iqn"))
    if iqn == "":
        errors.append(required("POD-015", f"{fld_path}.iqn"))
    elif iqn is not None:
        problem = _iscsi_name_problem(iqn)
        if problem:
            errors.append(invalid("POD-015", f"{fld_path}.iqn", iqn, problem))
    lun = integer(iscsi.get("lun"))
    if lun is not None and not 0 <= lun <= 255:
        errors.append(invalid("POD-015", f"{fld_path}.lun", lun, LUN_RANGE))
    chap = iscsi.get("chapAuthDiscovery") is True or iscsi.get("chapAuthSession") is True
    if chap and iscsi.get("secretRef") is None:
        errors.append(required("POD-015", f"{fld_path}.secretRef"))
    initiator = iscsi.get("initiatorName")
    if isinstance(initiator, str):
        problem = _iscsi_name_problem(initiator)
        if problem:
            # Upstream's child name is all lower case.
            errors.append(invalid("POD-015", f"{fld_path}.initiatorname", initiator, problem))
    return errors


def validate_iscsi_volume_name(volume: dict[str, Any], key: str, fld_path: str) -> list[FieldError]:
    """validateVolumeSource's own iscsi check, made whether or not iscsi is the volume's first
    source (`key`: the source being reported; `fld_path`: the volume's path): with an
    initiatorName, `<volume name>:<targetPortal>` is at most 64 bytes."""
    if key != "iscsi":
        return []
    iscsi = volume.get("iscsi")
    if not isinstance(iscsi, dict) or iscsi.get("initiatorName") is None:
        return []
    name, portal = text(volume.get("name")), text(iscsi.get("targetPortal"))
    if name is None or portal is None or byte_length(f"{name}:{portal}") <= 64:
        return []
    return [invalid("POD-015", f"{fld_path}.name", name, ISCSI_NAME_TOO_LONG)]


def validate_fc_volume_source(fc: dict[str, Any], fld_path: str) -> list[FieldError]:
    """validateFCVolumeSource."""
    errors: list[FieldError] = []
    wwns, wwids = as_list(fc.get("targetWWNs")), as_list(fc.get("wwids"))
    if not wwns and not wwids:
        detail = "must specify either targetWWNs or wwids, but not both"
        errors.append(required("POD-015", f"{fld_path}.targetWWNs", detail))
    if wwns and wwids:
        detail = "targetWWNs and wwids can not be specified simultaneously"
        errors.append(invalid("POD-015", f"{fld_path}.targetWWNs", wwns, detail))
    if wwns:
        lun = fc.get("lun")
        if lun is None:
            detail = "lun is required if targetWWNs is specified"
            errors.append(required("POD-015", f"{fld_path}.lun", detail))
        elif integer(lun) is not None and not 0 <= lun <= 255:
            errors.append(invalid("POD-015", f"{fld_path}.lun", lun, LUN_RANGE))
    return errors


def _partition(rule: str, source: dict[str, Any], fld_path: str) -> list[FieldError]:
    partition = integer(source.get("partition"))
    if partition is not None and not 0 <= partition <= 255:
        return [invalid(rule, f"{fld_path}.partition", partition, PD_PARTITION)]
    return []


def validate_gce_persistent_disk_volume_source(
    pd: dict[str, Any], fld_path: str
) -> list[FieldError]:
    """validateGCEPersistentDiskVolumeSource (its path says persistentDisk)."""
    return _require("POD-015", pd, fld_path, "pdName") + _partition("POD-015", pd, fld_path)


def validate_aws_elastic_block_store_volume_source(
    pd: dict[str, Any], fld_path: str
) -> list[FieldError]:
    """validateAWSElasticBlockStoreVolumeSource."""
    return _require("POD-015", pd, fld_path, "volumeID") + _partition("POD-015", pd, fld_path)


def split_host_port_error(hostport: str) -> str | None:
    """Go's net.SplitHostPort: why `hostport` is not host:port (None when it is)."""
    colon = hostport.rfind(":")
    if colon < 0:
        return "missing port in address"
    start, end_at = 0, 0
    if hostport[0] == "[":
        end = hostport.find("]")
        if end < 0:
            return "missing ']' in address"
        if end + 1 == len(hostport):
            return "missing port in address"
        if end + 1 != colon:
            if hostport[end + 1] == ":":
                return "too many colons in address"
            return "missing port in address"
        start, end_at = 1, end + 1
    elif ":" in hostport[:colon]:
        return "too many colons in address"
    if "[" in hostport[start:]:
        return "unexpected '[' in address"
    if "]" in hostport[end_at:]:
        return "unexpected ']' in address"
    return None


def validate_quobyte_volume_source(quobyte: dict[str, Any], fld_path: str) -> list[FieldError]:
    """validateQuobyteVolumeSource."""
    errors: list[FieldError] = []
    registry, tenant = text(quobyte.get("registry")), text(quobyte.get("tenant"))
    if registry == "":
        errors.append(required("POD-015", f"{fld_path}.registry", QUOBYTE_REGISTRY))
    elif tenant is not None and byte_length(tenant) >= 65:
        detail = "must be a UUID and may not exceed a length of 64 characters"
        errors.append(required("POD-015", f"{fld_path}.tenant", detail))
    elif registry is not None:
        # One error per malformed pair, each naming the whole registry.
        errors += [
            invalid("POD-015", f"{fld_path}.registry", registry, QUOBYTE_REGISTRY)
            for pair in registry.split(",")
            if split_host_port_error(pair) is not None
        ]
    return errors + _require("POD-015", quobyte, fld_path, "volume")


def validate_glusterfs_volume_source(glusterfs: dict[str, Any], fld_path: str) -> list[FieldError]:
    """validateGlusterfsVolumeSource."""
    return _require("POD-015", glusterfs, fld_path, "endpoints", "path")


def validate_flocker_volume_source(flocker: dict[str, Any], fld_path: str) -> list[FieldError]:
    """validateFlockerVolumeSource."""
    errors: list[FieldError] = []
    name, uuid = text(flocker.get("datasetName")), text(flocker.get("datasetUUID"))
    if name == "" and uuid == "":
        detail = "one of datasetName and datasetUUID is required"
        errors.append(required("POD-015", fld_path, detail))
    if name and uuid:
        detail = "datasetName and datasetUUID can not be specified simultaneously"
        errors.append(invalid("POD-015", fld_path, "resource", detail))
    if name and "/" in name:
        errors.append(invalid("POD-015", f"{fld_path}.datasetName", name, "must not contain '/'"))
    return errors


def validate_rbd_volume_source(rbd: dict[str, Any], fld_path: str) -> list[FieldError]:
    """validateRBDVolumeSource."""
    errors = [] if as_list(rbd.get("monitors")) else [required("POD-015", f"{fld_path}.monitors")]
    return errors + _require("POD-015", rbd, fld_path, "image")


def validate_cinder_volume_source(cd: dict[str, Any], fld_path: str) -> list[FieldError]:
    """validateCinderVolumeSource."""
    return _require("POD-015", cd, fld_path, "volumeID") + _secret_ref_name("POD-015", cd, fld_path)


def validate_ceph_fs_volume_source(cephfs: dict[str, Any], fld_path: str) -> list[FieldError]:
    """validateCephFSVolumeSource (its path says cephfs)."""
    return [] if as_list(cephfs.get("monitors")) else [required("POD-015", f"{fld_path}.monitors")]


def validate_flex_volume_source(fv: dict[str, Any], fld_path: str) -> list[FieldError]:
    """validateFlexVolumeSource: options may not use the kubernetes.io and k8s.io namespaces."""
    errors = _require("POD-015", fv, fld_path, "driver")
    for key in as_dict(fv.get("options")):
        if not isinstance(key, str):
            continue
        namespace = key.split("/", 1)[0]
        normalized = "." + namespace.lower()
        if normalized.endswith((".kubernetes.io", ".k8s.io")):
            detail = "kubernetes.io and k8s.io namespaces are reserved"
            errors.append(invalid("POD-015", f"{fld_path}.options[{key}]", key, detail))
    return errors


def validate_azure_file(azure: dict[str, Any], fld_path: str) -> list[FieldError]:
    """validateAzureFile."""
    return _require("POD-015", azure, fld_path, "secretName", "shareName")


def validate_azure_disk(azure: dict[str, Any], fld_path: str) -> list[FieldError]:
    """validateAzureDisk, after defaulting (cachingMode ReadWrite, kind Shared)."""
    errors = _require("POD-015", azure, fld_path, "diskName", "diskURI")
    caching = azure.get("cachingMode")
    if isinstance(caching, str) and caching not in AZURE_CACHING_MODES:
        errors.append(
            not_supported("POD-015", f"{fld_path}.cachingMode", caching, AZURE_CACHING_MODES)
        )
    kind = "Shared" if azure.get("kind") is None else azure["kind"]
    if isinstance(kind, str) and kind not in AZURE_DISK_KINDS:
        errors.append(not_supported("POD-015", f"{fld_path}.kind", kind, AZURE_DISK_KINDS))
    uri = text(azure.get("diskURI"))
    if isinstance(kind, str) and uri is not None:
        if kind == "Managed" and not uri.startswith("/subscriptions/"):
            errors.append(not_supported("POD-015", f"{fld_path}.diskURI", uri, _AZURE_MANAGED_URI))
        if kind != "Managed" and not uri.startswith("https://"):
            errors.append(not_supported("POD-015", f"{fld_path}.diskURI", uri, _AZURE_BLOB_URI))
    return errors


def validate_vsphere_volume_source(cd: dict[str, Any], fld_path: str) -> list[FieldError]:
    """validateVsphereVolumeSource."""
    return _require("POD-015", cd, fld_path, "volumePath")


def validate_photon_persistent_disk_volume_source(
    cd: dict[str, Any], fld_path: str
) -> list[FieldError]:
    """validatePhotonPersistentDiskVolumeSource."""
    return _require("POD-015", cd, fld_path, "pdID")


def validate_portworx_volume_source(pwx: dict[str, Any], fld_path: str) -> list[FieldError]:
    """validatePortworxVolumeSource."""
    return _require("POD-015", pwx, fld_path, "volumeID")


def validate_scale_io_volume_source(sio: dict[str, Any], fld_path: str) -> list[FieldError]:
    """validateScaleIOVolumeSource."""
    return _require("POD-015", sio, fld_path, "gateway", "system", "volumeName")


def validate_storage_os_volume_source(storageos: dict[str, Any], fld_path: str) -> list[FieldError]:
    """validateStorageOSVolumeSource: names are DNS-1123 labels (ValidateDNS1123Label)."""
    errors: list[FieldError] = []
    name = text(storageos.get("volumeName"))
    if name == "":
        errors.append(required("POD-015", f"{fld_path}.volumeName"))
    elif name is not None:
        errors += each("POD-015", f"{fld_path}.volumeName", name, dns1123_label_problems(name))
    namespace = text(storageos.get("volumeNamespace"))
    if namespace:
        errors += each(
            "POD-015", f"{fld_path}.volumeNamespace", namespace, dns1123_label_problems(namespace)
        )
    return errors + _secret_ref_name("POD-015", storageos, fld_path)


LEGACY_SOURCES: dict[str, Callable[[dict[str, Any], str], list[FieldError]]] = {
    "gcePersistentDisk": validate_gce_persistent_disk_volume_source,
    "awsElasticBlockStore": validate_aws_elastic_block_store_volume_source,
    "iscsi": validate_iscsi_volume_source,
    "glusterfs": validate_glusterfs_volume_source,
    "flocker": validate_flocker_volume_source,
    "rbd": validate_rbd_volume_source,
    "cinder": validate_cinder_volume_source,
    "cephfs": validate_ceph_fs_volume_source,
    "quobyte": validate_quobyte_volume_source,
    "fc": validate_fc_volume_source,
    "flexVolume": validate_flex_volume_source,
    "azureFile": validate_azure_file,
    "vsphereVolume": validate_vsphere_volume_source,
    "photonPersistentDisk": validate_photon_persistent_disk_volume_source,
    "portworxVolume": validate_portworx_volume_source,
    "azureDisk": validate_azure_disk,
    "storageos": validate_storage_os_volume_source,
    "scaleIO": validate_scale_io_volume_source,
}
"""validateVolumeSource's legacy in-tree sources by JSON key, in its order."""
