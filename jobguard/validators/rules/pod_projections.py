"""POD-015: the clusterTrustBundle and podCertificate sources of a projected volume (the two
branches of upstream validateProjectionSources that judge them) and the helpers they call:
ValidateSignerName, ValidateClusterTrustBundleName, ValidateUserAnnotations, validateUserField,
ValidateLocalNonReservedPath. `pod_volumes` calls `validate_certificate_projections` for each
source of a projected volume, with the paths the volume's other sources already use.

The fields exist from 1.33 (clusterTrustBundle) and 1.34 (podCertificate; its userAnnotations
from 1.35, the `user` of both from 1.37). Their gates (ClusterTrustBundleProjection,
PodCertificateRequest) are on by default from 1.37; before, the API server drops the sources
(drop.py) unless the stored template uses them, and then judges them with the same code: these
branches are unchanged from v1.33.0 but for the fields each release adds (unknown fields are
refused by the schema first).

Upstream: `pkg/apis/core/validation/validation.go` and `names.go`, kubernetes v1.37.2 (git tag
v1.37.2); `pkg/apis/certificates/types.go` (the expiration bounds); apimachinery v0.37.2
`IsDomainPrefixedKey`, `ValidateAnnotationsSize`, `IsValidUserID`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jobguard.validators.errors import (
    FieldError,
    invalid,
    not_supported,
    render_value,
    required,
    too_long,
)
from jobguard.validators.names import (
    DNS1123_LABEL_MAX_LENGTH,
    DNS1123_SUBDOMAIN_MAX_LENGTH,
    byte_length,
    dns1123_label_problems,
    dns1123_subdomain_problems,
    label_wording,
    name_is_dns_subdomain,
)
from jobguard.validators.rules.pod_common import (
    as_dict,
    each,
    go_string,
    local_path_problems,
    opt_int,
    text,
    validate_user_id,
)
from jobguard.validators.selectors import LabelSelectorOptions, validate_label_selector

RULE = "POD-015"
MAX_MAX_EXPIRATION_SECONDS = 91 * 24 * 60 * 60
"""certificates.MaxMaxExpirationSeconds."""
KUBERNETES_MAX_MAX_EXPIRATION_SECONDS = 24 * 60 * 60
"""certificates.KubernetesMaxMaxExpirationSeconds: signers under kubernetes.io."""
KEY_TYPES = ["RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"]
TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * (1 << 10)
_CONFLICT = "conflicting duplicate paths"


def validate_local_non_reserved_path(target_path: str, fld_path: str) -> list[FieldError]:
    """ValidateLocalNonReservedPath: relative, no '..' element, not starting with '..'."""
    errors = list(each(RULE, fld_path, target_path, local_path_problems(target_path)))
    if target_path.startswith("..") and not target_path.startswith("../"):
        errors.append(invalid(RULE, fld_path, target_path, "must not start with '..'"))
    return errors


def validate_user_field(user: Any, fld_path: str) -> list[FieldError]:
    """validateUserField (IsValidUserID)."""
    return validate_user_id(RULE, user, fld_path)


def is_kubernetes_signer_name(signer_name: str) -> bool:
    """IsKubernetesSignerName: the host part is kubernetes.io or under it."""
    host_name = signer_name.partition("/")[0]
    return host_name == "kubernetes.io" or host_name.endswith(".kubernetes.io")


def validate_signer_name(fld_path: str, signer_name: str) -> list[FieldError]:
    """ValidateSignerName: <domain of two labels or more>/<dot-separated subdomains>, at most
    571 bytes (each part reported once, at its first bad label)."""
    if not signer_name:
        return [required(RULE, fld_path)]
    segments = signer_name.split("/")
    if len(segments) != 2:
        detail = "must be a fully qualified domain and path of the form 'example.com/signer-name'"
        return [invalid(RULE, fld_path, signer_name, detail)]
    errors: list[FieldError] = []
    if byte_length(segments[0]) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errors.append(too_long(RULE, fld_path, DNS1123_SUBDOMAIN_MAX_LENGTH))
    domain_labels = segments[0].split(".")
    for label in domain_labels:
        problems = dns1123_label_problems(label)
        if problems:
            for problem in problems:
                detail = f"validating label {render_value(label)}: {problem}"
                errors.append(invalid(RULE, fld_path, segments[0], detail))
            break
    if len(domain_labels) < 2:
        detail = "should be a domain with at least two segments separated by dots"
        errors.append(invalid(RULE, fld_path, segments[0], detail))
    for label in segments[1].split("."):
        problems = dns1123_subdomain_problems(label)
        if problems:
            for problem in problems:
                detail = f"validating label {render_value(label)}: {problem}"
                errors.append(invalid(RULE, fld_path, segments[1], detail))
            break
    max_path_segment_length = DNS1123_SUBDOMAIN_MAX_LENGTH + DNS1123_LABEL_MAX_LENGTH + 1
    max_signer_name_length = DNS1123_SUBDOMAIN_MAX_LENGTH + max_path_segment_length + 1
    if byte_length(signer_name) > max_signer_name_length:
        errors.append(too_long(RULE, fld_path, max_signer_name_length))
    return errors


def validate_cluster_trust_bundle_name(signer_name: str) -> Callable[[str, bool], tuple[str, ...]]:
    """ValidateClusterTrustBundleName: a bundle of a signer is named "<signer with ':' for
    '/'>:<DNS subdomain>", any other bundle is a DNS subdomain without ':'."""

    def validate(name: str, is_prefix: bool) -> tuple[str, ...]:
        if not signer_name:
            if ":" in name:
                return ('ClusterTrustBundle without signer name must not have ":" in its name',)
            return name_is_dns_subdomain(name, is_prefix)
        required_prefix = signer_name.replace("/", ":") + ":"
        if not name.startswith(required_prefix):
            return (
                f"ClusterTrustBundle for signerName {signer_name} must be named with prefix "
                f"{required_prefix}",
            )
        return name_is_dns_subdomain(name[len(required_prefix) :], is_prefix)

    return validate


