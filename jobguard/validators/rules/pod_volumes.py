"""POD-015: volume sources (upstream validateVolumeSource and the validate*VolumeSource it
calls), `(value, path, options) -> list[FieldError]`.

Judged after v1 defaulting: a volume without a source is an emptyDir, modes default to 0644 and
a projected token's expirationSeconds to 3600. The legacy in-tree sources (iscsi, rbd, cinder,
azureDisk, ...) are judged in `pod_volume_sources`.

Upstream: `pkg/apis/core/validation/validation.go`, kubernetes v1.37.2 (git tag v1.37.2).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jobguard.validators.errors import (
    ErrorType,
    FieldError,
    forbidden,
    invalid,
    not_supported,
    required,
)
from jobguard.validators.names import (
    label_wording,
    name_is_dns_subdomain,
)
from jobguard.validators.quantity import QuantityError, quantity_of
from jobguard.validators.rules.pod_common import (
    POSITIVE,
    PULL_POLICIES,
    PodOptions,
    as_dict,
    as_list,
    each,
    file_mode_error,
    label_problems,
    local_path_problems,
    opt_int,
    subdomain_problems,
    text,
)
from jobguard.validators.rules.pod_containers import (
    VOLUME_FIELD_PATHS,
    validate_container_resource_field_selector,
    validate_object_field_selector,
)
from jobguard.validators.rules.pod_projections import (
    validate_certificate_projections,
    validate_local_non_reserved_path,
)
from jobguard.validators.rules.pod_volume_sources import LEGACY_SOURCES, validate_iscsi_volume_name
from jobguard.validators.selectors import LabelSelectorOptions, validate_label_selector

# validateVolumeSource's order, and the child names each source is reported under: its own
# errors, and "may not specify more than 1 volume type" when another source comes first
# (upstream spells three of those differently, "downwarAPI" among them).
SOURCES = (
    ("emptyDir", "emptyDir", "emptyDir"),
    ("hostPath", "hostPath", "hostPath"),
    ("gitRepo", "gitRepo", "gitRepo"),
    ("gcePersistentDisk", "persistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret", "secret"),
    ("nfs", "nfs", "nfs"),
    ("iscsi", "iscsi", "iscsi"),
    ("glusterfs", "glusterfs", "glusterfs"),
    ("flocker", "flocker", "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim", "persistentVolumeClaim"),
    ("rbd", "rbd", "rbd"),
    ("cinder", "cinder", "cinder"),
    ("cephfs", "cephfs", "cephFS"),
    ("quobyte", "quobyte", "quobyte"),
    ("downwardAPI", "downwardAPI", "downwarAPI"),
    ("fc", "fc", "fc"),
    ("flexVolume", "flexVolume", "flexVolume"),
    ("configMap", "configMap", "configMap"),
    ("azureFile", "azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk", "azureDisk"),
    ("storageos", "storageos", "storageos"),
    ("projected", "projected", "projected"),
    ("scaleIO", "scaleIO", "scaleIO"),
    ("csi", "csi", "csi"),
    ("ephemeral", "ephemeral", "ephemeral"),
    ("image", "image", "image"),
)
HOST_PATH_TYPES = [
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
]
VOLUME_MODES = ["Block", "Filesystem"]
ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
_MORE_THAN_ONE = "may not specify more than 1 volume type"


_ORDER = {key: index for index, (key, _, _) in enumerate(SOURCES)}
_CHILD = {key: child for key, child, _ in SOURCES}
_SECOND = {key: child for key, _, child in SOURCES}


def _sources(volume: dict[str, Any], options: PodOptions) -> list[str]:
    """The source keys the volume sets, in validateVolumeSource's order (usually one: a scan of
    the volume's own few keys, not of the thirty sources)."""
    found = [
        key
        for key, value in volume.items()
        if value is not None and key in _ORDER and (key != "image" or options.image_volume)
    ]
    if len(found) > 1:
        found.sort(key=_ORDER.__getitem__)
    return found


def volume_kind(volume: dict[str, Any], options: PodOptions) -> str:
    """The volume's source, as defaulted (no source: emptyDir)."""
    found = _sources(volume, options)
    return found[0] if found else "emptyDir"


def validate_key_to_path(item: dict[str, Any], path: str) -> list[FieldError]:
    """validateKeyToPath."""
    errors: list[FieldError] = []
    if not text(item.get("key")):
        errors.append(required("POD-015", f"{path}.key"))
    item_path = text(item.get("path"))
    if item_path is None:
        return errors
    if not item_path:
        errors.append(required("POD-015", f"{path}.path"))
    errors += validate_local_non_reserved_path(item_path, f"{path}.path")
    return errors + file_mode_error("POD-015", f"{path}.mode", item.get("mode"))


