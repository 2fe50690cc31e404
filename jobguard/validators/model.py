"""Typed views of the parts of Job and CronJob objects that the rules read.

Validation is strict, like the API server's JSON decoding into Go types: `"completions": "ten"`
or `"suspend": "yes"` is a decode error naming the field, not a coercion. Fields the rules do
not read are ignored here. Rules that compare whole parts semantically (pod template, selector)
read the prepared JSON through `JobJson` instead; the small parts rules echo in messages keep
what they do not type, so `as_sent` gives them back as sent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, ValidationError
from pydantic_core import ErrorDetails, core_schema

from jobguard.validators.semantic import parse_time

Int32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]
Int64 = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]


class Time:
    """metav1.Time: an instant read from an RFC 3339 string with a zone (numbers and naive
    times are refused). Compares as the instant; keeps the text it was read from."""

    __slots__ = ("instant", "text")

    def __init__(self, text: str, instant: datetime) -> None:
        self.text = text
        self.instant = instant

    @classmethod
    def parse(cls, value: Any) -> Time:
        if not isinstance(value, str):
            raise ValueError("must be an RFC 3339 timestamp string")
        if len(value) <= _MAX_KEPT_TIME:
            return _kept_time(value)
        return _time(value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Time) and self.instant == other.instant

    def __hash__(self) -> int:
        return hash(self.instant)

    def __lt__(self, other: Time) -> bool:
        return self.instant < other.instant

    def __repr__(self) -> str:
        return f"Time({self.text!r})"

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            cls.parse,
            serialization=core_schema.plain_serializer_function_ser_schema(lambda t: t.text),
        )


def _time(text: str) -> Time:
    parsed = parse_time(text)
    if parsed is None:
        raise ValueError(f"{text!r} is not an RFC 3339 timestamp with a time zone")
    return Time(text, parsed)


# Every status update of a Job sends its startTime twice (new and stored object) and again in
# the next one, so times read are kept (a Time is never changed once made). Only strings as
# long as a timestamp can be are kept: 1,024 of them hold well under 1 MiB.
_MAX_KEPT_TIME = 64
_kept_time = lru_cache(maxsize=1024)(_time)

StringMap = dict[str, str]

INDEXED = "Indexed"
NON_INDEXED = "NonIndexed"
JOB_CONTROLLER = "kubernetes.io/job-controller"


class _Model(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", populate_by_name=True, frozen=False)


class _KeptModel(_Model):
    """A part echoed whole in messages: members not typed here are kept (not validated)."""

    model_config = ConfigDict(extra="allow")


def as_sent(part: _KeptModel | None) -> Any:
    """A kept part as JSON, as it was sent: the fields it set (explicit nulls included) and
    the ones not typed here; None for an absent part."""
    if part is None:
        return None
    # The serializer itself: model_dump's wrapper costs as much again on small parts.
    return part.__pydantic_serializer__.to_python(part, by_alias=True, exclude_unset=True)


class ObjectMeta(_Model):
    name: str | None = None
    generate_name: str | None = Field(None, alias="generateName")
    namespace: str | None = None
    uid: str | None = None
    labels: StringMap | None = None
    annotations: StringMap | None = None
    generation: Int64 | None = None


class LabelSelectorRequirement(_KeptModel):
    key: str = ""
    operator: str = ""
    values: list[str] | None = None


class LabelSelector(_KeptModel):
    match_labels: StringMap | None = Field(None, alias="matchLabels")
    match_expressions: list[LabelSelectorRequirement] | None = Field(None, alias="matchExpressions")


class SuccessPolicyRule(_KeptModel):
    succeeded_indexes: str | None = Field(None, alias="succeededIndexes")
    succeeded_count: Int32 | None = Field(None, alias="succeededCount")


class SuccessPolicy(_KeptModel):
    rules: list[SuccessPolicyRule] | None = None


class Container(_Model):
    name: str = ""
    resources: dict[str, Any] | None = None


class PodSpec(_Model):
    containers: list[Container] | None = None
    init_containers: list[Container] | None = Field(None, alias="initContainers")
    restart_policy: str | None = Field(None, alias="restartPolicy")
    node_selector: StringMap | None = Field(None, alias="nodeSelector")
    tolerations: list[dict[str, Any]] | None = None
    affinity: dict[str, Any] | None = None
    scheduling_gates: list[dict[str, Any]] | None = Field(None, alias="schedulingGates")


class PodTemplateMeta(_Model):
    labels: StringMap | None = None
    annotations: StringMap | None = None


class PodTemplateSpec(_Model):
    metadata: PodTemplateMeta | None = None
    spec: PodSpec | None = None


class ExitCodesRequirement(_Model):
    container_name: str | None = Field(None, alias="containerName")
    operator: str = ""
    values: list[Int32] | None = None


class PodConditionsPattern(_Model):
    type: str = ""
    status: str | None = None


class PodFailurePolicyRule(_Model):
    action: str = ""
    on_exit_codes: ExitCodesRequirement | None = Field(None, alias="onExitCodes")
    on_pod_conditions: list[PodConditionsPattern] | None = Field(None, alias="onPodConditions")


class PodFailurePolicy(_Model):
    rules: list[PodFailurePolicyRule] | None = None


class JobSpec(_Model):
    parallelism: Int32 | None = None
    completions: Int32 | None = None
    active_deadline_seconds: Int64 | None = Field(None, alias="activeDeadlineSeconds")
    pod_failure_policy: PodFailurePolicy | None = Field(None, alias="podFailurePolicy")
    success_policy: SuccessPolicy | None = Field(None, alias="successPolicy")
    backoff_limit: Int32 | None = Field(None, alias="backoffLimit")
    backoff_limit_per_index: Int32 | None = Field(None, alias="backoffLimitPerIndex")
    max_failed_indexes: Int32 | None = Field(None, alias="maxFailedIndexes")
    selector: LabelSelector | None = None
    manual_selector: bool | None = Field(None, alias="manualSelector")
    template: PodTemplateSpec | None = None
    ttl_seconds_after_finished: Int32 | None = Field(None, alias="ttlSecondsAfterFinished")
    completion_mode: str | None = Field(None, alias="completionMode")
    suspend: bool | None = None
    pod_replacement_policy: str | None = Field(None, alias="podReplacementPolicy")
    managed_by: str | None = Field(None, alias="managedBy")


class JobCondition(_Model):
    type: str = ""
    status: str = ""
    reason: str | None = None
    message: str | None = None


class UncountedTerminatedPods(_KeptModel):
    succeeded: list[str] | None = None
    failed: list[str] | None = None


class JobStatus(_Model):
    conditions: list[JobCondition] | None = None
    start_time: Time | None = Field(None, alias="startTime")
    completion_time: Time | None = Field(None, alias="completionTime")
    active: Int32 | None = None
    succeeded: Int32 | None = None
    failed: Int32 | None = None
    terminating: Int32 | None = None
    ready: Int32 | None = None
    completed_indexes: str | None = Field(None, alias="completedIndexes")
    failed_indexes: str | None = Field(None, alias="failedIndexes")
    uncounted_terminated_pods: UncountedTerminatedPods | None = Field(
        None, alias="uncountedTerminatedPods"
    )


class Job(_Model):
    api_version: str | None = Field(None, alias="apiVersion")
    kind: str | None = None
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: JobSpec = Field(default_factory=JobSpec)
    status: JobStatus = Field(default_factory=JobStatus)


class JobTemplateSpec(_Model):
    metadata: ObjectMeta | None = None
    spec: JobSpec = Field(default_factory=JobSpec)


class CronJobSpec(_Model):
    job_template: JobTemplateSpec = Field(default_factory=JobTemplateSpec, alias="jobTemplate")


class CronJob(_Model):
    api_version: str | None = Field(None, alias="apiVersion")
    kind: str | None = None
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: CronJobSpec = Field(default_factory=CronJobSpec)


@dataclass(frozen=True, slots=True)
class DecodeProblem:
    """One field the object cannot be read with, worded as the API server's OpenAPI
    validation words it (`spec.completions in body must be of type integer: "string"`)."""

    field: str
    detail: str
    value: Any = None
    """What the error prints as the value: the JSON type sent, for a wrong type."""
    type_error: bool = True
    """A wrong type (FieldValueTypeInvalid) rather than a wrong value (FieldValueInvalid)."""


class ObjectDecodeError(ValueError):
    """An object that cannot be read as its kind: `field` and `reason` name the first
    offending field, `problems` every one (all wrong field types at once)."""

    def __init__(self, field: str, reason: str, problems: tuple[DecodeProblem, ...] = ()) -> None:
        self.field = field
        self.reason = reason
        self.problems = problems
        super().__init__(f"{field}: {reason}" if field else reason)


# Map-typed fields: their members are keys, written `labels[app]` in paths.
_MAP_FIELDS = frozenset({"labels", "annotations", "nodeSelector", "matchLabels"})
_TIME_FIELDS = frozenset({"startTime", "completionTime"})
# pydantic's error types for a value of the wrong JSON type, and the type it wanted.
_EXPECTED_TYPES = {
    "int_type": "integer",
    "int_parsing": "integer",
    "int_from_float": "integer",
    "bool_type": "boolean",
    "bool_parsing": "boolean",
    "string_type": "string",
    "float_type": "number",
    "list_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
}


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _loc_to_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    previous: int | str = ""
    for part in loc:
        if isinstance(part, int) or previous in _MAP_FIELDS:
            path += f"[{part}]"
        elif path == "":
            path = part
        else:
            path += f".{part}"
        previous = part
    return path


def _quote(text: str) -> str:
    """Go's %q for the plain strings quoted here (JSON escaping agrees on them)."""
    return json.dumps(text, ensure_ascii=False)


