"""Kubernetes versions whose Job semantics jobguard can emulate, and their gate defaults."""

from __future__ import annotations

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
