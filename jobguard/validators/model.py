"""Typed views of the parts of Job and CronJob objects that the rules read.

Decoding is strict, like the API server's JSON decoding into Go types: `"completions": "ten"`
or `"suspend": "yes"` is a decode error naming the field, not a coercion. Fields the rules do
not read are ignored here, as the API server drops fields its types do not know. Rules that
compare whole parts semantically (pod template, selector) read the prepared JSON through
`JobJson` instead.

The views are msgspec Structs: converting a Job's JSON into them costs about a third of
building pydantic models (bench/README.md, "Decoding with msgspec"). msgspec stops at the first
wrong field, so an object it refuses is read again by pydantic models made from the same Structs
(`_error_model`), which name every wrong field at once; `describe` words pydantic's errors as
the API server's OpenAPI validation words them.
"""

from __future__ import annotations

import functools
import json
import operator
import types
import typing
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import msgspec

from jobguard.validators.semantic import parse_time

if TYPE_CHECKING:  # pydantic is imported only to word a refused object's errors
    from pydantic import BaseModel, GetCoreSchemaHandler, ValidationError
    from pydantic_core import ErrorDetails, core_schema

Int32 = Annotated[int, msgspec.Meta(ge=-(2**31), le=2**31 - 1)]
Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]


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
        from pydantic_core import core_schema

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


