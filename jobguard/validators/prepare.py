"""What the API server does to a Job before validating it, replayed on raw objects.

Objects reach jobguard either prepared by the API server (webhook) or as written by people
(manifests in CI). Replaying the server's preparation, which is idempotent on an already
prepared object, makes both judge the same:
* CREATE: status cleared, name generated from generateName, uid assigned, the job-name and
  controller-uid labels and the selector generated unless `manualSelector` (strategy.go).
* UPDATE of `jobs`: status copied from the old object; fields the server generated and a
  manifest omits (uid, selector, generated labels) are carried over, as `kubectl apply` would.
* UPDATE of `jobs/status`: spec copied from the old object.
Defaulting (defaults.go) is applied to the typed view by `apply_job_defaults`.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

from jobguard.validators.model import NON_INDEXED, Job

LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
GENERATED_LABELS = (
    LEGACY_CONTROLLER_UID_LABEL,
    CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
    JOB_NAME_LABEL,
)
_MAX_INT32 = 2**31 - 1
# Stands in for the random suffix the server appends to generateName.
GENERATED_NAME_SUFFIX = "xxxxx"
# names.SimpleNameGenerator keeps at most 58 characters of generateName before the suffix.
MAX_GENERATE_NAME_PREFIX = 58


def name_from_generate_name(generate_name: str) -> str:
    """The name the API server makes of a generateName, `xxxxx` standing in for its suffix."""
    return generate_name[:MAX_GENERATE_NAME_PREFIX] + GENERATED_NAME_SUFFIX


def _dict(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


_UID_NAMESPACE = uuid.NAMESPACE_URL.bytes


def placeholder_uid(namespace: str, name: str) -> str:
    """A stable uid for a manifest that has none, so repeated checks print the same text:
    `uuid.uuid5(uuid.NAMESPACE_URL, f"jobguard:{namespace}/{name}")` as a string, made from the
    SHA-1 digest directly (a third of the cost: no UUID object, no integer arithmetic)."""
    digest = bytearray(
        hashlib.sha1(_UID_NAMESPACE + f"jobguard:{namespace}/{name}".encode()).digest()[:16]
    )
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # the RFC 4122 variant
    hex_digits = digest.hex()
    return "-".join(
        (hex_digits[:8], hex_digits[8:12], hex_digits[12:16], hex_digits[16:20], hex_digits[20:])
    )


def _manual_selector(spec: dict[str, Any]) -> bool:
    return spec.get("manualSelector") is True


def _with_generated_selector(raw: dict[str, Any]) -> dict[str, Any]:
    """strategy.go generateSelector: add any missing generated label and the selector."""
    metadata = _dict(raw.get("metadata"))
    spec_raw = raw.get("spec")
    template_raw = spec_raw.get("template") if isinstance(spec_raw, dict) else None
    template_meta_raw = template_raw.get("metadata") if isinstance(template_raw, dict) else None
    selector_raw = spec_raw.get("selector") if isinstance(spec_raw, dict) else None
    if not _is_map_or_absent(
        spec_raw,
        template_raw,
        template_meta_raw,
        template_meta_raw.get("labels") if isinstance(template_meta_raw, dict) else None,
        selector_raw,
        selector_raw.get("matchLabels") if isinstance(selector_raw, dict) else None,
    ):
        return raw
    spec = _dict(spec_raw)
    if _manual_selector(spec):
        return raw
    name = metadata.get("name") or ""
    uid = metadata.get("uid") or ""
    template = _dict(spec.get("template"))
    template_meta = _dict(template.get("metadata"))
    labels = _dict(template_meta.get("labels"))
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        labels.setdefault(key, name)
    for key in (LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL):
        labels.setdefault(key, uid)
    template_meta["labels"] = labels
    template["metadata"] = template_meta
    spec["template"] = template
    selector = _dict(spec.get("selector"))
    match_labels = _dict(selector.get("matchLabels"))
    match_labels.setdefault(CONTROLLER_UID_LABEL, uid)
    selector["matchLabels"] = match_labels
    spec["selector"] = selector
    return {**raw, "spec": spec}


def _is_map_or_absent(*values: Any) -> bool:
    return all(v is None or isinstance(v, dict) for v in values)


def _assign_identity(raw: dict[str, Any]) -> dict[str, Any]:
    """Name, uid, generated labels and selector for an object that has no uid yet.

    Wrongly typed parts are left alone, so decoding reports them instead of them being replaced.
    """
    if not _is_map_or_absent(raw.get("metadata")):
        return raw
    metadata = _dict(raw.get("metadata"))
    if metadata.get("uid"):
        return raw
    if not metadata.get("name") and metadata.get("generateName"):
        metadata["name"] = name_from_generate_name(str(metadata["generateName"]))
    metadata["uid"] = placeholder_uid(
        str(metadata.get("namespace") or ""), str(metadata.get("name") or "")
    )
    return _with_generated_selector({**raw, "metadata": metadata})


def prepare_create(raw: dict[str, Any]) -> dict[str, Any]:
    """The object as the validating phase of CREATE sees it."""
    return _assign_identity({k: v for k, v in raw.items() if k != "status"})


def prepare_stored(raw: dict[str, Any]) -> dict[str, Any]:
    """An old object as stored: a manifest standing in for it gets its generated fields."""
    return _assign_identity(raw)


def prepare_update(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """The new object as the validating phase of UPDATE of `jobs` sees it."""
    prepared = dict(new)
    if "status" in old:
        prepared["status"] = old["status"]
    else:
        prepared.pop("status", None)
    if not _is_map_or_absent(new.get("metadata"), new.get("spec"), old.get("metadata")):
        return prepared  # decoding names the wrongly typed part
    old_meta = _dict(old.get("metadata"))
    metadata = _dict(new.get("metadata"))
    _carry_server_metadata(metadata, old_meta)
    if metadata != new.get("metadata"):
        prepared["metadata"] = metadata
    if not metadata.get("uid") and old_meta.get("uid"):
        # A manifest applied over a stored object keeps what the server generated.
        metadata["uid"] = old_meta["uid"]
        if not metadata.get("name") and old_meta.get("name"):
            metadata["name"] = old_meta["name"]
        prepared["metadata"] = metadata
        spec = _dict(new.get("spec"))
        old_spec = _dict(old.get("spec"))
        template_raw = spec.get("template")
        template_meta_raw = template_raw.get("metadata") if isinstance(template_raw, dict) else None
        labels_raw = (
            template_meta_raw.get("labels") if isinstance(template_meta_raw, dict) else None
        )
        if not _is_map_or_absent(template_raw, template_meta_raw, labels_raw):
            return prepared
        if not _manual_selector(spec):
            if spec.get("selector") is None and old_spec.get("selector") is not None:
                spec["selector"] = old_spec["selector"]
            old_labels = _dict(_dict(_dict(old_spec.get("template")).get("metadata")).get("labels"))
            template = _dict(spec.get("template"))
            template_meta = _dict(template.get("metadata"))
            labels = _dict(template_meta.get("labels"))
            for key in GENERATED_LABELS:
                if key not in labels and key in old_labels:
                    labels[key] = old_labels[key]
            if labels:
                template_meta["labels"] = labels
                template["metadata"] = template_meta
                spec["template"] = template
        prepared["spec"] = spec
    return prepared


def prepare_status_update(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """The new object as the validating phase of UPDATE of `jobs/status` sees it."""
    prepared = dict(new)
    if "spec" in old:
        prepared["spec"] = old["spec"]
    else:
        prepared.pop("spec", None)
    if _is_map_or_absent(new.get("metadata"), old.get("metadata")):
        metadata = _updated_metadata(new, old, ("uid", "name"))
        if metadata != new.get("metadata"):
            prepared["metadata"] = metadata
    return prepared


def prepare_cronjob_update(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """The new CronJob as the validating phase of UPDATE of `cronjobs` sees it (rest.BeforeUpdate:
    the request's namespace, the stored uid and stamps where a manifest omits them)."""
    if not _is_map_or_absent(new.get("metadata"), old.get("metadata")):
        return new  # decoding names the wrongly typed part
    metadata = _updated_metadata(new, old, ("namespace", "uid", "name"))
    return new if metadata == new.get("metadata") else {**new, "metadata": metadata}


def _updated_metadata(
    new: dict[str, Any], old: dict[str, Any], identity: tuple[str, ...]
) -> dict[str, Any]:
    """A copy of the new metadata with the stored stamps, and the stored `identity` members
    where the new object leaves them empty (both metadata are maps or absent)."""
    metadata = _dict(new.get("metadata"))
    old_meta = _dict(old.get("metadata"))
    _carry_server_metadata(metadata, old_meta)
    for key in identity:
        if not metadata.get(key) and old_meta.get(key):
            metadata[key] = old_meta[key]
    return metadata


def _carry_server_metadata(metadata: dict[str, Any], old_meta: dict[str, Any]) -> None:
    """rest.BeforeUpdate: creation and deletion stamps are the stored ones, whatever was sent."""
    for key in ("creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
        if old_meta.get(key) is not None:
            metadata[key] = old_meta[key]


def apply_job_defaults(job: Job) -> Job:
    """defaults.go SetDefaults_Job on the typed view (idempotent)."""
    spec = job.spec
    if spec.completions is None and spec.parallelism is None:
        spec.completions = 1
        spec.parallelism = 1
    elif spec.parallelism is None:
        spec.parallelism = 1
    if spec.backoff_limit is None:
        spec.backoff_limit = _MAX_INT32 if spec.backoff_limit_per_index is not None else 6
    if spec.completion_mode is None:
        spec.completion_mode = NON_INDEXED
    if spec.suspend is None:
        spec.suspend = False
    if spec.pod_replacement_policy is None:
        spec.pod_replacement_policy = (
            "Failed" if spec.pod_failure_policy is not None else "TerminatingOrFailed"
        )
    return job
