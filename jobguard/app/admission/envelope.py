"""What /mutate reads of an AdmissionReview, decoded without the rest of the body.

The mutating webhook decides from the review's envelope and a few fields of the object: its
metadata (name, generateName, namespace, uid, labels), spec.suspend, spec.manualSelector,
spec.selector and spec.template.metadata.labels (`validators.pipeline.mutate`: the Job's
identity and generated labels, then `needs_forced_suspend`). msgspec decodes those into the
Structs below and skips every other field without building it, so a review's size or
structure elsewhere (a container list of 100,000 entries, strings full of brackets) costs
/mutate a pass over the bytes and nothing more.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

NOT_READ = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
"""What `decode` raises for a body it cannot read this way: not JSON, a lone surrogate, a
number out of a double's range, nesting beyond the interpreter's limit, or a read part that is
not an object. The full parse answers such a body (as it answers every /validate call)."""


class _TemplateMetadata(msgspec.Struct):
    labels: Any = UNSET


class _Template(msgspec.Struct):
    metadata: _TemplateMetadata | UnsetType | None = UNSET


class _Spec(msgspec.Struct, rename={"manual_selector": "manualSelector"}):
    suspend: Any = UNSET
    manual_selector: Any = UNSET
    selector: Any = UNSET
    template: _Template | UnsetType | None = UNSET


class _Metadata(msgspec.Struct, rename={"generate_name": "generateName"}):
    name: Any = UNSET
    generate_name: Any = UNSET
    namespace: Any = UNSET
    uid: Any = UNSET
    labels: Any = UNSET


class _Object(msgspec.Struct, rename={"api_version": "apiVersion"}):
    api_version: Any = UNSET
    kind: Any = UNSET
    metadata: _Metadata | UnsetType | None = UNSET
    spec: _Spec | UnsetType | None = UNSET


class _Request(
    msgspec.Struct,
    rename={"sub_resource": "subResource", "user_info": "userInfo", "dry_run": "dryRun"},
):
    uid: Any = UNSET
    operation: Any = UNSET
    resource: Any = UNSET
    sub_resource: Any = UNSET
    namespace: Any = UNSET
    name: Any = UNSET
    user_info: Any = UNSET
    dry_run: Any = UNSET
    object: _Object | UnsetType | None = UNSET


class _Review(msgspec.Struct, rename={"api_version": "apiVersion"}):
    api_version: Any = UNSET
    kind: Any = UNSET
    request: _Request | UnsetType | None = UNSET


_DECODER = msgspec.json.Decoder(_Review)


def _as_json(value: Any) -> Any:
    """A decoded Struct as the dict the full parse would have built, with only the fields the
    body has (an absent field stays absent, a null one is None)."""
    if not isinstance(value, msgspec.Struct):
        return value
    encode_name = dict(zip(value.__struct_fields__, value.__struct_encode_fields__, strict=True))
    return {
        encode_name[field]: _as_json(item)
        for field in value.__struct_fields__
        if (item := getattr(value, field)) is not UNSET
    }


def decode(body: bytes) -> Any:
    """The body as `orjson.loads` reads it, but with only the fields /mutate reads (see the
    module's docstring). Raises one of NOT_READ when it cannot be read this way."""
    return _as_json(_DECODER.decode(body))