def describe(error: ErrorDetails, prefix: str = "") -> DecodeProblem:
    """One pydantic error in the API server's words, at the API server's path."""
    path = _loc_to_path(tuple(error["loc"]))
    full = f"{prefix}.{path}" if prefix and path else (prefix or path)
    value = error.get("input")
    expected = _EXPECTED_TYPES.get(error["type"])
    if expected is None and error["type"] == "value_error" and error["loc"][-1] in _TIME_FIELDS:
        if isinstance(value, str):  # a string, but not an RFC 3339 time (metav1.Time)
            return DecodeProblem(
                full, f"{full} in body must be of type date-time: {_quote(value)}", value
            )
        expected = "string"
    if expected is not None:
        actual = json_type(value)
        return DecodeProblem(
            full, f"{full} in body must be of type {expected}: {_quote(actual)}", actual
        )
    context = error.get("ctx") or {}
    if error["type"] == "less_than_equal":
        detail = f"{full} in body should be less than or equal to {context['le']}"
        return DecodeProblem(full, detail, value, type_error=False)
    if error["type"] == "greater_than_equal":
        detail = f"{full} in body should be greater than or equal to {context['ge']}"
        return DecodeProblem(full, detail, value, type_error=False)
    return DecodeProblem(
        full, str(error["msg"]).removeprefix("Value error, "), value, type_error=False
    )


