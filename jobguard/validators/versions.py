"""Kubernetes versions whose Job semantics jobguard can emulate, and their gate defaults."""

from __future__ import annotations

import re
from dataclasses import dataclass

SUPPORTED_VERSIONS = ("1.33", "1.34", "1.35", "1.36")
DEFAULT_VERSION = "1.35"


class UnsupportedVersionError(ValueError):
    def __init__(self, version: object) -> None:
        accepted = ", ".join(f'"{v}"' for v in SUPPORTED_VERSIONS)
        super().__init__(
            f"unsupported kubernetesVersion {version!r}: accepted values are {accepted}"
        )


@dataclass(frozen=True, slots=True)
class Semantics:
    """What differs between the supported versions, with their default gate settings
    (docs/RULES.md, "Pod template and selectors (TM)" and "Status invariants (ST)")."""

    version: str
    # KEP-5440 MutableSchedulingDirectivesForSuspendedJobs: beta, on by default in 1.36.
    mutable_scheduling_directives_for_suspended_jobs: bool
    # KEP-5440 MutablePodResourcesForSuspendedJobs: beta, on by default in 1.36.
    mutable_pod_resources_for_suspended_jobs: bool
    # ST-033 reported as Invalid "field is immutable ..." (newest source). Not gated: ST-033's
    # exception for resuming jobs (kubernetes#134521, fixed before 1.35, back-ported to
    # 1.32-1.34) and ST-031's for suspended zero-completion jobs (kubernetes#132614, before
    # 1.34, back-ported to 1.32 and 1.33).
    newest_status_strategy: bool

    @classmethod
    def for_version(cls, version: str = DEFAULT_VERSION) -> Semantics:
        if version not in SUPPORTED_VERSIONS:
            raise UnsupportedVersionError(version)
        newest = version == "1.36"
        return cls(
            version=version,
            mutable_scheduling_directives_for_suspended_jobs=newest,
            mutable_pod_resources_for_suspended_jobs=newest,
            newest_status_strategy=newest,
        )


AUTO_VERSION = "auto"
"""`kubernetesVersion: auto`: the cluster's version, read from its `/version` at start."""


@dataclass(frozen=True, slots=True)
class VersionChoice:
    """The semantics chosen for a cluster's version."""

    cluster: str
    """The cluster's version as "MAJOR.MINOR"."""
    version: str
    """The supported version whose semantics apply (the nearest one when not supported)."""

    @property
    def exact(self) -> bool:
        return self.cluster == self.version


def choose_version(major: str, minor: str, git_version: str = "") -> VersionChoice:
    """The supported version for a cluster's `/version` (major, minor, gitVersion).

    Managed offerings report minors such as "35+"; the digits count. When major and minor say
    nothing usable, gitVersion ("v1.35.2-gke.100") does. ValueError when neither does.
    """
    numbers = _numbers(major, minor) or _numbers(*git_version.lstrip("v").split(".")[:2])
    if numbers is None:
        raise ValueError(
            f"cannot read a Kubernetes version from major={major!r}, minor={minor!r}, "
            f"gitVersion={git_version!r}"
        )
    cluster_major, cluster_minor = numbers

    def distance(supported: str) -> int:
        s_major, s_minor = (int(part) for part in supported.split("."))
        return abs((s_major - cluster_major) * 1000 + s_minor - cluster_minor)

    nearest = min(SUPPORTED_VERSIONS, key=distance)
    return VersionChoice(f"{cluster_major}.{cluster_minor}", nearest)


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