def extract_signer_name_from_cluster_trust_bundle_name(name: str) -> tuple[str, bool]:
    """extractSignerNameFromClusterTrustBundleName: the part before the last ':', '/' for ':'."""
    split_point = name.rfind(":")
    if split_point == -1:
        return "", False
    return name[:split_point].replace(":", "/"), True


def is_domain_prefixed_key(fld_path: str, key: str, version: str) -> list[FieldError]:
    """apimachinery IsDomainPrefixedKey: a label key with a prefix (in the words of release
    `version`)."""
    if not key:
        return [required(RULE, fld_path)]
    errors = list(each(RULE, fld_path, key, label_wording(version).key(key)))
    if errors:
        return errors
    if len(key.split("/")) != 2:
        detail = 'must be a domain-prefixed key (such as "acme.io/foo")'
        return [invalid(RULE, fld_path, key, detail)]
    return []


def validate_user_annotations(
    user_annotations: dict[str, Any], fld_path: str, version: str
) -> list[FieldError]:
    """ValidateUserAnnotations: keys domain-prefixed (case-insensitively), keys and values
    together at most 256 kB. Go visits the map in random order; the document's order here."""
    errors: list[FieldError] = []
    for key in user_annotations:
        errors += is_domain_prefixed_key(fld_path, key.lower(), version)
    size = sum(
        byte_length(key) + byte_length(value if isinstance(value, str) else "")
        for key, value in user_annotations.items()
    )
    if size > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        errors.append(too_long(RULE, fld_path, TOTAL_ANNOTATION_SIZE_LIMIT_B))
    return errors


def _claim_path(value: str, fld_path: str, all_paths: set[str]) -> list[FieldError]:
    """A path the source writes: a conflict when another source of the volume writes it too."""
    if value in all_paths:
        return [invalid(RULE, fld_path, value, _CONFLICT)]
    all_paths.add(value)
    return []


