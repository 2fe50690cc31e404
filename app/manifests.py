"""Reading manifests for `jobguard check`: files, directories, stdin; multi-document YAML,
JSON and `kind: List`; each object with the YAML node it came from, for line/column lookup."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

try:  # libyaml makes parsing several times faster; PyYAML wheels ship it.
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - a PyYAML built without libyaml
    _Loader = yaml.SafeLoader

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"
_PATH_TOKEN = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")


class ManifestError(ValueError):
    """A file that cannot be read or parsed; the message names the file and line."""


@dataclass(slots=True)
class Manifest:
    file: str
    position: int
    """0-based position of the object in its file (List items count one each)."""
    data: Any
    node: yaml.Node | None

    def locate(self, field_path: str) -> tuple[int, int]:
        """1-based line and column of a field, or of its nearest existing ancestor."""
        return locate(self.node, field_path)


def expand_paths(paths: list[str]) -> list[str]:
    """Files named directly, and manifest files below directories (sorted), in order."""
    out: list[str] = []
    for path in paths:
        p = Path(path)
        if path == STDIN or not p.is_dir():
            out.append(path)
            continue
        out.extend(
            str(f) for f in sorted(p.rglob("*")) if f.is_file() and f.suffix in MANIFEST_SUFFIXES
        )
    return out


def read_text(path: str) -> str:
    try:
        if path == STDIN:
            return sys.stdin.read()
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ManifestError(f"{path}: cannot read: {reason}") from None


def parse(text: str, file: str) -> list[Manifest]:
    """Every object of a multi-document YAML (or JSON) text, `kind: List` expanded."""
    loader = _Loader(text)
    out: list[Manifest] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            data = loader.construct_document(node)
            if data is None:
                continue
            if _is_list(data) and isinstance(node, yaml.MappingNode):
                items_node = _child(node, "items")
                items = items_node.value if isinstance(items_node, yaml.SequenceNode) else []
                for item, item_node in zip(data["items"] or [], items, strict=False):
                    out.append(Manifest(file, len(out), item, item_node))
                continue
            out.append(Manifest(file, len(out), data, node))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{file}:{mark.line + 1}" if mark is not None else file
        problem = getattr(exc, "problem", None) or str(exc)
        raise ManifestError(f"{where}: cannot parse YAML: {problem}") from None
    finally:
        loader.dispose()
    return out


def _is_list(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and data.get("kind") == "List"
        and isinstance(data.get("items"), list | None)
    )


def _entry(node: yaml.Node, key: str | int) -> tuple[yaml.Node | None, yaml.Node] | None:
    """(key node, value node) under a mapping key, following merge keys (`<<: *anchor`), or
    (None, item) for a sequence index."""
    if isinstance(node, yaml.MappingNode):
        merged: list[yaml.Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                merged.append(value_node)
            elif str(key_node.value) == str(key):
                return key_node, value_node
        for source in merged:
            for candidate in source.value if isinstance(source, yaml.SequenceNode) else [source]:
                found = _entry(candidate, key)
                if found is not None:
                    return found
        return None
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
        return None, node.value[key]
    return None


def _child(node: yaml.Node, key: str | int) -> yaml.Node | None:
    entry = _entry(node, key)
    return entry[1] if entry is not None else None


def path_tokens(field_path: str) -> list[str | int]:
    """`spec.rules[0].x[a.b/c]` -> ["spec", "rules", 0, "x", "a.b/c"]."""
    tokens: list[str | int] = []
    for name, bracket in _PATH_TOKEN.findall(field_path):
        if name:
            tokens.append(name)
        else:
            tokens.append(int(bracket) if bracket.isdigit() else bracket)
    return tokens


def locate(root: yaml.Node | None, field_path: str) -> tuple[int, int]:
    """Where a mapping entry's key starts (or a sequence item), for the deepest existing part."""
    if root is None:
        return (1, 1)
    node = root
    mark = root.start_mark
    for token in path_tokens(field_path):
        entry = _entry(node, token)
        if entry is None:
            break
        key_node, node = entry
        mark = (key_node or node).start_mark
    return (mark.line + 1, mark.column + 1)


def read_manifests(path: str) -> list[Manifest]:
    """Parse one file (or stdin); ManifestError names the file and line."""
    display = "<stdin>" if path == STDIN else path
    return parse(read_text(path), display)