def _input_order(raw: Any, loc: tuple[int | str, ...]) -> tuple[int, ...]:
    """Where a field stands in the object as sent: the index of each step of its path."""
    order = []
    for part in loc:
        if isinstance(raw, dict):
            keys = list(raw)
            order.append(keys.index(part) if part in raw else len(keys))
            raw = raw.get(part)
        elif isinstance(raw, list) and isinstance(part, int):
            order.append(part)
            raw = raw[part] if part < len(raw) else None
        else:
            break
    return tuple(order)


def _decode_error(prefix: str, exc: ValidationError, raw: Any) -> ObjectDecodeError:
    errors = exc.errors(include_url=False)
    # In the order the fields were written (pydantic reports them in the model's order).
    errors.sort(key=lambda error: _input_order(raw, tuple(error["loc"])))
    problems = tuple(describe(error, prefix) for error in errors)
    return ObjectDecodeError(problems[0].field, problems[0].detail, problems)


def _without_nulls(raw: dict[str, Any]) -> dict[str, Any]:
    """JSON null for metadata/spec/status decodes to the empty value in Go."""
    get = raw.get
    if get("metadata", 0) is None or get("spec", 0) is None or get("status", 0) is None:
        return {k: v for k, v in raw.items() if v is not None}
    return raw


_ModelT = TypeVar("_ModelT", bound=BaseModel)


def _decode(model: type[_ModelT], raw: Any, prefix: str) -> _ModelT:
    if not isinstance(raw, dict):
        raise ObjectDecodeError(prefix, "must be a JSON object")
    try:
        # The validator itself: model_validate's wrapper costs as much as a small part.
        validated: _ModelT = model.__pydantic_validator__.validate_python(_without_nulls(raw))
        return validated
    except ValidationError as exc:
        raise _decode_error(prefix, exc, raw) from None


def decode_job(raw: Any, prefix: str = "") -> Job:
    """Read a raw JSON object as a Job, or raise ObjectDecodeError naming the field."""
    return _decode(Job, raw, prefix)


def decode_cronjob(raw: Any, prefix: str = "") -> CronJob:
    """Read a raw JSON object as a CronJob, or raise ObjectDecodeError naming the field."""
    return _decode(CronJob, raw, prefix)


def _member(raw: Any, key: str) -> Any:
    return raw.get(key) if isinstance(raw, dict) else None


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class JobJson:
    """A prepared Job as JSON, read through typed accessors: for the rules that compare parts
    whole (semantically, as upstream's DeepEqual compares types jobguard does not model) or
    echo them exactly as sent. Absent and wrongly shaped parts read as None (or empty).

    The parts every request reads (metadata, spec, template) are looked up once, here."""

    __slots__ = ("metadata", "raw", "spec", "template")

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.metadata: dict[str, Any] = _map(raw.get("metadata"))
        self.spec: dict[str, Any] = _map(raw.get("spec"))
        self.template: dict[str, Any] = _map(self.spec.get("template"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JobJson) and self.raw == other.raw

    __hash__ = None  # type: ignore[assignment]  # a view of a mutable dict

    def __repr__(self) -> str:
        return f"JobJson({self.raw!r})"

    @property
    def template_labels(self) -> dict[str, Any]:
        labels = _member(self.template.get("metadata"), "labels")
        return labels if isinstance(labels, dict) else {}

    @property
    def selector(self) -> Any:
        return self.spec.get("selector")

    @property
    def pod_failure_policy(self) -> Any:
        return self.spec.get("podFailurePolicy")

    @property
    def success_policy(self) -> Any:
        return self.spec.get("successPolicy")
