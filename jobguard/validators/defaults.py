"""Pod-template defaults (k8s.io/kubernetes pkg/apis/core/v1/defaults.go) for comparisons.

Stored objects carry these defaults; manifests usually do not. Template immutability compares
the two after defaulting both sides, as the API server compares defaulted objects. Only the
defaults of fields that commonly differ between a manifest and its stored form are applied.
"""

from __future__ import annotations

from typing import Any

_POD_DEFAULTS: dict[str, Any] = {
    "dnsPolicy": "ClusterFirst",
    "restartPolicy": "Always",
    "terminationGracePeriodSeconds": 30,
    "schedulerName": "default-scheduler",
    "securityContext": {},
    "enableServiceLinks": True,
}
_CONTAINER_DEFAULTS: dict[str, Any] = {
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File",
}
_PROBE_DEFAULTS: dict[str, Any] = {
    "timeoutSeconds": 1,
    "periodSeconds": 10,
    "successThreshold": 1,
    "failureThreshold": 3,
}
_PROJECTED_MODES = ("configMap", "secret", "downwardAPI", "projected")
_DEFAULT_MODE = 0o644


_VOLUME_SOURCES = frozenset(
    (
        "hostPath",
        "emptyDir",
        "gcePersistentDisk",
        "awsElasticBlockStore",
        "gitRepo",
        "secret",
        "nfs",
        "iscsi",
        "glusterfs",
        "persistentVolumeClaim",
        "rbd",
        "flexVolume",
        "cinder",
        "cephfs",
        "flocker",
        "downwardAPI",
        "fc",
        "azureFile",
        "configMap",
        "vsphereVolume",
        "quobyte",
        "azureDisk",
        "photonPersistentDisk",
        "projected",
        "portworxVolume",
        "scaleIO",
        "storageos",
        "csi",
        "ephemeral",
        "image",
    )
)
_TOKEN_EXPIRATION_SECONDS = 3600


def _image_pull_policy(image: Any) -> str:
    """SetDefaults_Container: Always for the tag `latest` (an image with neither tag nor digest
    has it), else IfNotPresent, also for an image that does not parse (no tag then)."""
    if not isinstance(image, str) or not _parses(image):
        return "IfNotPresent"
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else ""
    if tag == "latest" or (not tag and not digest):
        return "Always"
    return "IfNotPresent"


def _parses(image: str) -> bool:
    """What parsers.ParseImageName refuses, in the common cases: an empty reference and a
    repository path with capitals (a registry host may have them)."""
    name = image.partition("@")[0]
    if not name or name.startswith(("/", ":")):
        return False
    first, slash, rest = name.partition("/")
    host = slash and ("." in first or ":" in first or first == "localhost")
    path = rest if host else name
    path = path.rsplit(":", 1)[0] if ":" in path.rsplit("/", 1)[-1] else path
    return path == path.lower()


def _handler(handler: Any) -> Any:
    """SetDefaults_HTTPGetAction: path "/" and scheme HTTP."""
    if isinstance(handler, dict) and isinstance(handler.get("httpGet"), dict):
        return {**handler, "httpGet": {"path": "/", "scheme": "HTTP", **handler["httpGet"]}}
    return handler


def _container(container: Any) -> Any:
    if not isinstance(container, dict):
        return container
    out = {**_CONTAINER_DEFAULTS, **container}
    out.setdefault("imagePullPolicy", _image_pull_policy(container.get("image")))
    ports = out.get("ports")
    if isinstance(ports, list):
        out["ports"] = [{"protocol": "TCP", **p} if isinstance(p, dict) else p for p in ports]
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        if isinstance(out.get(probe), dict):
            out[probe] = _handler({**_PROBE_DEFAULTS, **out[probe]})
    lifecycle = out.get("lifecycle")
    if isinstance(lifecycle, dict):
        out["lifecycle"] = {key: _handler(value) for key, value in lifecycle.items()}
    env = out.get("env")
    if isinstance(env, list):
        out["env"] = [_env(e) for e in env]
    return out


def _env(entry: Any) -> Any:
    if not isinstance(entry, dict):
        return entry
    source = entry.get("valueFrom")
    if not isinstance(source, dict):
        return entry
    field_ref = source.get("fieldRef")
    if isinstance(field_ref, dict) and "apiVersion" not in field_ref:
        return {**entry, "valueFrom": {**source, "fieldRef": {"apiVersion": "v1", **field_ref}}}
    return entry


def _volume(volume: Any) -> Any:
    if not isinstance(volume, dict):
        return volume
    out = dict(volume)
    if not any(out.get(kind) is not None for kind in _VOLUME_SOURCES):
        out["emptyDir"] = {}  # SetDefaults_Volume
    for kind in _PROJECTED_MODES:
        source = out.get(kind)
        if isinstance(source, dict) and "defaultMode" not in source:
            out[kind] = {"defaultMode": _DEFAULT_MODE, **source}
    projected = out.get("projected")
    if isinstance(projected, dict) and isinstance(projected.get("sources"), list):
        out["projected"] = {**projected, "sources": [_projection(p) for p in projected["sources"]]}
    return out


def _projection(projection: Any) -> Any:
    """SetDefaults_ServiceAccountTokenProjection: expirationSeconds 3600."""
    token = projection.get("serviceAccountToken") if isinstance(projection, dict) else None
    if isinstance(token, dict) and token.get("expirationSeconds") is None:
        token = {**token, "expirationSeconds": _TOKEN_EXPIRATION_SECONDS}
        return {**projection, "serviceAccountToken": token}
    return projection


def default_pod_template(template: Any) -> Any:
    """The template with the common pod defaults filled in (idempotent; bad shapes pass)."""
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        return template
    spec = {**_POD_DEFAULTS, **template["spec"]}
    for key in ("containers", "initContainers"):
        if isinstance(spec.get(key), list):
            spec[key] = [_container(c) for c in spec[key]]
    if isinstance(spec.get("volumes"), list):
        spec["volumes"] = [_volume(v) for v in spec["volumes"]]
    return {**template, "spec": spec}


def default_pod_failure_policy(policy: Any) -> Any:
    """SetDefaults_Job: an onPodConditions pattern without status means status True."""
    if not isinstance(policy, dict) or not isinstance(policy.get("rules"), list):
        return policy
    rules = []
    for rule in policy["rules"]:
        conditions = rule.get("onPodConditions") if isinstance(rule, dict) else None
        if isinstance(conditions, list):
            rule = {
                **rule,
                "onPodConditions": [
                    {**c, "status": c.get("status") or "True"} if isinstance(c, dict) else c
                    for c in conditions
                ],
            }
        rules.append(rule)
    return {**policy, "rules": rules}
