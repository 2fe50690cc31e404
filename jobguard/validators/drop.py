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
Not ported (alpha in every supported release, no verdict depends on them today):
AtomicWriteVolumeUserFields (`defaultUser` and the items' `user`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from jobguard.validators.versions import Release

_CONTAINER_KINDS = ("initContainers", "containers", "ephemeralContainers")
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_HANDLERS = ("postStart", "preStop")


def _dicts(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                yield item


def _containers(
    spec: dict[str, Any], kinds: tuple[str, ...] = _CONTAINER_KINDS
) -> Iterator[dict[str, Any]]:
    """VisitContainers(AllContainers): init containers, containers, ephemeral containers."""
    for kind in kinds:
        yield from _dicts(spec.get(kind))


def _member(value: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _projected_sources(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for volume in _dicts(spec.get("volumes")):
        yield from _dicts(_member(volume, "projected", "sources"))


def _http_gets(container: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The httpGet actions of the probes and the lifecycle handlers."""
    for probe in _PROBES:
        action = _member(container, probe, "httpGet")
        if isinstance(action, dict):
            yield action
    for handler in _HANDLERS:
        action = _member(container, "lifecycle", handler, "httpGet")
        if isinstance(action, dict):
            yield action


# --- one drop per gate: (uses it: the old spec keeps it, drop: removes it from the new spec) -----


def _pod_level_resources_in_use(spec: dict[str, Any]) -> bool:
    resources = spec.get("resources")
    return bool(_member(resources, "requests") or _member(resources, "limits"))


def _drop_pod_level_resources(spec: dict[str, Any]) -> None:
    spec.pop("resources", None)


def _dra_in_use(spec: dict[str, Any]) -> bool:
    return bool(spec.get("resourceClaims"))


def _drop_dra(spec: dict[str, Any]) -> None:
    for container in _containers(spec):
        resources = container.get("resources")
        if isinstance(resources, dict):
            resources.pop("claims", None)
    spec.pop("resourceClaims", None)


def _cluster_trust_bundle_in_use(spec: dict[str, Any]) -> bool:
    return any(s.get("clusterTrustBundle") is not None for s in _projected_sources(spec))


def _drop_cluster_trust_bundle(spec: dict[str, Any]) -> None:
    for source in _projected_sources(spec):
        source.pop("clusterTrustBundle", None)


def _pod_certificate_in_use(spec: dict[str, Any]) -> bool:
    return any(s.get("podCertificate") is not None for s in _projected_sources(spec))


def _drop_pod_certificate(spec: dict[str, Any]) -> None:
    for source in _projected_sources(spec):
        source.pop("podCertificate", None)


def _image_volumes_in_use(spec: dict[str, Any]) -> bool:
    return any(v.get("image") is not None for v in _dicts(spec.get("volumes")))


def _drop_image_volumes(spec: dict[str, Any]) -> None:
    """dropImageVolumes: the image volumes and every mount of them."""
    volumes = spec.get("volumes")
    if not isinstance(volumes, list):
        return
    names = {v.get("name") for v in _dicts(volumes) if v.get("image") is not None}
    spec["volumes"] = [
        v for v in volumes if not (isinstance(v, dict) and v.get("image") is not None)
    ]
    for container in _containers(spec):
        mounts = container.get("volumeMounts")
        if isinstance(mounts, list):
            container["volumeMounts"] = [
                m for m in mounts if not (isinstance(m, dict) and m.get("name") in names)
            ]


def _hostname_override_in_use(spec: dict[str, Any]) -> bool:
    return spec.get("hostnameOverride") is not None


def _drop_hostname_override(spec: dict[str, Any]) -> None:
    spec.pop("hostnameOverride", None)


def _file_key_ref_in_use(spec: dict[str, Any]) -> bool:
    return any(
        _member(env, "valueFrom", "fileKeyRef") is not None
        for container in _containers(spec)
        for env in _dicts(container.get("env"))
    )


def _drop_file_key_ref(spec: dict[str, Any]) -> None:
    for container in _containers(spec):
        for env in _dicts(container.get("env")):
            value_from = env.get("valueFrom")
            if isinstance(value_from, dict):
                value_from.pop("fileKeyRef", None)


def _container_restart_rules_in_use(spec: dict[str, Any]) -> bool:
    """containerRestartRulesInUse: an init container's policy other than Always, or its rules;
    any policy of a regular container."""
    for container in _dicts(spec.get("initContainers")):
        policy = container.get("restartPolicy")
        if (policy is not None and policy != "Always") or container.get("restartPolicyRules"):
            return True
    return any(c.get("restartPolicy") is not None for c in _dicts(spec.get("containers")))


def _drop_container_restart_rules(spec: dict[str, Any]) -> None:
    """dropContainerRestartRules: init containers keep only `restartPolicy: Always`."""
    for container in _dicts(spec.get("initContainers")):
        policy = container.get("restartPolicy")
        if policy is not None and policy != "Always":
            container.pop("restartPolicy")
        container.pop("restartPolicyRules", None)
    for container in _containers(spec, ("containers", "ephemeralContainers")):
        container.pop("restartPolicy", None)
        container.pop("restartPolicyRules", None)


def _stop_signals_in_use(spec: dict[str, Any]) -> bool:
    return any(_member(c, "lifecycle", "stopSignal") is not None for c in _containers(spec))


def _drop_stop_signals(spec: dict[str, Any]) -> None:
    for container in _containers(spec):
        lifecycle = container.get("lifecycle")
        if isinstance(lifecycle, dict) and lifecycle.get("stopSignal") is not None:
            del lifecycle["stopSignal"]
            if not any(value is not None for value in lifecycle.values()):
                del container["lifecycle"]


def _http_probe_protocol_in_use(spec: dict[str, Any]) -> bool:
    return any(
        action.get("protocol") is not None
        for container in _containers(spec)
        for action in _http_gets(container)
    )


def _drop_http_probe_protocol(spec: dict[str, Any]) -> None:
    for container in _containers(spec):
        for action in _http_gets(container):
            action.pop("protocol", None)


def _grpc_mode_in_use(spec: dict[str, Any]) -> bool:
    return any(
        _member(container, probe, "grpc", "mode") is not None
        for container in _containers(spec)
        for probe in _PROBES
    )


def _drop_grpc_mode(spec: dict[str, Any]) -> None:
    for container in _containers(spec):
        for probe in _PROBES:
            grpc = _member(container, probe, "grpc")
            if isinstance(grpc, dict):
                grpc.pop("mode", None)


def _bind_mount_options_in_use(spec: dict[str, Any]) -> bool:
    return any(
        mount.get("bindMountOptions") is not None
        for container in _containers(spec)
        for mount in _dicts(container.get("volumeMounts"))
    )


def _drop_bind_mount_options(spec: dict[str, Any]) -> None:
    for container in _containers(spec):
        for mount in _dicts(container.get("volumeMounts")):
            mount.pop("bindMountOptions", None)


def _empty_dir_mode_in_use(spec: dict[str, Any]) -> bool:
    return any(_member(v, "emptyDir", "mode") is not None for v in _dicts(spec.get("volumes")))


def _drop_empty_dir_mode(spec: dict[str, Any]) -> None:
    for volume in _dicts(spec.get("volumes")):
        empty_dir = volume.get("emptyDir")
        if isinstance(empty_dir, dict):
            empty_dir.pop("mode", None)


def _scheduling_group_in_use(spec: dict[str, Any]) -> bool:
    return spec.get("schedulingGroup") is not None


def _drop_scheduling_group(spec: dict[str, Any]) -> None:
    spec.pop("schedulingGroup", None)


def _eviction_responders_in_use(spec: dict[str, Any]) -> bool:
    return bool(spec.get("evictionResponders"))


def _drop_eviction_responders(spec: dict[str, Any]) -> None:
    spec.pop("evictionResponders", None)


_Check = Callable[[dict[str, Any]], bool]
_Drop = Callable[[dict[str, Any]], None]

DROPS: tuple[tuple[str, _Check, _Drop], ...] = (
    # dropDisabledFields' order; the gate names versions.GATES' entries.
    ("PodLevelResources", _pod_level_resources_in_use, _drop_pod_level_resources),
    ("DynamicResourceAllocation", _dra_in_use, _drop_dra),
    ("ClusterTrustBundleProjection", _cluster_trust_bundle_in_use, _drop_cluster_trust_bundle),
    ("PodCertificateRequest", _pod_certificate_in_use, _drop_pod_certificate),
    ("GenericWorkload", _scheduling_group_in_use, _drop_scheduling_group),
    ("GRPCContainerProbeTLS", _grpc_mode_in_use, _drop_grpc_mode),
    ("EvictionRequestAPI", _eviction_responders_in_use, _drop_eviction_responders),
    ("ContainerRestartRules", _container_restart_rules_in_use, _drop_container_restart_rules),
    ("EmptyDirVolumeMode", _empty_dir_mode_in_use, _drop_empty_dir_mode),
    ("VolumeBindMountOptions", _bind_mount_options_in_use, _drop_bind_mount_options),
    ("HostnameOverride", _hostname_override_in_use, _drop_hostname_override),
    ("EnvFiles", _file_key_ref_in_use, _drop_file_key_ref),
    ("ImageVolume", _image_volumes_in_use, _drop_image_volumes),
    ("ContainerStopSignals", _stop_signals_in_use, _drop_stop_signals),
    ("H2CContainerProbe", _http_probe_protocol_in_use, _drop_http_probe_protocol),
)


def drop_disabled_template_fields(template: Any, old_template: Any, version: str) -> Any:
    """DropDisabledTemplateFields: `template` without the fields of the gates off in `version`
    that the stored template (`old_template`, None on CREATE) does not use. The same object
    when nothing is dropped, else a copy (the request is left alone)."""
    spec = _member(template, "spec")
    if not isinstance(spec, dict):
        return template
    release = Release.of(version)
    old_spec = _member(old_template, "spec")
    old = old_spec if isinstance(old_spec, dict) else {}
    active = [
        drop
        for gate, in_use, drop in DROPS
        if release.drops(gate) and in_use(spec) and not in_use(old)
    ]
    if not active:
        return template
    dropped = copy.deepcopy(spec)
    for drop in active:
        drop(dropped)
    return {**template, "spec": dropped}
