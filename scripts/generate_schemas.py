"""Generate jobguard/validators/schemas/k8s-<version>.json from the kubernetes-validate package.

Each file holds the OpenAPI schemas of `batch/v1` Job and CronJob for one Kubernetes version,
self-contained: every definition they reach, with local references only, descriptions and
`x-kubernetes-*` annotations removed, `oneOf` (quantities, int-or-string) as `anyOf` so that
null matches once, and int32/int64 formats as numeric bounds. Fields the schema lists as
required but the API server defaults or accepts as absent are not required here (OPTIONAL).

The schemas are the Kubernetes project's OpenAPI (Apache-2.0, The Kubernetes Authors), as the
kubernetes-validate package (Apache-2.0) ships them in its `-local-strict` variant.

    python scripts/generate_schemas.py           # write the files
    python scripts/generate_schemas.py --check   # exit 1 when a file differs
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import kubernetes_validate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from jobguard.validators.versions import RELEASES

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "jobguard" / "validators" / "schemas"
# The supported releases, written once (jobguard/validators/versions.py).
VERSIONS = RELEASES
KINDS = {"Job": "job-batch-v1.json", "CronJob": "cronjob-batch-v1.json"}
BOUNDS = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
# (definition, property): why the API server accepts the object without it.
OPTIONAL = {
    ("io.k8s.api.batch.v1.PodFailurePolicy", "rules"): "an empty podFailurePolicy is valid",
    ("io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern", "status"): "defaults to True",
    # Dropped with their sources while the gate is off (drop.py); validateProjectionSources
    # reports them where it judges the sources (pod_projections).
    ("io.k8s.api.core.v1.ClusterTrustBundleProjection", "path"): "judged by the pod rules",
    ("io.k8s.api.core.v1.PodCertificateProjection", "keyType"): "judged by the pod rules",
    ("io.k8s.api.core.v1.PodCertificateProjection", "signerName"): "judged by the pod rules",
    ("io.k8s.api.core.v1.HTTPHeader", "value"): "an empty header value is valid",
    ("io.k8s.api.core.v1.ISCSIVolumeSource", "lun"): "lun 0 is valid",
    ("io.k8s.api.core.v1.PreferredSchedulingTerm", "preference"): "an empty term is valid",
    ("io.k8s.api.core.v1.SleepAction", "seconds"): "0 is valid (PodLifecycleSleepActionAllowZero)",
    ("io.k8s.api.core.v1.Sysctl", "value"): "an empty value is valid",
}


def source_dir(version: str) -> Path:
    base = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    return base / f"v{version}.0-local-strict"


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _clean(node: Any, name: str | None = None) -> Any:
    if isinstance(node, list):
        return [_clean(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("description", "$schema", "$id", "format") or key.startswith("x-kubernetes"):
            continue
        if key == "$ref":
            out[key] = f"#/$defs/{_ref_name(value)}"
        elif key == "oneOf":
            out["anyOf"] = _clean(value)
        elif key == "properties":
            out[key] = {prop: _clean(schema) for prop, schema in value.items()}
        elif key == "required":
            kept = [prop for prop in value if (name, prop) not in OPTIONAL]
            if kept:
                out[key] = kept
        else:
            out[key] = _clean(value)
    bounds = BOUNDS.get(node.get("format", ""))
    types = node.get("type")
    if bounds and (types == "integer" or (isinstance(types, list) and "integer" in types)):
        out["minimum"], out["maximum"] = bounds
    return out


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                found.add(_ref_name(value))
            else:
                _refs(value, found)
    elif isinstance(node, list):
        for item in node:
            _refs(item, found)


def build(version: str) -> dict[str, Any]:
    directory = source_dir(version)
    definitions = json.loads((directory / "_definitions.json").read_text())["$defs"]
    roots = {kind: json.loads((directory / file).read_text()) for kind, file in KINDS.items()}
    pending: set[str] = set()
    for root in roots.values():
        _refs(root, pending)
    reached: set[str] = set()
    while pending:
        name = pending.pop()
        if name not in reached:
            reached.add(name)
            _refs(definitions[name], pending)
    defs = {name: _clean(definitions[name], name) for name in sorted(reached)}
    defs.update({kind: _clean(root) for kind, root in roots.items()})
    source = f"kubernetes-validate {metadata.version('kubernetes-validate')}"
    return {
        "$comment": (
            f"Kubernetes {version} OpenAPI schemas of batch/v1 Job and CronJob (Apache-2.0, The "
            f"Kubernetes Authors), from {source}; generated by scripts/generate_schemas.py"
        ),
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": defs,
    }


def render(version: str) -> str:
    return json.dumps(build(version), indent=1, sort_keys=True) + "\n"


def path_for(version: str) -> Path:
    return OUT / f"k8s-{version}.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a file is stale")
    args = parser.parse_args(argv)
    stale: list[Path] = []
    for version in VERSIONS:
        text = render(version)
        target = path_for(version)
        if args.check:
            if not target.is_file() or target.read_text(encoding="utf-8") != text:
                stale.append(target)
        else:
            target.write_text(text, encoding="utf-8")
    for target in stale:
        print(f"stale: {target}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
