"""What the API server drops from a pod template before validating it: the fields of feature
gates that are off by default in the judged release, unless the stored template already uses
them (kubernetes `pkg/api/pod/util.go` at v1.37.2: `DropDisabledTemplateFields`,
`dropDisabledFields`; the Job and CronJob strategies call it in PrepareForCreate and
PrepareForUpdate).

A dropped field is not refused: it is gone before any rule reads the template, so neither the pod
rules nor the template comparison of an UPDATE (TM-001) see it. The gates come from
`versions.GATES`; only those whose field exists in some supported release while the gate is
off are ported. A field that does not exist at all in the judged release is unknown to its
schema and refused before this runs (SC-001), as the API server's strict decoding refuses it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from jobguard.validators.rules.pod_common import CONTAINER_KINDS, containers, member
from jobguard.validators.versions import Release

_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_HANDLERS = ("postStart", "preStop")
_VOLUME_GATES = frozenset(
    {
        "ImageVolume",
        "EmptyDirVolumeMode",
        "ClusterTrustBundleProjection",
        "PodCertificateRequest",
        "AtomicWriteVolumeUserFields",
    }
)
# The volume sources whose items carry a `user`, in the order Go's switch tries them.
_USER_SOURCES = ("secret", "configMap", "downwardAPI")
_PROJECTED_USER_SOURCES = (
    "secret",
    "downwardAPI",
    "configMap",
    "serviceAccountToken",
    "clusterTrustBundle",
    "podCertificate",
)


def _dicts(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                yield item


def _projected_sources(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for volume in _dicts(spec.get("volumes")):
        yield from _dicts(member(volume, "projected", "sources"))


def _http_gets(container: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The httpGet actions of the probes and the lifecycle handlers."""
    for probe in _PROBES:
        action = member(container, probe, "httpGet")
        if isinstance(action, dict):
            yield action
    for handler in _HANDLERS:
        action = member(container, "lifecycle", handler, "httpGet")
        if isinstance(action, dict):
            yield action


# --- which gates' fields a spec holds: one pass ---------------------------------------------------


def _container_features(
    container: dict[str, Any], kind: str, found: set[str], stored: bool, gates: frozenset[str]
) -> None:
    # Plain lookups, no helpers, only the gates the release drops: this runs for every
    # container of every request.
    policy = container.get("restartPolicy")
    rules = container.get("restartPolicyRules")
    if "ContainerRestartRules" in gates and (policy is not None or rules is not None):
        if kind == "initContainers":
            # containerRestartRulesInUse: a policy other than Always, or rules.
            if (policy is not None and policy != "Always") or (
                bool(rules) if stored else rules is not None
            ):
                found.add("ContainerRestartRules")
        elif policy is not None or not stored:
            found.add("ContainerRestartRules")
    resources = container.get("resources")
    if not stored and isinstance(resources, dict) and resources.get("claims") is not None:
        found.add("DynamicResourceAllocation")
    env = container.get("env") if "EnvFiles" in gates else None
    if env and isinstance(env, list):
        for item in env:
            value_from = item.get("valueFrom") if isinstance(item, dict) else None
            if isinstance(value_from, dict) and value_from.get("fileKeyRef") is not None:
                found.add("EnvFiles")
                break
    lifecycle = container.get("lifecycle")
    if lifecycle and isinstance(lifecycle, dict):
        if lifecycle.get("stopSignal") is not None:
            found.add("ContainerStopSignals")
        for handler in _HANDLERS:
            action = member(lifecycle, handler, "httpGet")
            if isinstance(action, dict) and action.get("protocol") is not None:
                found.add("H2CContainerProbe")
    for name in _PROBES:
        probe = container.get(name)
        if probe and isinstance(probe, dict):
            action = probe.get("httpGet")
            if isinstance(action, dict) and action.get("protocol") is not None:
                found.add("H2CContainerProbe")
            grpc = probe.get("grpc")
            if isinstance(grpc, dict) and grpc.get("mode") is not None:
                found.add("GRPCContainerProbeTLS")
    mounts = container.get("volumeMounts")
    if mounts and isinstance(mounts, list):
        for mount in mounts:
            if isinstance(mount, dict) and mount.get("bindMountOptions") is not None:
                found.add("VolumeBindMountOptions")
                break


def _source_of(holder: dict[str, Any], kinds: tuple[str, ...]) -> tuple[str, Any]:
    """The first of `kinds` the volume (or projection) sets, as Go's switch picks it."""
    for kind in kinds:
        source = holder.get(kind)
        if source is not None:
            return kind, source
    return "", None