def validate_downward_api_volume_file(
    item: dict[str, Any], path: str, version: str
) -> list[FieldError]:
    """validateDownwardAPIVolumeFile (`path` is the source's: items are not indexed)."""
    errors: list[FieldError] = []
    file_path = text(item.get("path"))
    if file_path is not None:
        if not file_path:
            errors.append(required("POD-015", f"{path}.path"))
        errors += validate_local_non_reserved_path(file_path, f"{path}.path")
    if isinstance(item.get("fieldRef"), dict):
        errors += validate_object_field_selector(
            "POD-015", item["fieldRef"], VOLUME_FIELD_PATHS, f"{path}.fieldRef", version
        )
        if item.get("resourceFieldRef") is not None:
            detail = "fieldRef and resourceFieldRef can not be specified simultaneously"
            errors.append(invalid("POD-015", path, "resource", detail))
    elif isinstance(item.get("resourceFieldRef"), dict):
        errors += validate_container_resource_field_selector(
            "POD-015", item["resourceFieldRef"], f"{path}.resourceFieldRef", True
        )
    else:
        errors.append(required("POD-015", path, "one of fieldRef and resourceFieldRef is required"))
    return errors + file_mode_error("POD-015", f"{path}.mode", item.get("mode"))


def _validate_named_volume_source(
    source: dict[str, Any], path: str, name_field: str
) -> list[FieldError]:
    """The body validateSecretVolumeSource and validateConfigMapVolumeSource share."""
    errors: list[FieldError] = []
    if not text(source.get(name_field)):
        errors.append(required("POD-015", f"{path}.{name_field}"))
    errors += file_mode_error("POD-015", f"{path}.defaultMode", source.get("defaultMode"))
    for index, item in enumerate(as_list(source.get("items"))):
        errors += validate_key_to_path(as_dict(item), f"{path}.items[{index}]")
    return errors


def validate_secret_volume_source(source: dict[str, Any], path: str) -> list[FieldError]:
    """validateSecretVolumeSource."""
    return _validate_named_volume_source(source, path, "secretName")


def validate_config_map_volume_source(source: dict[str, Any], path: str) -> list[FieldError]:
    """validateConfigMapVolumeSource."""
    return _validate_named_volume_source(source, path, "name")


