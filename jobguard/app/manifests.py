"""Reading manifests for `jobguard check`: files, directories, stdin; multi-document YAML,
JSON and `kind: List`; each object with the YAML node it came from, for line/column lookup."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

try:  # a fast YAML reader for documents on which it agrees with PyYAML
    import ryaml

    _ryaml_loads: Callable[[str], Any] | None = ryaml.loads  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    _ryaml_loads = None


class K8sLoader(yaml.CSafeLoader):
    """YAML 1.1 like kubectl's sigs.k8s.io/yaml (libyaml parses), except that unquoted
    timestamps stay strings: Kubernetes converts YAML to JSON, where a time is a string."""

    yaml_implicit_resolvers = {  # noqa: RUF012 (PyYAML reads this class attribute)
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }


# Where YAML 1.1 (PyYAML, like kubectl) and YAML 1.2 (ryaml) read a plain scalar differently,
# ryaml yields a string that YAML 1.1 would have made a bool, a number, null or a merge key.
# Such a document, or one with syntax ryaml lacks (tags), is read again by PyYAML alone. The
# test uses PyYAML's own implicit resolvers, so it can only err on the safe side (a quoted
# "yes" also sends the document to PyYAML).
_RESOLVER_FIRST_CHARS = frozenset(k for k in K8sLoader.yaml_implicit_resolvers if k)
_YAML11_RESOLVED = re.compile(
    "|".join(
        dict.fromkeys(
            f"(?:{regexp.pattern})"
            for resolvers in K8sLoader.yaml_implicit_resolvers.values()
            for tag, regexp in resolvers
            if tag != "tag:yaml.org,2002:str"
        )
    ),
    re.VERBOSE,
)
_TAG = re.compile(r"(?:^|[ \t\[{,:-])!", re.MULTILINE)


def _yaml11_differs(value: Any) -> bool:
    """Whether ryaml's reading of a document may differ from PyYAML's."""
    if isinstance(value, str):
        return value[:1] in _RESOLVER_FIRST_CHARS and _YAML11_RESOLVED.match(value) is not None
    if isinstance(value, dict):
        return any(k == "<<" or _yaml11_differs(k) or _yaml11_differs(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_yaml11_differs(v) for v in value)
    return isinstance(value, float)


_DOCUMENT_START = re.compile(r"^(?:---|\.\.\.)(?:[ \t]|$)", re.MULTILINE)

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
    source: str
    """The YAML text of the document the object came from (composed again for positions)."""
    first_line: int = 0
    """0-based line of `source` in the file."""
    prefix: tuple[str | int, ...] = ()
    """Path of the object inside its document (`("items", 3)` for a List item)."""
    _root: yaml.Node | None = field(default=None, repr=False, compare=False)

    def locate(self, field_path: str) -> tuple[int, int]:
        """1-based line and column of a field, or of its nearest existing ancestor."""
        if self._root is None:  # composed once, on the first violation only
            node = yaml.compose(self.source, Loader=K8sLoader)
            for token in self.prefix:
                node = _child(node, token) if node is not None else None
            self._root = node
        line, column = locate(self._root, field_path)
        return line + self.first_line, column


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


def _read_stdin() -> bytes:
    buffer = getattr(sys.stdin, "buffer", None)  # bytes, so CRLF is seen and normalised
    return buffer.read() if buffer is not None else sys.stdin.read().encode()


def read_text(path: str) -> str:
    try:
        raw = _read_stdin() if path == STDIN else Path(path).read_bytes()
        # utf-8-sig drops a byte-order mark; CRLF and CR line ends read like editors read them.
        return raw.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ManifestError(f"{path}: cannot read: {reason}") from None


def _documents(text: str) -> list[tuple[int, str]]:
    """The text cut at document markers: (0-based first line, text) of each document."""
    starts = []
    for match in _DOCUMENT_START.finditer(text):
        if match.group().startswith("..."):
            # A document end marker closes the document before it: cut after its line.
            end_of_line = text.find("\n", match.start())
            starts.append(len(text) if end_of_line < 0 else end_of_line + 1)
        else:
            starts.append(match.start())
    starts = sorted(set(p for p in starts if p < len(text)))
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    out = []
    line = 0
    for begin, end in zip(starts, [*starts[1:], len(text)], strict=True):
        chunk = text[begin:end]
        out.append((line, chunk))
        line += chunk.count("\n")
    return out


def _load_slow(chunk: str) -> list[Any]:
    return [d for d in yaml.load_all(chunk, Loader=K8sLoader)]


def _load(chunk: str) -> list[Any]:
    """The objects of one document's text: ryaml when it reads it as PyYAML would."""
    if _ryaml_loads is None or "0o" in chunk or ("!" in chunk and _TAG.search(chunk)):
        return _load_slow(chunk)
    try:
        data = _ryaml_loads(chunk)
    except Exception:  # anything ryaml refuses, PyYAML reads or explains
        return _load_slow(chunk)
    return _load_slow(chunk) if _yaml11_differs(data) else [data]


def parse(text: str, file: str) -> list[Manifest]:
    """Every object of a multi-document YAML (or JSON) text, `kind: List` expanded."""
    out: list[Manifest] = []
    for first_line, chunk in _documents(text):
        try:
            documents = _load(chunk)
        except ValueError as exc:  # PyYAML's int constructor on e.g. `0x_`
            raise ManifestError(f"{file}:{first_line + 1}: cannot parse YAML: {exc}") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            line = first_line + mark.line + 1 if mark is not None else first_line + 1
            problem = getattr(exc, "problem", None) or str(exc)
            raise ManifestError(f"{file}:{line}: cannot parse YAML: {problem}") from None
        for data in documents:
            if data is None:
                continue
            if _is_list(data):
                for i, item in enumerate(data["items"] or []):
                    out.append(Manifest(file, len(out), item, chunk, first_line, ("items", i)))
                continue
            out.append(Manifest(file, len(out), data, chunk, first_line))
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
