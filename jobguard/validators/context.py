"""The inputs of one judgement, independent of where they came from (webhook, CLI, files)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from jobguard.validators.lifecycle import JobState, Transition
from jobguard.validators.model import CronJob, Job
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
    manifest: bool = False
    """The object is a manifest as written (`jobguard check`), not one the API server decoded:
    the schema rules (SC) judge it."""


@dataclass(slots=True)
class JobContext:
    """A Job request after preparation and decoding, with its lifecycle model."""

    semantics: Semantics
    operation: Operation
    subresource: str
    new: Job
    new_raw: dict[str, Any]
    new_state: JobState
    old: Job | None
    old_raw: dict[str, Any] | None
    old_state: JobState | None
    transition: Transition
    requester: Requester
    namespace: str = ""
    """The request's namespace (the Job's, when the request does not say)."""

    @property
    def is_status(self) -> bool:
        return self.subresource == "status"


@dataclass(slots=True)
class CronJobContext:
    semantics: Semantics
    operation: Operation
    new: CronJob
    new_raw: dict[str, Any]
    old: CronJob | None
    old_raw: dict[str, Any] | None