def _items_users(source: Any, drop: bool) -> bool:
    """Whether an item of `source` sets `user` (removed with `drop`)."""
    found = False
    for item in _dicts(member(source, "items")):
        if item.get("user") is not None:
            found = True
            if drop:
                del item["user"]
    return found


def _user_fields(volume: dict[str, Any], drop: bool) -> bool:
    """atomicWriteVolumeUserFieldsInUse (`drop` False) or dropDisabledAtomicWriteVolumeUserFields
    (`drop` True) on one volume: `defaultUser` and the items' `user`."""
    kind, source = _source_of(volume, (*_USER_SOURCES, "projected"))
    if not isinstance(source, dict):
        return False
    found = source.get("defaultUser") is not None
    if drop:
        source.pop("defaultUser", None)
    if kind != "projected":
        return _items_users(source, drop) or found
    for projection in _dicts(source.get("sources")):
        inner_kind, inner = _source_of(projection, _PROJECTED_USER_SOURCES)
        if inner_kind in _USER_SOURCES:
            found = _items_users(inner, drop) or found
        elif isinstance(inner, dict) and inner.get("user") is not None:
            found = True
            if drop:
                del inner["user"]
    return found


def _features(spec: dict[str, Any], stored: bool, gates: frozenset[str]) -> set[str]:
    """The gates whose fields `spec` holds: what each drop removes from a new spec (`stored`
    False), or upstream's "in use" test of the stored spec (True), which keeps them. Only
    `gates` are looked for (others may be found too)."""
    found: set[str] = set()
    resources = spec.get("resources")
    if (
        (resources is not None and not stored)
        or member(resources, "requests")
        or member(resources, "limits")
    ):
        found.add("PodLevelResources")
    if spec.get("resourceClaims") if stored else spec.get("resourceClaims") is not None:
        found.add("DynamicResourceAllocation")
    if spec.get("hostnameOverride") is not None:
        found.add("HostnameOverride")
    if spec.get("schedulingGroup") is not None:
        found.add("GenericWorkload")
    if spec.get("evictionResponders") if stored else spec.get("evictionResponders") is not None:
        found.add("EvictionRequestAPI")
    volumes = spec.get("volumes") if not gates.isdisjoint(_VOLUME_GATES) else None
    for volume in _dicts(volumes):
        if volume.get("image") is not None:
            found.add("ImageVolume")
        if member(volume, "emptyDir", "mode") is not None:
            found.add("EmptyDirVolumeMode")
        for source in _dicts(member(volume, "projected", "sources")):
            if source.get("clusterTrustBundle") is not None:
                found.add("ClusterTrustBundleProjection")
            if source.get("podCertificate") is not None:
                found.add("PodCertificateRequest")
        if "AtomicWriteVolumeUserFields" in gates and _user_fields(volume, drop=False):
            found.add("AtomicWriteVolumeUserFields")
    for kind in CONTAINER_KINDS:
        for container in _dicts(spec.get(kind)):
            _container_features(container, kind, found, stored, gates)
    return found


# --- one drop per gate -----------------------------------------------------------------------------


def _drop_pod_level_resources(spec: dict[str, Any]) -> None:
    spec.pop("resources", None)


def _drop_dra(spec: dict[str, Any]) -> None:
    for container in containers(spec):
        resources = container.get("resources")
        if isinstance(resources, dict):
            resources.pop("claims", None)
    spec.pop("resourceClaims", None)


def _drop_cluster_trust_bundle(spec: dict[str, Any]) -> None:
    for source in _projected_sources(spec):
        source.pop("clusterTrustBundle", None)


def _drop_pod_certificate(spec: dict[str, Any]) -> None:
    for source in _projected_sources(spec):
        source.pop("podCertificate", None)


def _drop_user_fields(spec: dict[str, Any]) -> None:
    for volume in _dicts(spec.get("volumes")):
        _user_fields(volume, drop=True)


def _drop_image_volumes(spec: dict[str, Any]) -> None:
    """dropImageVolumes: the image volumes and every mount of them."""
    volumes = spec.get("volumes")
    if not isinstance(volumes, list):
        return
    names = {v.get("name") for v in _dicts(volumes) if v.get("image") is not None}
    spec["volumes"] = [
        v for v in volumes if not (isinstance(v, dict) and v.get("image") is not None)
    ]
    for container in containers(spec):
        mounts = container.get("volumeMounts")
        if isinstance(mounts, list):
            container["volumeMounts"] = [
                m for m in mounts if not (isinstance(m, dict) and m.get("name") in names)
            ]


def _drop_hostname_override(spec: dict[str, Any]) -> None:
    spec.pop("hostnameOverride", None)