class _Model(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    """A typed view: members named in camelCase in JSON, unset ones left out when written."""


def as_sent(part: _Model | None) -> Any:
    """A part as JSON, as the API server holds it once decoded: the fields typed here that are
    set (null and unknown members are dropped, as Go's JSON decoding drops them); None for an
    absent part."""
    if part is None:
        return None
    return msgspec.to_builtins(part)


class ObjectMeta(_Model):
    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    labels: StringMap | None = None
    annotations: StringMap | None = None
    generation: Int64 | None = None


class LabelSelectorRequirement(_Model):
    key: str = ""
    operator: str = ""
    values: list[str] | None = None


class LabelSelector(_Model):
    match_labels: StringMap | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None


class SuccessPolicyRule(_Model):
    succeeded_indexes: str | None = None
    succeeded_count: Int32 | None = None


class SuccessPolicy(_Model):
    rules: list[SuccessPolicyRule] | None = None


class Container(_Model):
    name: str = ""
    resources: dict[str, Any] | None = None


class PodSpec(_Model):
    containers: list[Container] | None = None
    init_containers: list[Container] | None = None
    restart_policy: str | None = None
    node_selector: StringMap | None = None
    tolerations: list[dict[str, Any]] | None = None
    affinity: dict[str, Any] | None = None
    scheduling_gates: list[dict[str, Any]] | None = None


class PodTemplateMeta(_Model):
    labels: StringMap | None = None
    annotations: StringMap | None = None


class PodTemplateSpec(_Model):
    metadata: PodTemplateMeta | None = None
    spec: PodSpec | None = None


class ExitCodesRequirement(_Model):
    container_name: str | None = None
    operator: str = ""
    values: list[Int32] | None = None


class PodConditionsPattern(_Model):
    type: str = ""
    status: str | None = None


class PodFailurePolicyRule(_Model):
    action: str = ""
    on_exit_codes: ExitCodesRequirement | None = None
    on_pod_conditions: list[PodConditionsPattern] | None = None


class PodFailurePolicy(_Model):
    rules: list[PodFailurePolicyRule] | None = None


class JobSpec(_Model):
    parallelism: Int32 | None = None
    completions: Int32 | None = None
    active_deadline_seconds: Int64 | None = None
    pod_failure_policy: PodFailurePolicy | None = None
    success_policy: SuccessPolicy | None = None
    backoff_limit: Int32 | None = None
    backoff_limit_per_index: Int32 | None = None
    max_failed_indexes: Int32 | None = None
    selector: LabelSelector | None = None
    manual_selector: bool | None = None
    template: PodTemplateSpec | None = None
    ttl_seconds_after_finished: Int32 | None = None
    completion_mode: str | None = None
    suspend: bool | None = None
    pod_replacement_policy: str | None = None
    managed_by: str | None = None


class JobCondition(_Model):
    type: str = ""
    status: str = ""
    reason: str | None = None
    message: str | None = None


class UncountedTerminatedPods(_Model):
    succeeded: list[str] | None = None
    failed: list[str] | None = None


class JobStatus(_Model):
    conditions: list[JobCondition] | None = None
    start_time: Time | None = None
    completion_time: Time | None = None
    active: Int32 | None = None
    succeeded: Int32 | None = None
    failed: Int32 | None = None
    terminating: Int32 | None = None
    ready: Int32 | None = None
    completed_indexes: str | None = None
    failed_indexes: str | None = None
    uncounted_terminated_pods: UncountedTerminatedPods | None = None


class Job(_Model):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: JobSpec = msgspec.field(default_factory=JobSpec)
    status: JobStatus = msgspec.field(default_factory=JobStatus)


class JobTemplateSpec(_Model):
    metadata: ObjectMeta | None = None
    spec: JobSpec = msgspec.field(default_factory=JobSpec)


class CronJobSpec(_Model):
    job_template: JobTemplateSpec = msgspec.field(default_factory=JobTemplateSpec)


class CronJob(_Model):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: CronJobSpec = msgspec.field(default_factory=CronJobSpec)


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


_StructT = TypeVar("_StructT", bound=_Model)


def _dec_hook(kind: type, value: Any) -> Any:
    """Values of the types msgspec does not know (metav1.Time)."""
    if kind is Time:
        return Time.parse(value)
    raise NotImplementedError(kind)


def _decode(struct: type[_StructT], raw: Any, prefix: str) -> _StructT:
    if not isinstance(raw, dict):
        raise ObjectDecodeError(prefix, "must be a JSON object")
    raw = _without_nulls(raw)
    try:
        return msgspec.convert(raw, struct, strict=True, dec_hook=_dec_hook)
    except msgspec.ValidationError as refusal:
        return _after_refusal(struct, raw, prefix, refusal)


def _after_refusal(
    struct: type[_StructT], raw: dict[str, Any], prefix: str, refusal: msgspec.ValidationError
) -> _StructT:
    """Every wrong field of an object msgspec refused (it names only the first)."""
    from pydantic import ValidationError

    try:
        _error_model(struct).__pydantic_validator__.validate_python(_read_parts_as_json(raw))
    except ValidationError as exc:
        raise _decode_error(prefix, exc, raw) from None
    # pydantic accepts what msgspec refuses in one case: a manifest's key that is not a string
    # (YAML's `1: x`), which pydantic ignores as an unknown member. The API server gets it as
    # the string YAML-to-JSON makes of it, an unknown field, dropped: read as that.
    try:
        return msgspec.convert(_string_keys(raw), struct, strict=True, dec_hook=_dec_hook)
    except msgspec.ValidationError:
        pass
    # Both readers refuse the same objects otherwise (tests/test_model_decode.py); were pydantic
    # ever to accept another, it is refused still, in msgspec's words at msgspec's path.
    message, _, at = str(refusal).partition(" - at `$")
    path = at.rstrip("`").lstrip(".")
    full = f"{prefix}.{path}" if prefix and path else (prefix or path)
    raise ObjectDecodeError(
        full, message, (DecodeProblem(full, f"{full} in body: {message}", type_error=False),)
    )


def _read_parts_as_json(raw: dict[str, Any]) -> dict[str, Any]:
    """`raw` with the parts given as Structs already read (pipeline._decode_old's) as their
    JSON: msgspec takes them as they are, pydantic's models would call them wrong objects."""
    if not any(isinstance(value, msgspec.Struct) for value in raw.values()):
        return raw
    return {
        key: msgspec.to_builtins(value, enc_hook=_enc_hook)
        if isinstance(value, msgspec.Struct)
        else value
        for key, value in raw.items()
    }


def _enc_hook(value: Any) -> Any:
    """Values of the types msgspec does not know, as JSON (metav1.Time as its text)."""
    if isinstance(value, Time):
        return value.text
    raise NotImplementedError(type(value))


def _string_keys(value: Any) -> Any:
    """`value` with every object key a string, as YAML-to-JSON conversion writes them."""
    if isinstance(value, dict):
        return {
            # (str for a key JSON has no word for: any string is an unknown field alike.)
            key if isinstance(key, str) else json.dumps(key, default=str): _string_keys(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_string_keys(item) for item in value]
    return value


@functools.cache
def _error_model(struct: type[_Model]) -> type[BaseModel]:
    """The pydantic model that reads what `struct` reads, as strictly (made on first use)."""
    from pydantic import ConfigDict, Field, create_model

    fields: dict[str, Any] = {}
    for info in msgspec.structs.fields(struct):
        if info.default_factory is not msgspec.NODEFAULT:
            factory = _error_model(info.default_factory)
            default = Field(default_factory=factory, alias=info.encode_name)
        else:
            default = Field(info.default, alias=info.encode_name)
        fields[info.name] = (_error_type(info.type), default)
    config = ConfigDict(strict=True, extra="ignore")
    model: type[BaseModel] = create_model(struct.__name__, __config__=config, **fields)
    return model


def _error_type(kind: Any) -> Any:
    """A Struct field's type for pydantic: Structs as their error models, msgspec's bounds as
    pydantic's."""
    from pydantic import Field

    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is Annotated:
        bounds = [Field(ge=m.ge, le=m.le) for m in args[1:] if isinstance(m, msgspec.Meta)]
        return Annotated[(_error_type(args[0]), *bounds)]
    if isinstance(kind, type) and issubclass(kind, _Model):
        return _error_model(kind)
    if origin in (typing.Union, types.UnionType):
        return functools.reduce(operator.or_, (_error_type(arg) for arg in args))
    if origin is list:
        return list[_error_type(args[0])]  # type: ignore[misc]
    if origin is dict:
        return dict[_error_type(args[0]), _error_type(args[1])]  # type: ignore[misc]
    return kind


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

    @property
    def uncounted_terminated_pods(self) -> Any:
        return _member(self.raw.get("status"), "uncountedTerminatedPods")