def validate_cluster_trust_bundle_projection(
    source: dict[str, Any], proj_path: str, fld_path: str, all_paths: set[str], version: str
) -> list[FieldError]:
    """validateProjectionSources' clusterTrustBundle branch (`fld_path` the projected volume's,
    where conflicting paths are reported)."""
    errors: list[FieldError] = []
    name = source.get("name")
    signer_name = source.get("signerName")
    if name is not None and signer_name is not None:
        detail = "only one of name and signerName may be used"
        errors.append(invalid(RULE, proj_path, source, detail))
    elif name is not None:
        name = go_string(name)
        if not name:
            errors.append(required(RULE, f"{proj_path}.name", "must be a valid object name"))
        signer, _ = extract_signer_name_from_cluster_trust_bundle_name(name)
        for message in validate_cluster_trust_bundle_name(signer)(name, False):
            detail = f"not a valid clustertrustbundlename: {message}"
            errors.append(invalid(RULE, f"{proj_path}.name", name, detail))
        selector = source.get("labelSelector")
        if selector is not None:
            detail = "labelSelector must be unset if name is specified"
            errors.append(invalid(RULE, f"{proj_path}.labelSelector", selector, detail))
    elif signer_name is not None:
        signer_name = go_string(signer_name)
        if not signer_name:
            detail = "must be a valid signer name"
            errors.append(required(RULE, f"{proj_path}.signerName", detail))
        errors += validate_signer_name(f"{proj_path}.signerName", signer_name)
        errors += validate_label_selector(
            RULE,
            source.get("labelSelector"),
            LabelSelectorOptions(version),
            f"{proj_path}.labelSelector",
        )
    else:
        errors.append(required(RULE, proj_path, "either name or signerName must be specified"))
    path = go_string(source.get("path"))
    if not path:
        errors.append(required(RULE, f"{proj_path}.path"))
    errors += validate_user_field(source.get("user"), f"{proj_path}.user")
    errors += validate_local_non_reserved_path(path, f"{proj_path}.path")
    # Even an empty path is claimed: two bundles without one conflict.
    return errors + _claim_path(path, fld_path, all_paths)


def validate_pod_certificate_projection(
    source: dict[str, Any], proj_path: str, fld_path: str, all_paths: set[str], version: str
) -> list[FieldError]:
    """validateProjectionSources' podCertificate branch (`fld_path` the projected volume's,
    where conflicting paths are reported)."""
    signer_name = go_string(source.get("signerName"))
    errors = validate_signer_name(f"{proj_path}.signerName", signer_name)
    annotations = source.get("userAnnotations")
    if isinstance(annotations, dict):
        errors += validate_user_annotations(annotations, f"{proj_path}.userAnnotations", version)
    errors += validate_user_field(source.get("user"), f"{proj_path}.user")
    key_type = source.get("keyType")
    key_type = "" if key_type is None else key_type
    if key_type not in KEY_TYPES:
        errors.append(not_supported(RULE, f"{proj_path}.keyType", key_type, KEY_TYPES))
    seconds = opt_int(source.get("maxExpirationSeconds"))
    if seconds is not None:
        at = f"{proj_path}.maxExpirationSeconds"
        if seconds < 3600:
            errors.append(
                invalid(RULE, at, seconds, "if provided, maxExpirationSeconds must be >= 3600")
            )
        limit = MAX_MAX_EXPIRATION_SECONDS
        if is_kubernetes_signer_name(signer_name):
            limit = KUBERNETES_MAX_MAX_EXPIRATION_SECONDS
        if seconds > limit:
            detail = f"if provided, maxExpirationSeconds must be <= {limit}"
            errors.append(invalid(RULE, at, seconds, detail))
    num_paths = 0
    for name in ("credentialBundlePath", "keyPath", "certificateChainPath"):
        path = text(source.get(name))
        if path:
            num_paths += 1
            errors += validate_local_non_reserved_path(path, f"{proj_path}.{name}")
            errors += _claim_path(path, fld_path, all_paths)
    if num_paths == 0:
        detail = "specify at least one of credentialBundlePath, keyPath, and certificateChainPath"
        errors.append(required(RULE, proj_path, detail))
    return errors


def validate_certificate_projections(
    projection: dict[str, Any], src_path: str, fld_path: str, all_paths: set[str], version: str
) -> tuple[int, list[FieldError]]:
    """The clusterTrustBundle and podCertificate sources one projection sets (how many, for
    "may not specify more than 1 volume type per source") and their errors, in upstream's
    order, after the projection's secret, configMap, downwardAPI and serviceAccountToken."""
    count = 0
    errors: list[FieldError] = []
    bundle = projection.get("clusterTrustBundle")
    if bundle is not None:
        count += 1
        errors += validate_cluster_trust_bundle_projection(
            as_dict(bundle), f"{src_path}.clusterTrustBundle", fld_path, all_paths, version
        )
    certificate = projection.get("podCertificate")
    if certificate is not None:
        count += 1
        errors += validate_pod_certificate_projection(
            as_dict(certificate), f"{src_path}.podCertificate", fld_path, all_paths, version
        )
    return count, errors
