"""The inputs of one judgement, independent of where they came from (webhook, CLI, files)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from jobguard.validators.lifecycle import JobState, Transition
from jobguard.validators.model import CronJob, Job, JobJson
from jobguard.validators.versions import Semantics


class Operation(StrEnum):
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    CONNECT = "CONNECT"


@dataclass(frozen=True, slots=True)
class Requester:
    username: str = ""
    groups: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Request:
    """One admission request for a batch/v1 object, as the pipeline judges it."""

    kind: str
    """`Job` or `CronJob`; anything else is allowed at once."""
    operation: Operation
    object: Any
    old_object: Any = None
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    requester: Requester = field(default_factory=Requester)
    dry_run: bool = False


@dataclass(frozen=True, slots=True)
class JobCreateContext:
    """A CREATE of `jobs` after preparation and decoding, with its lifecycle state."""

    semantics: Semantics
    new: Job
    new_json: JobJson
    """The same Job as sent (prepared), for parts compared or echoed whole."""
    new_state: JobState
    requester: Requester
    namespace: str = ""
    """The request's namespace (the Job's, when the request does not say)."""


@dataclass(frozen=True, slots=True)
class _JobChangeContext:
    """An UPDATE: the old Job is always there, with what the update changes."""

    semantics: Semantics
    new: Job
    new_json: JobJson
    new_state: JobState
    old: Job
    old_json: JobJson
    old_state: JobState
    transition: Transition
    requester: Requester
    namespace: str = ""
    """The request's namespace (the Job's, when the request does not say)."""


@dataclass(frozen=True, slots=True)
class JobUpdateContext(_JobChangeContext):
    """An UPDATE of `jobs` (the status is the stored one)."""


@dataclass(frozen=True, slots=True)
class JobStatusContext(_JobChangeContext):
    """An UPDATE of `jobs/status` (the spec is the stored one)."""


JobContext = JobCreateContext | JobUpdateContext | JobStatusContext
"""A Job request, one type per operation, so UPDATE-only checks get the old Job for certain."""


@dataclass(slots=True)
class CronJobContext:
    semantics: Semantics
    operation: Operation
    new: CronJob
    new_raw: dict[str, Any]
    old: CronJob | None
    old_raw: dict[str, Any] | None
