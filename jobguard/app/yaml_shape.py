"""Bounds on a YAML text's shape, found before anything composes it: nesting depth and the
values aliases stand for, read from PyYAML's event stream (the parser does not recurse; the
composers and constructors do, and aliases are expanded by whatever turns the data into JSON).

Shared by the configuration file (`config`) and the manifests `jobguard check` reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

# Kubernetes reads YAML with go-yaml (sigs.k8s.io/yaml), which refuses "excessive aliasing":
# once more than 100 of the values decoded came through an alias and more than 1000 were
# decoded, the share of aliased values may not exceed 99% up to 400,000 values, falling to 10%
# at 4,000,000 (go-yaml's `allowedAliasRatio`).
ALIAS_RATIO_LOW = 400_000
ALIAS_RATIO_HIGH = 4_000_000
EXCESSIVE_ALIASING = "document contains excessive aliasing"


def allowed_alias_ratio(values: int) -> float:
    """The share of values that may come through aliases in a document of `values` values."""
    if values <= ALIAS_RATIO_LOW:
        return 0.99
    if values >= ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (values - ALIAS_RATIO_LOW) / (ALIAS_RATIO_HIGH - ALIAS_RATIO_LOW)


def excessive_aliasing(values: int, aliased: int) -> bool:
    """go-yaml's test, on `values` values of which `aliased` came through aliases."""
    return aliased > 100 and values > 1000 and aliased / values > allowed_alias_ratio(values)


@dataclass(frozen=True, slots=True)
class ShapeProblem:
    line: int | None
    """1-based line of the text where the scan stopped."""
    reason: str


def shape_problem(
    text: str,
    *,
    max_depth: int,
    max_nodes: int | None = None,
    alias_ratio: bool = False,
    loader: Any = yaml.SafeLoader,
) -> ShapeProblem | None:
    """Nesting deeper than `max_depth`, more than `max_nodes` nodes, or (`alias_ratio`) more
    aliasing than go-yaml takes, all counted with aliases expanded; the scan stops at the first
    level, node or alias too many. YAMLError for text that does not parse before that."""
    open_: list[list[Any]] = []  # each open collection: [anchor, nodes, height of its children]
    sizes: dict[str, tuple[int, int]] = {}  # an anchored node's (nodes, height), for its aliases
    count = 0
    aliased = 0  # nodes that come through an alias (every node of its anchor's, each time)
    for event in yaml.parse(text, Loader=loader):
        line = event.start_mark.line + 1 if event.start_mark is not None else None
        size: tuple[int, int]
        anchor: str | None = None
        if isinstance(event, yaml.CollectionStartEvent):
            open_.append([event.anchor, 1, 0])
            size = (1, 1)
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, nodes, height = open_.pop()
            if anchor is not None:
                sizes[anchor] = (nodes, height + 1)
            if open_:
                open_[-1][1] += nodes
                open_[-1][2] = max(open_[-1][2], height + 1)
            continue
        elif isinstance(event, yaml.ScalarEvent):
            anchor, size = event.anchor, (1, 0)
        elif isinstance(event, yaml.AliasEvent):
            if any(entry[0] == event.anchor for entry in open_):
                return ShapeProblem(line, f"the alias *{event.anchor} is inside its own anchor")
            size = sizes.get(str(event.anchor), (1, 0))  # an undefined one: the composer says
            aliased += size[0]
        else:
            continue
        count += size[0]
        if anchor is not None:
            sizes[anchor] = size
        depth = len(open_) + size[1] - (1 if isinstance(event, yaml.CollectionStartEvent) else 0)
        if depth > max_depth:
            return ShapeProblem(
                line, f"nested deeper than {max_depth} levels of mappings and lists"
            )
        if max_nodes is not None and count > max_nodes:
            return ShapeProblem(line, f"more than {max_nodes} values (aliases expanded)")
        if alias_ratio and excessive_aliasing(count, aliased):
            return ShapeProblem(
                line,
                f"{EXCESSIVE_ALIASING} ({aliased} of the first {count} values come through aliases)",
            )
        if open_ and not isinstance(event, yaml.CollectionStartEvent):
            open_[-1][1] += size[0]
            open_[-1][2] = max(open_[-1][2], size[1])
    return None
