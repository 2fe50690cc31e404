"""The AdmissionReview wire types (admission.k8s.io/v1 and v1beta1), typed in kopf's style.

TypedDicts: the bodies stay plain JSON objects for orjson, and a key's place on the wire is the
place it is written in. Requests are what the API server sends (`parse_review` checks the
fields jobguard reads); responses are what jobguard answers.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

ReviewVersion = Literal["admission.k8s.io/v1", "admission.k8s.io/v1beta1"]
Operation = Literal["CREATE", "UPDATE", "DELETE", "CONNECT"]


class GroupVersionKind(TypedDict):
    group: str
    version: str
    kind: str


class GroupVersionResource(TypedDict):
    group: str
    version: str
    resource: str


class UserInfo(TypedDict, total=False):
    username: str
    uid: str
    groups: list[str]
    extra: dict[str, list[str]]


class RequestPayload(TypedDict):
    """`AdmissionReview.request`."""

    uid: str
    kind: GroupVersionKind
    resource: GroupVersionResource
    subResource: NotRequired[str]
    requestKind: NotRequired[GroupVersionKind]
    requestResource: NotRequired[GroupVersionResource]
    requestSubResource: NotRequired[str]
    name: NotRequired[str]
    namespace: NotRequired[str]
    operation: Operation
    userInfo: UserInfo
    object: Any
    """The object as sent (a JSON object, or null for DELETE)."""
    oldObject: NotRequired[Any]
    dryRun: NotRequired[bool]
    options: NotRequired[dict[str, Any] | None]


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