def validate_projected_volume_source(
    source: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """validateProjectedVolumeSource and validateProjectionSources."""
    errors = file_mode_error("POD-015", f"{path}.defaultMode", source.get("defaultMode"))
    paths: set[str] = set()
    for index, projection in enumerate(as_list(source.get("sources"))):
        projection = as_dict(projection)
        at = f"{path}.sources[{index}]"
        count = 0
        for kind in ("secret", "configMap"):
            ref = projection.get(kind)
            if not isinstance(ref, dict):
                continue
            count += 1
            name = text(ref.get("name")) or ""
            if not name:
                errors.append(required("POD-015", f"{at}.{kind}.name"))
            for item_index, item in enumerate(as_list(ref.get("items"))):
                item = as_dict(item)
                errors += validate_key_to_path(item, f"{at}.{kind}.items[{item_index}]")
                item_path = text(item.get("path"))
                if item_path:
                    if item_path in paths:
                        errors.append(invalid("POD-015", path, name, "conflicting duplicate paths"))
                    paths.add(item_path)
        downward = projection.get("downwardAPI")
        if isinstance(downward, dict):
            count += 1
            for item in as_list(downward.get("items")):
                item = as_dict(item)
                errors += validate_downward_api_volume_file(
                    item, f"{at}.downwardAPI", options.version
                )
                item_path = text(item.get("path"))
                if item_path:
                    if item_path in paths:
                        errors.append(
                            invalid("POD-015", path, item_path, "conflicting duplicate paths")
                        )
                    paths.add(item_path)
        token = projection.get("serviceAccountToken")
        if isinstance(token, dict):
            count += 1
            seconds = opt_int(token.get("expirationSeconds"))
            seconds = 3600 if seconds is None or token.get("expirationSeconds") is None else seconds
            at_seconds = f"{at}.serviceAccountToken.expirationSeconds"
            if seconds < 600:
                detail = "may not specify a duration less than 10 minutes"
                errors.append(invalid("POD-015", at_seconds, seconds, detail))
            if seconds > 1 << 32:
                detail = "may not specify a duration larger than 2^32 seconds"
                errors.append(invalid("POD-015", at_seconds, seconds, detail))
            token_path = text(token.get("path"))
            if token_path == "":
                errors.append(required("POD-015", f"{path}.path"))
            elif token_path is not None and not options.allow_non_local_projected_token_path:
                errors += validate_local_non_reserved_path(token_path, f"{path}.path")
        found, more = validate_certificate_projections(projection, at, path, paths, options.version)
        count, errors = count + found, errors + more
        if count > 1:
            detail = "may not specify more than 1 volume type per source"
            errors.append(forbidden("POD-015", at, detail))
    return errors


# ObjectMeta's fields in Go's order, by the name validateFieldAllowList reports (the Go field
# name with a lower-case first letter: UID is "uID"); only labels and annotations may be set.
_TEMPLATE_META_FIELDS = (
    ("name", "name"),
    ("generateName", "generateName"),
    ("namespace", "namespace"),
    ("selfLink", "selfLink"),
    ("uid", "uID"),
    ("resourceVersion", "resourceVersion"),
    ("generation", "generation"),
    ("creationTimestamp", "creationTimestamp"),
    ("deletionTimestamp", "deletionTimestamp"),
    ("deletionGracePeriodSeconds", "deletionGracePeriodSeconds"),
    ("ownerReferences", "ownerReferences"),
    ("finalizers", "finalizers"),
    ("managedFields", "managedFields"),
)


def validate_template_object_meta(
    meta: dict[str, Any], path: str, version: str
) -> list[FieldError]:
    """ValidateTemplateObjectMeta: annotations and labels (in the words of release
    `version`), and no other field set."""
    words = label_wording(version)
    errors: list[FieldError] = []
    for key in as_dict(meta.get("annotations")):
        if isinstance(key, str):
            errors += each("POD-015", f"{path}.annotations", key, words.key(key.lower()))
    for key, value in as_dict(meta.get("labels")).items():
        if isinstance(key, str):
            errors += each("POD-015", f"{path}.labels", key, words.key(key))
        if isinstance(value, str):
            errors += each("POD-015", f"{path}.labels", value, words.value(value))
    for key, shown in _TEMPLATE_META_FIELDS:
        if meta.get(key) not in (None, "", 0, [], {}):
            errors.append(forbidden("POD-015", f"{path}.{shown}", "cannot be set"))
    return errors


def validate_data_source(source: dict[str, Any], path: str, ref: bool) -> list[FieldError]:
    """validateDataSource, or with `ref` validateDataSourceRef."""
    errors: list[FieldError] = []
    if not text(source.get("name")):
        errors.append(required("POD-015", f"{path}.name"))
    kind = text(source.get("kind")) or ""
    if not kind:
        errors.append(required("POD-015", f"{path}.kind"))
    group = text(source.get("apiGroup")) or ""
    if not group and kind != "PersistentVolumeClaim":
        detail = "must be 'PersistentVolumeClaim' when referencing the default apiGroup"
        errors.append(invalid("POD-015", path, kind, detail))
    if group:
        errors += each("POD-015", f"{path}.apiGroup", group, subdomain_problems(group))
    namespace = text(source.get("namespace")) or ""
    if ref and namespace:
        errors += each("POD-015", f"{path}.namespace", namespace, label_problems(namespace))
    return errors


def validate_persistent_volume_claim_template(
    template: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """ValidatePersistentVolumeClaimTemplate: ValidateTemplateObjectMeta and
    ValidatePersistentVolumeClaimSpec."""
    errors = validate_template_object_meta(
        as_dict(template.get("metadata")), f"{path}.metadata", options.version
    )
    spec = as_dict(template.get("spec"))
    at = f"{path}.spec"
    modes = as_list(spec.get("accessModes"))
    if not modes:
        detail = "at least 1 access mode is required"
        errors.append(required("POD-015", f"{at}.accessModes", detail))
    errors += validate_label_selector(
        "POD-015", spec.get("selector"), LabelSelectorOptions(options.version), f"{at}.selector"
    )
    once_pod = other = False
    for mode in modes:
        if isinstance(mode, str) and mode not in ACCESS_MODES:
            errors.append(not_supported("POD-015", f"{at}.accessModes", mode, ACCESS_MODES))
        if mode == "ReadWriteOncePod":
            once_pod = True
        elif mode in ACCESS_MODES:
            other = True
    if once_pod and other:
        detail = "may not use ReadWriteOncePod with other access modes"
        errors.append(forbidden("POD-015", f"{at}.accessModes", detail))
    storage = as_dict(as_dict(spec.get("resources")).get("requests")).get("storage")
    storage_path = f"{at}.resources[storage]"
    if storage is None:
        errors.append(required("POD-015", storage_path))
    elif isinstance(storage, str | int | float) and not isinstance(storage, bool):
        try:
            quantity = quantity_of(storage)
        except QuantityError:
            quantity = None
        if quantity is not None and quantity.value <= 0:
            errors.append(invalid("POD-015", storage_path, str(quantity), POSITIVE))
    class_name = text(spec.get("storageClassName"))
    if class_name:
        errors += each(
            "POD-015", f"{at}.storageClassName", class_name, subdomain_problems(class_name)
        )
    mode = spec.get("volumeMode")
    if isinstance(mode, str) and mode not in VOLUME_MODES:
        errors.append(not_supported("POD-015", f"{at}.volumeMode", mode, VOLUME_MODES))
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    if isinstance(source, dict):
        errors += validate_data_source(source, f"{at}.dataSource", False)
    if isinstance(ref, dict):
        errors += validate_data_source(ref, f"{at}.dataSourceRef", True)
    if isinstance(ref, dict) and text(ref.get("namespace")):
        detail = "may not be specified when dataSourceRef.namespace is specified"
        errors += [invalid("POD-015", at, {}, detail)] if isinstance(source, dict) else []
    elif (
        isinstance(source, dict)
        and isinstance(ref, dict)
        and any(source.get(k) != ref.get(k) for k in ("apiGroup", "kind", "name"))
    ):
        errors.append(invalid("POD-015", at, {}, "must match dataSourceRef"))
    attributes_class = text(spec.get("volumeAttributesClassName"))
    if attributes_class and options.volume_attributes_class:
        errors += each(
            "POD-015",
            f"{at}.volumeAttributesClassName",
            attributes_class,
            subdomain_problems(attributes_class),
        )
    return errors


def _validate_empty_dir(source: dict[str, Any], path: str) -> list[FieldError]:
    """validateVolumeSource's emptyDir case (its sizeLimit)."""
    limit = source.get("sizeLimit")
    if isinstance(limit, str | int | float) and not isinstance(limit, bool):
        try:
            negative = quantity_of(limit).value < 0
        except QuantityError as exc:
            # The API server cannot decode the object (a 400 naming the quantity's format).
            return [invalid("POD-015", f"{path}.sizeLimit", limit, str(exc))]
        if negative:
            detail = "SizeLimit field must be a valid resource quantity"
            return [forbidden("POD-015", f"{path}.sizeLimit", detail)]
    return []


def validate_host_path_volume_source(source: dict[str, Any], path: str) -> list[FieldError]:
    """validateHostPathVolumeSource (with validateHostPathType)."""
    host_path = text(source.get("path"))
    if host_path == "":
        return [required("POD-015", f"{path}.path")]
    errors: list[FieldError] = []
    if host_path and ".." in host_path.split("/"):
        errors.append(invalid("POD-015", f"{path}.path", host_path, "must not contain '..'"))
    kind = source.get("type")
    if isinstance(kind, str) and kind not in HOST_PATH_TYPES:
        errors.append(not_supported("POD-015", f"{path}.type", kind, HOST_PATH_TYPES))
    return errors


def validate_git_repo_volume_source(source: dict[str, Any], path: str) -> list[FieldError]:
    """validateGitRepoVolumeSource."""
    errors = [] if text(source.get("repository")) else [required("POD-015", f"{path}.repository")]
    directory = text(source.get("directory")) or ""
    return errors + list(
        each("POD-015", f"{path}.directory", directory, local_path_problems(directory))
    )


def validate_nfs_volume_source(source: dict[str, Any], path: str) -> list[FieldError]:
    """validateNFSVolumeSource."""
    errors = [] if text(source.get("server")) else [required("POD-015", f"{path}.server")]
    nfs_path = text(source.get("path")) or ""
    if not nfs_path:
        errors.append(required("POD-015", f"{path}.path"))
    if not nfs_path.startswith("/"):
        errors.append(invalid("POD-015", f"{path}.path", nfs_path, "must be an absolute path"))
    return errors


def validate_persistent_claim_volume_source(source: dict[str, Any], path: str) -> list[FieldError]:
    """validatePersistentClaimVolumeSource."""
    return [] if text(source.get("claimName")) else [required("POD-015", f"{path}.claimName")]


def validate_downward_api_volume_source(
    source: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """validateDownwardAPIVolumeSource."""
    errors = file_mode_error("POD-015", f"{path}.defaultMode", source.get("defaultMode"))
    for item in as_list(source.get("items")):
        errors += validate_downward_api_volume_file(as_dict(item), path, options.version)
    return errors


def validate_ephemeral_volume_source(
    source: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """validateEphemeralVolumeSource."""
    template = source.get("volumeClaimTemplate")
    if not isinstance(template, dict):
        return [required("POD-015", f"{path}.volumeClaimTemplate")]
    return validate_persistent_volume_claim_template(
        template, f"{path}.volumeClaimTemplate", options
    )


def validate_image_volume_source(
    source: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """validateImageVolumeSource."""
    errors: list[FieldError] = []
    if options.image_reference_required and not text(source.get("reference")):
        errors.append(required("POD-015", f"{path}.reference"))
    policy = source.get("pullPolicy")
    if isinstance(policy, str) and policy and policy not in PULL_POLICIES:
        errors.append(not_supported("POD-015", f"{path}.pullPolicy", policy, PULL_POLICIES))
    return errors


def validate_csi_volume_source(source: dict[str, Any], path: str) -> list[FieldError]:
    """validateCSIVolumeSource (ValidateCSIDriverName)."""
    errors: list[FieldError] = []
    driver = text(source.get("driver"))
    if driver == "":
        errors.append(required("POD-015", f"{path}.driver"))
    elif driver is not None:
        if len(driver) > 63:
            detail = "may not be more than 63 bytes"
            errors.append(FieldError("POD-015", f"{path}.driver", ErrorType.TOO_LONG, detail))
        errors += each("POD-015", f"{path}.driver", driver, subdomain_problems(driver.lower()))
    secret = source.get("nodePublishSecretRef")
    if isinstance(secret, dict):
        name = text(secret.get("name"))
        if name == "":
            errors.append(required("POD-015", f"{path}.nodePublishSecretRef.name"))
        elif name is not None:
            errors += each("POD-015", f"{path}.name", name, name_is_dns_subdomain(name, False))
    return errors


def validate_volume_source(
    volume: dict[str, Any], path: str, options: PodOptions
) -> tuple[str, list[FieldError]]:
    """The volume's source as defaulted, and validateVolumeSource's errors."""
    found = _sources(volume, options)
    if not found:
        return "emptyDir", []
    key = found[0]
    source = volume[key]
    errors: list[FieldError] = []
    if isinstance(source, dict) and (source or key not in _EMPTY_OK):
        errors += _validate_source(key, source, f"{path}.{_CHILD[key]}", options)
    errors += validate_iscsi_volume_name(volume, key, path)
    for other in found[1:]:
        errors.append(forbidden("POD-015", f"{path}.{_SECOND[other]}", _MORE_THAN_ONE))
        errors += validate_iscsi_volume_name(volume, other, path)
    return key, errors


_EMPTY_OK = frozenset(("emptyDir", "downwardAPI", "projected"))
"""Sources that are valid when empty ({})."""

# validateVolumeSource's cases: by source key, the function judging it (the legacy in-tree ones
# in LEGACY_SOURCES).
_PLAIN_SOURCES: dict[str, Callable[[dict[str, Any], str], list[FieldError]]] = {
    "emptyDir": _validate_empty_dir,
    "hostPath": validate_host_path_volume_source,
    "gitRepo": validate_git_repo_volume_source,
    "secret": validate_secret_volume_source,
    "configMap": validate_config_map_volume_source,
    "nfs": validate_nfs_volume_source,
    "persistentVolumeClaim": validate_persistent_claim_volume_source,
    "csi": validate_csi_volume_source,
    **LEGACY_SOURCES,
}
_SOURCES_WITH_OPTIONS: dict[str, Callable[[dict[str, Any], str, PodOptions], list[FieldError]]] = {
    "downwardAPI": validate_downward_api_volume_source,
    "projected": validate_projected_volume_source,
    "ephemeral": validate_ephemeral_volume_source,
    "image": validate_image_volume_source,
}


def _validate_source(
    key: str, source: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """validateVolumeSource's case for source `key`, at the source's `path`."""
    plain = _PLAIN_SOURCES.get(key)
    if plain is not None:
        return plain(source, path)
    with_options = _SOURCES_WITH_OPTIONS.get(key)
    return with_options(source, path, options) if with_options is not None else []
