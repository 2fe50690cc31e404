"""The AdmissionReview wire types (admission.k8s.io/v1 and v1beta1).

Requests, what the API server sends: msgspec Structs of the fields jobguard reads, into which
`review.parse_review` decodes every body (as controller-runtime's admission Decoder decodes a
review into its typed AdmissionRequest); the object and the old object are kept as decoded.
Responses, what jobguard answers: TypedDicts in kopf's style, so they stay plain JSON objects
for orjson, and a key's place on the wire is the place it is written in.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

import msgspec

ReviewVersion = Literal["admission.k8s.io/v1", "admission.k8s.io/v1beta1"]


class GroupVersionResource(msgspec.Struct):
    """`request.resource`."""

    group: str | None = None
    version: str | None = None
    resource: str | None = None


class UserInfo(msgspec.Struct):
    """`request.userInfo`: the parts jobguard reads."""

    username: str | None = None
    groups: list[str] | None = None


class AdmissionRequest(
    msgspec.Struct,
    rename={
        "sub_resource": "subResource",
        "user_info": "userInfo",
        "dry_run": "dryRun",
        "old_object": "oldObject",
    },
):
    """`AdmissionReview.request`: the fields jobguard reads. Absent and null read as None; a
    missing uid or an unknown operation is refused after decoding, with its own reason."""

    uid: str | None = None
    operation: str | None = None
    resource: GroupVersionResource | None = None
    sub_resource: str | None = None
    namespace: str | None = None
    name: str | None = None
    user_info: UserInfo | None = None
    dry_run: bool | None = None
    object: Any = None
    """The object as sent, as decoded (a JSON object, or null for DELETE): the chain judges
    it; nothing here reads into it."""
    old_object: Any = None


class AdmissionReview(msgspec.Struct, rename={"api_version": "apiVersion"}):
    """An AdmissionReview request, as `review.parse_review` decodes every body into it."""

    api_version: str | None = None
    kind: str | None = None
    request: AdmissionRequest | None = None


class Cause(TypedDict):
    """`metav1.StatusCause`: one field error."""

    reason: str
    message: str
    field: str


class StatusDetails(TypedDict):
    name: str
    group: str
    kind: str
    causes: list[Cause]


class Status(TypedDict):
    """`metav1.Status` of a refused request, as the API server words its own."""

    status: Literal["Failure"]
    message: str
    reason: Literal["Invalid", "Forbidden", "BadRequest"]
    details: NotRequired[StatusDetails]
    code: int


class ResponsePayload(TypedDict):
    """`AdmissionReview.response`."""

    uid: str
    allowed: bool
    status: NotRequired[Status]
    patchType: NotRequired[Literal["JSONPatch"]]
    patch: NotRequired[str]
    """Base64 of an RFC 6902 JSON Patch."""
    auditAnnotations: NotRequired[dict[str, str]]
    warnings: NotRequired[list[str]]


class ReviewResponse(TypedDict):
    """The answering AdmissionReview, in the version the request came in."""

    apiVersion: ReviewVersion
    kind: Literal["AdmissionReview"]
    response: ResponsePayload


class ErrorBody(TypedDict):
    """The HTTP 400 body for a request body that is not a usable AdmissionReview."""

    error: str
