"""Kubernetes releases whose Job semantics jobguard emulates: the one table every
version-dependent decision reads (docs/RELEASES.md says how to add a release).

`RELEASES` is the list of supported releases, written here only: the shipped schemas
(scripts/generate_schemas.py), the chart's `kubeVersion` lower bound and the values schema's
enum are generated from it or checked against it by tests. `GATES` holds, for every feature gate
whose default changes a verdict, the release from which it is on by default (upstream
`pkg/features/kube_features.go`, `defaultVersionedKubernetesFeatureGates`); `CHANGES` the
behaviours that changed in code without a gate. A version not listed is refused
(`UnsupportedVersionError`): it never borrows another release's semantics silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

RELEASES = ("1.33", "1.34", "1.35", "1.36", "1.37")
SUPPORTED_VERSIONS = RELEASES
NEWEST_VERSION = RELEASES[-1]
DEFAULT_VERSION = "1.35"

# Feature gate -> the first supported release in which it is on by default (None: off in every
# supported release). Only gates that change a verdict on Jobs and CronJobs are listed.
GATES: dict[str, str | None] = {
    "PodLevelResources": "1.34",  # beta 1.34: pod-level resources (dropped before)
    "DynamicResourceAllocation": "1.34",  # GA 1.34: resourceClaims (dropped before)
    "MatchLabelKeysInPodTopologySpreadSelectorMerge": "1.34",  # beta 1.34
    "VolumeAttributesClass": "1.34",  # GA 1.34: a claim template's volumeAttributesClassName
    "ContainerRestartRules": "1.35",  # beta 1.35: container restartPolicy and rules
    "EnvFiles": "1.35",  # beta 1.35: fileKeyRef
    "ImageVolume": "1.35",  # beta on 1.35 (dropped before)
    "HostnameOverride": "1.35",  # beta 1.35
    "RestartAllContainersOnContainerExits": "1.36",  # beta 1.36
    "StrictIPCIDRValidation": "1.36",  # beta 1.36
    "MutableSchedulingDirectivesForSuspendedJobs": "1.36",  # KEP-5440 beta 1.36
    "MutablePodResourcesForSuspendedJobs": "1.36",  # KEP-5440 beta 1.36
    "SELinuxMount": "1.37",  # GA 1.37: seLinuxChangePolicy MountOption allowed
    "ClusterTrustBundleProjection": "1.37",  # GA 1.37 (dropped before)
    "PodCertificateRequest": "1.37",  # GA 1.37 (dropped before)
    "TaintTolerationComparisonOperators": None,  # alpha from 1.35: Lt/Gt refused
    "PodDeletionCost": "1.33",  # beta since 1.22: the annotation is validated
    # Off by default in every supported release (where they exist): their fields are dropped
    # (drop.py), so a template comparison (TM-001) never sees them.
    "ContainerStopSignals": None,  # a lifecycle's stopSignal
    "GenericWorkload": None,  # schedulingGroup
    "EvictionRequestAPI": None,  # evictionResponders
    "GRPCContainerProbeTLS": None,  # a gRPC probe's mode
    "H2CContainerProbe": None,  # an httpGet action's protocol
    "EmptyDirVolumeMode": None,  # an emptyDir's mode
    "VolumeBindMountOptions": None,  # a volume mount's bindMountOptions
    "AtomicWriteVolumeUserFields": None,  # a volume's defaultUser, its items' user
}

# Gate -> the first supported release whose API server drops the gate's fields while it is off
# (pkg/api/pod/util.go dropDisabledFields, drop.py); before it, the fields are validated and
# refused. A gate not listed drops in every supported release.
DROPPED_FROM: dict[str, str] = {
    "ContainerRestartRules": "1.34",  # dropContainerRestartRules came with the gate
}

# Behaviour changed in code (no gate) -> the first supported release with the newer behaviour.
CHANGES: dict[str, str] = {
    # ValidateTolerations lists Lt and Gt among the supported operators.
    "TolerationComparisonOperatorsListed": "1.35",
    # The Job status strategy of kubernetes#134521 and #132614: ST-033 reported as Invalid
    # "field is immutable ..." instead of Required "startTime cannot be removed ...".
    "NewestJobStatusStrategy": "1.36",
    # validateResizePolicy: "when pod `restartPolicy` is 'Never'"; RestartContainer refused on
    # non-sidecar init containers.
    "ResizePolicyOfNonSidecarInitContainers": "1.36",
    # validateImageVolumeSource: a reference required in templates too (not only in pods),
    # unless the stored template already has an empty one (AllowEmptyImageVolumeReference).
    "ImageVolumeReferenceRequiredInTemplates": "1.37",
    # jobStrategy.ValidateUpdate runs ValidateJobUpdate alone (1.36: ValidateJob first): the
    # Job spec is validated once on UPDATE, with no create-style metadata or generated-selector
    # check.
    "JobUpdateValidatedOnce": "1.37",
    # The host namespace fields left the internal PodSecurityContext: ValidatePodSpec checks
    # shareProcessNamespace with hostPID after the whole pod security context
    # (validateShareProcessNamespace, at spec.shareProcessNamespace), and validateWindows the
    # host fields after the security context's.
    "ShareProcessNamespaceAfterSecurityContext": "1.37",
    # apimachinery validateOwnerReference: "must not be empty" for kind, name and uid (1.33:
    # "kind must not be empty", ...).
    "OwnerReferenceShortMessages": "1.34",
    # apimachinery v0.37 validateOwnerReference: each reference's errors under its index, an
    # empty member Required (before: Invalid, under `ownerReferences` itself), and an apiVersion
    # that is not <group>/<version> or <version> named so (before: "version must not be empty").
    "OwnerReferencesByIndex": "1.37",
    # apimachinery v0.35: IsQualifiedName and IsValidLabelValue became content.IsLabelKey and
    # content.IsLabelValue (names.py `LabelWording`): lengths "must be no more than N bytes",
    # a key with more than one '/' "a valid label key ..." (before: "a qualified name ...").
    "LabelKeyAndValueContentMessages": "1.35",
    # GetValidationOptionsFromPodSpecAndMeta's relaxations that came with a field or a gate:
    # the release from which the stored template's use of it keeps it allowed.
    "EnvFilesOption": "1.34",
    "ContainerRestartRulesOption": "1.34",
    "RestartAllContainersOption": "1.35",
    "UserNamespacesHostNetworkSupportOption": "1.35",
    "SysAdminWhenPrivilegeEscalationFalseOption": "1.37",
}


# Version-dependent messages, written from the table so that they move with it.
NE009_MESSAGE = (
    "scheduling directives of a Job that has already run become mutable only from Kubernetes "
    f"{GATES['MutableSchedulingDirectivesForSuspendedJobs']} (KEP-5440)"
)


def _key(version: str) -> tuple[int, int]:
    major, minor = version.split(".")
    return int(major), int(minor)


class UnsupportedVersionError(ValueError):
    def __init__(self, version: object) -> None:
        accepted = ", ".join(f'"{v}"' for v in SUPPORTED_VERSIONS)
        super().__init__(
            f"unsupported kubernetesVersion {version!r}: accepted values are {accepted}"
        )


@dataclass(frozen=True, slots=True)
class Release:
    """One supported release: which gates are on by default and which code changes it has."""

    version: str

    @staticmethod
    @lru_cache(maxsize=16)
    def of(version: str) -> Release:
        if version not in RELEASES:
            raise UnsupportedVersionError(version)
        return Release(version)

    def gate(self, name: str) -> bool:
        """Whether feature gate `name` is on by default in this release (KeyError: not in the
        table, so a typo never reads as "off")."""
        since = GATES[name]
        return since is not None and _key(self.version) >= _key(since)

    def drops(self, name: str) -> bool:
        """Whether this release's API server drops the fields of gate `name` (off by default
        here, and its drop function exists; KeyError: not in `GATES`)."""
        first = DROPPED_FROM.get(name, RELEASES[0])
        return not self.gate(name) and _key(self.version) >= _key(first)

    def has(self, change: str) -> bool:
        """Whether this release has the newer behaviour `change` (KeyError: not in the table)."""
        return _key(self.version) >= _key(CHANGES[change])


@dataclass(frozen=True, slots=True)
class Semantics:
    """The Job-level behaviour of one release (docs/RULES.md, "Pod template and selectors
    (TM)" and "Status invariants (ST)"), read from `GATES` and `CHANGES`."""

    version: str
    mutable_scheduling_directives_for_suspended_jobs: bool
    mutable_pod_resources_for_suspended_jobs: bool
    newest_status_strategy: bool
    """ST-033's newest wording. Not gated: ST-033's exception for resuming jobs
    (kubernetes#134521, fixed before 1.35, back-ported to 1.32-1.34) and ST-031's for
    suspended zero-completion jobs (kubernetes#132614, before 1.34, back-ported to 1.32 and
    1.33) hold in every supported release."""
    job_update_validated_once: bool

    @classmethod
    def for_version(cls, version: str = DEFAULT_VERSION) -> Semantics:
        return _semantics(version)


@lru_cache(maxsize=16)
def _semantics(version: str) -> Semantics:
    release = Release.of(version)
    return Semantics(
        version=version,
        mutable_scheduling_directives_for_suspended_jobs=release.gate(
            "MutableSchedulingDirectivesForSuspendedJobs"
        ),
        mutable_pod_resources_for_suspended_jobs=release.gate(
            "MutablePodResourcesForSuspendedJobs"
        ),
        newest_status_strategy=release.has("NewestJobStatusStrategy"),
        job_update_validated_once=release.has("JobUpdateValidatedOnce"),
    )


AUTO_VERSION = "auto"
"""`kubernetesVersion: auto`: the cluster's version, read from its `/version` at start."""


@dataclass(frozen=True, slots=True)
class VersionChoice:
    """The semantics chosen for a cluster's version."""

    cluster: str
    """The cluster's version as "MAJOR.MINOR"."""
    version: str
    """The supported release whose semantics apply: the cluster's own, the newest one for a
    newer cluster, the oldest one for an older cluster."""

    @property
    def exact(self) -> bool:
        return self.cluster == self.version

    @property
    def newer(self) -> bool:
        """The cluster is newer than the newest supported release."""
        return _key(self.cluster) > _key(NEWEST_VERSION)


def choose_version(major: str, minor: str, git_version: str = "") -> VersionChoice:
    """The supported release for a cluster's `/version` (major, minor, gitVersion).

    Managed offerings report minors such as "35+"; the digits count. When major and minor say
    nothing usable, gitVersion ("v1.35.2-gke.100") does. ValueError when neither does.
    """
    numbers = _numbers(major, minor) or _numbers(*git_version.lstrip("v").split(".")[:2])
    if numbers is None:
        raise ValueError(
            f"cannot read a Kubernetes version from major={major!r}, minor={minor!r}, "
            f"gitVersion={git_version!r}"
        )
    cluster = f"{numbers[0]}.{numbers[1]}"
    if cluster in RELEASES:
        return VersionChoice(cluster, cluster)
    if numbers > _key(NEWEST_VERSION):
        return VersionChoice(cluster, NEWEST_VERSION)
    return VersionChoice(cluster, RELEASES[0])


_RELEASE = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+][0-9A-Za-z.+-]*)?")


def release_minor(text: str) -> str | None:
    """ "MAJOR.MINOR" of a release as people write it ("1.35.2", "v1.35", "v1.35.2-eks-4"),
    or None for anything else."""
    found = _RELEASE.fullmatch(text.strip())
    return f"{int(found[1])}.{int(found[2])}" if found else None


def _numbers(*parts: str) -> tuple[int, int] | None:
    if len(parts) != 2:
        return None
    digits = ["".join(c for c in part.split("-")[0] if c.isdigit()) for part in parts]
    if not all(digits):
        return None
    return int(digits[0]), int(digits[1])
