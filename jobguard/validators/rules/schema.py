"""SC-001..SC-003: a manifest against the OpenAPI schema of the selected Kubernetes version
(docs/RULES.md, "OpenAPI schema (SC)").

The schemas ship with jobguard (`jobguard.validators.schemas`, one self-contained file per
version); each is compiled once per process by jsonschema-rs. A valid document costs one
`is_valid` call; only an invalid one is walked for its errors, reported as the API server
reports them: unknown fields as strict field validation does (`unknown field "spec.foo"`),
wrong types and out-of-range integers as OpenAPI validation words them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import jsonschema_rs
import orjson

from jobguard.validators.cron import go_quote
from jobguard.validators.errors import (
    ErrorType,
    FieldError,
    forbidden,
    invalid,
    invalid_omitted,
    not_supported,
    required,
)
from jobguard.validators.model import json_type

SCHEMA_PACKAGE = "jobguard.validators.schemas"
KINDS = ("Job", "CronJob")


@dataclass(frozen=True, slots=True)
class CompiledSchemas:
    definitions: dict[str, Any]
    validators: dict[str, jsonschema_rs.Validator]


@cache
def compiled(version: str) -> CompiledSchemas:
    """The schemas of one Kubernetes version, compiled once."""
    source = resources.files(SCHEMA_PACKAGE).joinpath(f"k8s-{version}.json").read_bytes()
    document = orjson.loads(source)
    definitions = document["$defs"]
    validators = {
        kind: jsonschema_rs.validator_for(
            {"$schema": document["$schema"], "$defs": definitions, "$ref": f"#/$defs/{kind}"}
        )
        for kind in KINDS
    }
    return CompiledSchemas(definitions, validators)


@dataclass(frozen=True, slots=True)
class SchemaOptions:
    kind: str
    """Job or CronJob: whose schema."""
    version: str
    """The Kubernetes version whose schemas apply."""


def check_schema(obj: Any, old: Any, path: str, opts: SchemaOptions) -> list[FieldError]:
    """Every schema error of a Job or CronJob manifest (an empty list when it conforms); paths
    are the object's own (`path` names the object itself, in the error of a document that
    cannot be validated), and `old` is not read."""
    kind = opts.kind
    schemas = compiled(opts.version)
    validator = schemas.validators.get(kind)
    if validator is None or not isinstance(obj, dict):
        return []
    errors: list[FieldError] = []
    try:
        if validator.is_valid(obj):
            return []
        for error in validator.iter_errors(obj):
            errors += _field_errors(error, obj, schemas.definitions[kind], schemas.definitions)
    except ValueError as exc:
        # jsonschema-rs refuses absurdly deep documents and values JSON cannot hold.
        reason = str(exc)
        detail = (
            "is nested too deeply to be validated"
            if "Recursion limit" in reason
            else f"cannot be validated as JSON: {reason}"
        )
        return [invalid_omitted("SC-002", path, detail)]
    return errors


def _value_at(obj: Any, parts: list[str | int]) -> Any:
    for part in parts:
        obj = obj[part]
    return obj


def _resolve(schema: Any, definitions: dict[str, Any]) -> dict[str, Any]:
    while isinstance(schema, dict) and "$ref" in schema:
        schema = definitions[schema["$ref"].rsplit("/", 1)[-1]]
    return schema if isinstance(schema, dict) else {}


def field_path(parts: list[str | int], root: dict[str, Any], definitions: dict[str, Any]) -> str:
    """The API server's path: `.name` for fields, `[0]` for items, `[key]` for map keys."""
    path, schema = "", root
    for part in parts:
        schema = _resolve(schema, definitions)
        properties = schema.get("properties", {})
        if isinstance(part, int):
            path += f"[{part}]"
            schema = schema.get("items", {})
        elif part in properties:
            path = f"{path}.{part}" if path else part
            schema = properties[part]
        else:
            path += f"[{part}]"
            extra = schema.get("additionalProperties")
            schema = extra if isinstance(extra, dict) else {}
    return path


def _child(parent: str, name: str) -> str:
    return f"{parent}.{name}" if parent else name


def _expected_types(error: jsonschema_rs.ValidationError) -> str:
    kind = error.kind
    names: list[str] = []
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.Type):
        names = list(kind.types)
    elif isinstance(kind, jsonschema_rs.ValidationErrorKind.AnyOf):
        for alternatives in kind.context:
            for alternative in alternatives:
                if isinstance(alternative.kind, jsonschema_rs.ValidationErrorKind.Type):
                    names += alternative.kind.types
    return ",".join(dict.fromkeys(name for name in names if name != "null"))


def _field_errors(
    error: jsonschema_rs.ValidationError,
    obj: Any,
    root: dict[str, Any],
    definitions: dict[str, Any],
) -> list[FieldError]:
    parts = list(error.instance_path)
    path = field_path(parts, root, definitions)
    kind = error.kind
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.AdditionalProperties):
        return [
            forbidden("SC-001", _child(path, name), f"unknown field {go_quote(_child(path, name))}")
            for name in kind.unexpected
        ]
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.Required):
        return [required("SC-003", _child(path, str(kind.property)))]
    value = _value_at(obj, parts)
    if isinstance(
        kind, jsonschema_rs.ValidationErrorKind.Type | jsonschema_rs.ValidationErrorKind.AnyOf
    ):
        actual = json_type(value)
        detail = f"{path} in body must be of type {_expected_types(error)}: {go_quote(actual)}"
        return [FieldError("SC-002", path, ErrorType.TYPE_INVALID, detail, actual)]
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.Enum):
        return [not_supported("SC-002", path, value, [str(option) for option in kind.options])]
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.Minimum):
        detail = f"{path} in body should be greater than or equal to {kind.limit}"
        return [invalid("SC-002", path, value, detail)]
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.Maximum):
        detail = f"{path} in body should be less than or equal to {kind.limit}"
        return [invalid("SC-002", path, value, detail)]
    return [invalid("SC-002", path, value, error.message)]
