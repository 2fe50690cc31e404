"""The inputs of one judgement, independent of where they came from (webhook, CLI, files)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from jobguard.validators.lifecycle import JobState, Transition
from jobguard.validators.model import CronJob, Job, JobJson, ObjectDecodeError
from jobguard.validators.versions import Semantics


class Operation(StrEnum):
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    CONNECT = "CONNECT"


DEFAULT_NAMESPACE = "default"
"""Where a namespaced object that names no namespace goes (kubectl's and the API server's)."""


def resolve_namespace(request_namespace: str, obj: Any) -> str:
    """The namespace a request acts in: the request's, else the object's, else the default.

    The only place this is decided; `Request` applies it, so every consumer reads
    `Request.namespace` (or `JobContext.namespace`) and never falls back on its own.
    """
    if request_namespace:
        return request_namespace
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    namespace = metadata.get("namespace") if isinstance(metadata, dict) else None
    return namespace if isinstance(namespace, str) and namespace else DEFAULT_NAMESPACE


@dataclass(frozen=True, slots=True)
class Requester:
    username: str = ""
    groups: tuple[str, ...] = ()


# Not frozen: one is built for every review, and a frozen dataclass's __init__ costs five times a
# plain one's (an object.__setattr__ per field). Nothing changes a request once built.
@dataclass(slots=True)
class Request:
    """One admission request for a batch/v1 object, as the pipeline judges it."""

    kind: str
    """`Job` or `CronJob`; anything else is allowed at once."""
    operation: Operation
    object: Any
    old_object: Any = None
    subresource: str = ""
    namespace: str = ""
    """Resolved on construction (`resolve_namespace`): never empty afterwards."""
    name: str = ""
    requester: Requester = field(default_factory=Requester)
    dry_run: bool = False
    unreadable: ObjectDecodeError | None = None
    """A value in the request that only the webhook's fallback JSON decoder could read (an
    integer beyond 64 bits, ...): the object is judged unreadable at that field (DEC-001)."""
    manifest: bool = False
    """The object is a manifest as written (`jobguard check`), not one the API server decoded:
    the schema rules (SC) judge it."""

    def __post_init__(self) -> None:
        self.namespace = resolve_namespace(self.namespace, self.object)


# Job contexts are not frozen: one is built for every request, and a frozen dataclass's __init__
# costs five times a plain one's (an object.__setattr__ per field). Rules only read them.
@dataclass(slots=True)
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


@dataclass(slots=True)
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
    """The request's resolved namespace (`Request.namespace`)."""


@dataclass(slots=True)
class JobUpdateContext(_JobChangeContext):
    """An UPDATE of `jobs` (the status is the stored one)."""


@dataclass(slots=True)
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