def _drop_file_key_ref(spec: dict[str, Any]) -> None:
    for container in containers(spec):
        for env in _dicts(container.get("env")):
            value_from = env.get("valueFrom")
            if isinstance(value_from, dict):
                value_from.pop("fileKeyRef", None)


def _drop_container_restart_rules(spec: dict[str, Any]) -> None:
    """dropContainerRestartRules: init containers keep only `restartPolicy: Always`."""
    for container in _dicts(spec.get("initContainers")):
        policy = container.get("restartPolicy")
        if policy is not None and policy != "Always":
            container.pop("restartPolicy")
        container.pop("restartPolicyRules", None)
    for container in containers(spec, ("containers", "ephemeralContainers")):
        container.pop("restartPolicy", None)
        container.pop("restartPolicyRules", None)


def _drop_stop_signals(spec: dict[str, Any]) -> None:
    for container in containers(spec):
        lifecycle = container.get("lifecycle")
        if isinstance(lifecycle, dict) and lifecycle.get("stopSignal") is not None:
            del lifecycle["stopSignal"]
            if not any(value is not None for value in lifecycle.values()):
                del container["lifecycle"]


def _drop_http_probe_protocol(spec: dict[str, Any]) -> None:
    for container in containers(spec):
        for action in _http_gets(container):
            action.pop("protocol", None)


def _drop_grpc_mode(spec: dict[str, Any]) -> None:
    for container in containers(spec):
        for probe in _PROBES:
            grpc = member(container, probe, "grpc")
            if isinstance(grpc, dict):
                grpc.pop("mode", None)


def _drop_bind_mount_options(spec: dict[str, Any]) -> None:
    for container in containers(spec):
        for mount in _dicts(container.get("volumeMounts")):
            mount.pop("bindMountOptions", None)


def _drop_empty_dir_mode(spec: dict[str, Any]) -> None:
    for volume in _dicts(spec.get("volumes")):
        empty_dir = volume.get("emptyDir")
        if isinstance(empty_dir, dict):
            empty_dir.pop("mode", None)


def _drop_scheduling_group(spec: dict[str, Any]) -> None:
    spec.pop("schedulingGroup", None)


def _drop_eviction_responders(spec: dict[str, Any]) -> None:
    spec.pop("evictionResponders", None)


_Drop = Callable[[dict[str, Any]], None]

DROPS: tuple[tuple[str, _Drop], ...] = (
    # dropDisabledFields' order; the gate names versions.GATES' entries.
    ("PodLevelResources", _drop_pod_level_resources),
    ("DynamicResourceAllocation", _drop_dra),
    ("ClusterTrustBundleProjection", _drop_cluster_trust_bundle),
    ("PodCertificateRequest", _drop_pod_certificate),
    ("AtomicWriteVolumeUserFields", _drop_user_fields),
    ("GenericWorkload", _drop_scheduling_group),
    ("GRPCContainerProbeTLS", _drop_grpc_mode),
    ("EvictionRequestAPI", _drop_eviction_responders),
    ("ContainerRestartRules", _drop_container_restart_rules),
    ("EmptyDirVolumeMode", _drop_empty_dir_mode),
    ("VolumeBindMountOptions", _drop_bind_mount_options),
    ("HostnameOverride", _drop_hostname_override),
    ("EnvFiles", _drop_file_key_ref),
    ("ImageVolume", _drop_image_volumes),
    ("ContainerStopSignals", _drop_stop_signals),
    ("H2CContainerProbe", _drop_http_probe_protocol),
)


@lru_cache(maxsize=16)
def _dropped_gates(version: str) -> frozenset[str]:
    release = Release.of(version)
    return frozenset(gate for gate, _ in DROPS if release.drops(gate))


def drop_disabled_template_fields(template: Any, old_template: Any, version: str) -> Any:
    """DropDisabledTemplateFields: `template` without the fields of the gates off in `version`
    that the stored template (`old_template`, None on CREATE) does not use. The same object
    when nothing is dropped, else a copy (the request is left alone)."""
    spec = member(template, "spec")
    if not isinstance(spec, dict):
        return template
    dropped_gates = _dropped_gates(version)
    gates = dropped_gates & _features(spec, False, dropped_gates)
    if not gates:
        return template
    old_spec = member(old_template, "spec")
    if isinstance(old_spec, dict):
        gates -= _features(old_spec, True, dropped_gates)
    if not gates:
        return template
    dropped = copy.deepcopy(spec)
    for gate, drop in DROPS:
        if gate in gates:
            drop(dropped)
    return {**template, "spec": dropped}
