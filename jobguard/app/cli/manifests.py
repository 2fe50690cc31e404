"""Reading manifests for `jobguard check`: files, directories, stdin; multi-document YAML,
JSON and `kind: List`; each object with the YAML text it came from, for line/column lookup.

A document that cannot be parsed is reported on its own and the others are still read; a
Helm template (Go template actions `{{ ... }}`, not plain YAML) is recognised and set aside.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Any

import orjson
import yaml

from jobguard.app.cli.limits import MAX_FILE_BYTES
from jobguard.app.yaml_shape import shape_problem

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
# ryaml yields a string that YAML 1.1 would have made a bool, a number, null or a merge key,
# or a float that YAML 1.1 reads as a string (`1e3`). The strings are found in ryaml's result
# dumped as JSON (one C pass): a string YAML 1.1 would resolve is harmless when ryaml would not
# read it as a string unquoted (`"2"`, `"true"`: it was quoted), and otherwise when the text
# holds it only quoted. Anything else, and syntax ryaml lacks (tags), is read by PyYAML.
_RESOLVER_PATTERNS = list(
    dict.fromkeys(
        regexp.pattern
        for resolvers in K8sLoader.yaml_implicit_resolvers.values()
        for tag, regexp in resolvers
        if tag != "tag:yaml.org,2002:str"
    )
)
_YAML11_RESOLVED = re.compile(
    "|".join(f"(?:{pattern})" for pattern in _RESOLVER_PATTERNS), re.VERBOSE
)
# JSON strings that may hold such a scalar (a superset, decided by `_YAML11_RESOLVED`; the
# lookahead rejects most strings at their first character).
_YAML11_JSON_CANDIDATE = re.compile(
    r'"(?=[-+0-9.yYnNtTfFoO~<=!&*"])(?:[-+]?[0-9.][0-9a-fA-FxXoObB_.:eE+-]*'
    r"|[yY](?:es|ES)|[nN](?:[oO]|ull|ULL)|[tT](?:rue|RUE)|[fF](?:alse|ALSE)|[oO](?:[nN]|ff|FF)"
    r'|~|<<|[=!&*]|)"'
)
# A JSON number with a fraction or an exponent (orjson writes every float so).
_JSON_FLOAT = re.compile(
    rb"[:,\[]-?[0-9]+(?:\.[0-9]+(?:[eE][-+]?[0-9]+)?|[eE][-+]?[0-9]+)(?=[,\]}])"
)
# Every digit as "0": where a digit meets a fraction or an exponent is then found by a search
# with a literal first character (fast), and `_JSON_FLOAT` tried only there; searching with
# `_JSON_FLOAT` itself tries every comma and colon of the document.
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_FLOAT_SEAM = re.compile(rb"0[.eE]")
_TAG = re.compile(r"(?:^|[ \t\[{,:-])!", re.MULTILINE)
# Characters that can stand right before and after a plain scalar in a line.
_PLAIN_BEFORE = frozenset(" \t\n[{,:")
_PLAIN_AFTER = frozenset(" \t\n,]}:")


@lru_cache(maxsize=8192)
def _may_read_otherwise(scalar: str) -> bool:
    """Whether this string, unquoted, is read as a string by ryaml but not by YAML 1.1: only
    then may it have been written unquoted (ryaml reads `2` and `true` as a number and a
    bool, so a string "2" was quoted)."""
    if _YAML11_RESOLVED.match(scalar) is None:
        return False
    assert _ryaml_loads is not None
    try:
        return isinstance(_ryaml_loads(scalar), str)
    except Exception:  # not a scalar ryaml reads unquoted: treat it as one it might
        return True


def _plain_in(text: str, scalar: str) -> bool:
    """Whether `scalar` may stand unquoted in the text (errs on the side of yes)."""
    start = text.find(scalar)
    while start >= 0:
        end = start + len(scalar)
        before = text[start - 1] if start else "\n"
        after = text[end] if end < len(text) else "\n"
        if before in _PLAIN_BEFORE and after in _PLAIN_AFTER:
            return True
        start = text.find(scalar, start + 1)
    return False


def _has_json_float(dumped: bytes) -> bool:
    """Whether `_JSON_FLOAT` matches anywhere in `dumped`. A match holds a digit followed by
    `.`, `e` or `E`, and can only start right before that digit's run (and its minus sign)."""
    shape = dumped.translate(_DIGITS_AS_ZERO)
    for seam in _FLOAT_SEAM.finditer(shape):
        start = seam.start()
        while start and shape[start - 1] == 0x30:  # "0": any digit
            start -= 1
        if start and shape[start - 1] == 0x2D:  # "-"
            start -= 1
        if start and _JSON_FLOAT.match(dumped, start - 1):
            return True
    return False


def _yaml11_differs(value: Any, text: str) -> bool:
    """Whether ryaml's reading of a document (`value`, from `text`) may differ from PyYAML's."""
    try:
        dumped = orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError
        # Integers beyond 64 bits, or a key that is not a string: as JSON it would pass for a
        # quoted one (`1e3: x` is a float key to ryaml, a string key to YAML 1.1).
        return True
    if _has_json_float(dumped):
        return True
    for quoted in _YAML11_JSON_CANDIDATE.findall(dumped.decode()):
        scalar = quoted[1:-1]
        if _may_read_otherwise(scalar) and _plain_in(text, scalar):
            return True
    return False


_DOCUMENT_START = re.compile(r"^(?:---|\.\.\.)(?:[ \t]|$)", re.MULTILINE)
# A Go template action, as Helm charts use them (`{{ .Values.x }}`, `{{- include ... }}`).
_TEMPLATE_ACTION = re.compile(r"\{\{.*?\}\}")

# Manifests come from pull requests: a document's nesting is bounded before anything recurses
# into it (ryaml and libyaml's composer in C, where too deep a document ends the process), and
# aliases as Kubernetes bounds them (go-yaml's "excessive aliasing"), before anything expands
# them (ryaml, the JSON dumps, the rules). Real manifests nest a few dozen levels at most.
MAX_DEPTH = 200
"""Nesting levels of mappings and lists in a document (aliases expanded)."""
# The event scan that finds both costs about as much as a parse, so it runs only where the text
# may hold either: an anchor and an alias, or more levels than the text can hold otherwise (a
# block level needs a column of indentation or an indicator, a flow level a bracket).
_ANCHOR = re.compile(r"(?:^|[ \t\[{,:-])&[^ \t\n,\[\]{}]", re.MULTILINE)
_ALIAS = re.compile(r"(?:^|[ \t\[{,:-])\*[^ \t\n,\[\]{}]", re.MULTILINE)
_FLOW_LEVELS = MAX_DEPTH // 2
# A line that starts with this many indentation characters (spaces, tabs, `?`, `:`, `-`), found
# as a run of spaces after a line break once each of them is a space: a substring search in C,
# where a MULTILINE regex tries every position of the text (a fifth of the cost of the search).
_DEEP_INDENT = b"\n" + b" " * (MAX_DEPTH // 2 - 8)
_INDENT_AS_SPACE = bytes.maketrans(b"\t?:-", b"    ")

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"
_PATH_TOKEN = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")


class ManifestError(ValueError):
    """A file or document that cannot be read or parsed; the message names the file and
    line, `file` and `line` (1-based, 0 for the whole file) say them apart."""

    def __init__(self, message: str, file: str = "", line: int = 0, reason: str = "") -> None:
        super().__init__(message)
        self.file = file
        self.line = line
        self.reason = reason or message
        """The message without the file and line."""


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
    _lines: _BlockLines | None = field(default=None, repr=False, compare=False)

    def locate(self, field_path: str) -> tuple[int, int]:
        """1-based line and column of a field, or of its nearest existing ancestor."""
        tokens = [*self.prefix, *path_tokens(field_path)]
        if self._lines is None:
            self._lines = _BlockLines(self.source)
        found = self._lines.locate(tokens)
        if found is not None:
            return found[0] + 1 + self.first_line, found[1] + 1
        if self._root is None:  # composed once, when the text is beyond the block reader
            self._root = yaml.compose(self.source, Loader=K8sLoader)
        line, column = locate(self._root, field_path, self.prefix)
        return line + self.first_line, column


@dataclass(frozen=True, slots=True)
class Template:
    """A document that is a Helm template, not plain YAML: set aside, not judged."""

    file: str
    line: int
    """1-based line where the document starts."""


@dataclass(frozen=True, slots=True)
class Foreign:
    """A document written for another tool: tags only it understands (GitLab's `!reference`,
    CloudFormation's `!Sub`, Ansible's `!vault`), in something that is not a Job or CronJob."""

    file: str
    line: int
    """1-based line where the document starts."""
    tags: tuple[str, ...]


@dataclass(slots=True)
class Parsed:
    """What one file holds: its objects, the documents that cannot be parsed, templates,
    documents for other tools."""

    manifests: list[Manifest] = field(default_factory=list)
    errors: list[ManifestError] = field(default_factory=list)
    templates: list[Template] = field(default_factory=list)
    foreign: list[Foreign] = field(default_factory=list)


class _ForeignTagLoader(K8sLoader):
    """K8sLoader that reads a value under a tag it does not know as if untagged, and notes the
    tag: to tell a file for another tool from a Kubernetes object."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.foreign_tags: list[str] = []


def _construct_foreign(loader: _ForeignTagLoader, suffix: str, node: yaml.Node) -> Any:
    tag = str(node.tag)
    if tag not in loader.foreign_tags:
        loader.foreign_tags.append(tag)
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)  # type: ignore[arg-type]


_ForeignTagLoader.add_multi_constructor("!", _construct_foreign)
_ForeignTagLoader.add_multi_constructor("tag:", _construct_foreign)

_UNKNOWN_TAG = "could not determine a constructor for the tag"


def _may_be_a_job(data: Any) -> bool:
    """Whether a document may be meant as a Job or CronJob (then it must be read as one)."""
    if not isinstance(data, dict):
        return False
    kind, version = data.get("kind"), data.get("apiVersion")
    return (isinstance(kind, str) and kind.lower() in ("job", "cronjob")) or (
        isinstance(version, str) and version.lower().startswith("batch/")
    )


def _foreign(chunk: str) -> tuple[str, ...] | None:
    """The unknown tags of a document that is not a Job or CronJob, or None (an error)."""
    loader = _ForeignTagLoader(chunk)
    try:
        documents = []
        while loader.check_data():  # type: ignore[no-untyped-call]
            documents.append(loader.get_data())
    except (ValueError, yaml.YAMLError):
        return None
    finally:
        loader.dispose()
    if any(_may_be_a_job(d) or _is_list(d) for d in documents):
        return None
    return tuple(loader.foreign_tags)


@dataclass(slots=True)
class Inputs:
    """The files a command line names, expanded: what to read, what `--exclude` left out,
    and directories without any manifest file."""

    files: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    empty_directories: list[str] = field(default_factory=list)


def _candidates(path: str) -> Iterable[str]:
    """The path and every run of its components (`a/b/c`: a/b/c, a/b, b/c, a, b, c)."""
    parts = PurePath(path).parts
    yield path
    for start in range(len(parts)):
        for end in range(start + 1, len(parts) + 1):
            yield "/".join(parts[start:end]).replace("//", "/")


def excluded_by(path: str, patterns: Iterable[str]) -> str | None:
    """The first glob that excludes a path: matched against the whole path and every run of
    its components, so a directory name (`templates`) leaves out everything below it."""
    normalized = path.removeprefix("./")
    for pattern in patterns:
        glob = pattern.removeprefix("./").rstrip("/") or pattern
        if any(fnmatch.fnmatchcase(c, glob) for c in _candidates(normalized)):
            return pattern
    return None


def collect(paths: list[str], exclude: Iterable[str] = ()) -> Inputs:
    """Files named directly, and manifest files below directories (sorted), in order."""
    patterns = list(exclude)
    inputs = Inputs()
    for path in paths:
        p = Path(path)
        if path == STDIN or not p.is_dir():
            found = [path]
        else:
            # Every name with a manifest suffix but directories and dangling symlinks: a FIFO,
            # device or socket among them (or a symlink to one) is refused by `read_bytes`
            # with its reason, not passed over in silence.
            found = [
                str(f)
                for f in sorted(p.rglob("*"))
                if f.suffix in MANIFEST_SUFFIXES and f.exists() and not f.is_dir()
            ]
            if not found:
                inputs.empty_directories.append(path)
        for file in found:
            if file != STDIN and excluded_by(file, patterns) is not None:
                inputs.excluded.append(file)
            else:
                inputs.files.append(file)
    return inputs


def expand_paths(paths: list[str], exclude: Iterable[str] = ()) -> list[str]:
    """Files named directly, and manifest files below directories (sorted), in order."""
    return collect(paths, exclude).files


def is_chart_template(path: str) -> bool:
    """Whether a file lies in a Helm chart's templates directory (`templates/` beside a
    `Chart.yaml`), where documents are Go templates rather than plain YAML."""
    if path == STDIN:
        return False
    parents = Path(path).parents
    return any(p.name == "templates" and (p.parent / "Chart.yaml").is_file() for p in parents)


def _read_stdin(limit: int) -> bytes:
    buffer = getattr(sys.stdin, "buffer", None)  # bytes, so CRLF is seen and normalised
    return buffer.read(limit) if buffer is not None else sys.stdin.read(limit).encode()


STDIN_DISPLAY = "<stdin>"
_stdin_name = STDIN_DISPLAY


def name_stdin(name: str | None) -> None:
    """What reports call standard input (`check --stdin-filename`: the file the rendered
    manifests stand for, where annotations and SARIF results are placed)."""
    global _stdin_name
    _stdin_name = name or STDIN_DISPLAY


def display_name(path: str) -> str:
    """How reports name an input: `<stdin>` (or `--stdin-filename`) for `-`, else the path."""
    return _stdin_name if path == STDIN else path


_SPECIAL_FILES = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_regular(mode: int) -> str:
    """What a file that is not a regular one is (`a FIFO`, `a character device`...)."""
    return next((name for test, name in _SPECIAL_FILES if test(mode)), "not a regular file")


def _refused(display: str, reason: str) -> ManifestError:
    return ManifestError(f"{display}: {reason}", display, 0, reason)


def _too_large(size: int | None, limit: int) -> str:
    what = f"{size} bytes" if size is not None else f"more than {limit} bytes"
    return f"file is {what}, over the limit of {limit} (--max-file-bytes)"


def read_bytes(path: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """A regular file's bytes (or standard input's), at most `limit` of them. Anything else a
    path can name (a FIFO, a device such as /dev/zero, a socket, behind a symlink or not) is
    refused without being read, as is a file over `limit`: a ManifestError naming why."""
    display = display_name(path)
    if path == STDIN:
        raw = _read_stdin(limit + 1)
        if len(raw) > limit:
            raise _refused(display, _too_large(None, limit))
        return raw
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise _refused(display, f"{_not_regular(mode)}, not a regular file: not read")
        # Non-blocking: a FIFO put in the file's place since the stat does not hang the open.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise _refused(display, f"cannot read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise _refused(display, f"{_not_regular(opened.st_mode)}, not a regular file: not read")
        if opened.st_size > limit:
            raise _refused(display, _too_large(opened.st_size, limit))
        try:
            raw = handle.read(limit + 1)  # the file may grow after the fstat
        except OSError as exc:
            raise _refused(display, f"cannot read: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise _refused(display, _too_large(None, limit))
    return raw


def read_text(path: str, limit: int = MAX_FILE_BYTES) -> str:
    display = display_name(path)
    raw = read_bytes(path, limit)
    try:
        # utf-8-sig drops a byte-order mark; CRLF and CR line ends read like editors read them
        # (looked for first: one scan for a character, not two for strings).
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _refused(display, f"cannot read: {exc}") from None
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _marker_at(text: str, start: int) -> bool:
    """Whether a `---` or `...` at `start` (a line's start) is a document marker."""
    end = start + 3
    return end == len(text) or text[end] in " \t\n"


def _documents(text: str) -> list[tuple[int, str]]:
    """The text cut at document markers: (0-based first line, text) of each document."""
    starts = []
    for marker in ("---", "..."):
        # Line starts holding the marker: str.find runs in C, a MULTILINE regex does not.
        positions = [0] if text.startswith(marker) else []
        found = text.find("\n" + marker)
        while found >= 0:
            positions.append(found + 1)
            found = text.find("\n" + marker, found + 1)
        for position in positions:
            if not _marker_at(text, position):
                continue
            if marker == "---":
                starts.append(position)
            else:  # a document end marker closes the document before it: cut after it
                end_of_line = text.find("\n", position)
                starts.append(len(text) if end_of_line < 0 else end_of_line + 1)
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


def _load(chunk: str, fast: bool = True) -> list[Any]:
    """The objects of one document's text: ryaml when it reads it as PyYAML would."""
    if not fast or _ryaml_loads is None or "0o" in chunk or ("!" in chunk and _TAG.search(chunk)):
        return _load_slow(chunk)
    try:
        data = _ryaml_loads(chunk)
    except Exception:  # anything ryaml refuses, PyYAML reads or explains
        return _load_slow(chunk)
    return _load_slow(chunk) if _yaml11_differs(data, chunk) else [data]


def _needs_shape_scan(chunk: str) -> bool:
    """Whether a document's text may nest deeper than MAX_DEPTH or hold aliases."""
    if "&" in chunk and "*" in chunk and _ANCHOR.search(chunk) and _ALIAS.search(chunk):
        return True
    if chunk.count("[") + chunk.count("{") > _FLOW_LEVELS:
        return True
    lines = b"\n" + chunk.encode("utf-8", "surrogatepass")
    return _DEEP_INDENT in lines.translate(_INDENT_AS_SPACE)


def _shape_error(chunk: str, file: str, first_line: int) -> ManifestError | bool:
    """A document nested too deep or aliased too much, as an error naming file and line;
    else whether the text parses (False: PyYAML, not ryaml, is to say what is wrong)."""
    try:
        problem = shape_problem(chunk, max_depth=MAX_DEPTH, alias_ratio=True, loader=K8sLoader)
    except (ValueError, yaml.YAMLError):
        return False
    if problem is None:
        return True
    line = first_line + (problem.line or 1)
    reason = f"refused: {problem.reason}"
    return ManifestError(f"{file}:{line}: {reason}", file, line, reason)


def _parse_error(exc: Exception, file: str, first_line: int) -> ManifestError:
    if isinstance(exc, yaml.YAMLError):
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = first_line + mark.line + 1 if mark is not None else first_line + 1
        problem = getattr(exc, "problem", None) or str(exc)
    else:  # PyYAML's int constructor on e.g. `0x_`
        line, problem = first_line + 1, str(exc)
    reason = f"cannot parse YAML: {problem}"
    return ManifestError(f"{file}:{line}: {reason}", file, line, reason)


def parse_all(text: str, file: str, *, templates: bool = False) -> Parsed:
    """Every object of a multi-document YAML (or JSON) text, `kind: List` expanded; each
    document that cannot be parsed is an error of its own. A document with Go template
    actions is a template when it does not parse, or always when `templates` (the file is in
    a chart's templates directory)."""
    parsed = Parsed()
    out = parsed.manifests
    for first_line, chunk in _documents(text):
        # A template's line: its first one after the document marker.
        template_line = first_line + (2 if _DOCUMENT_START.match(chunk) else 1)
        if templates and _TEMPLATE_ACTION.search(chunk):
            parsed.templates.append(Template(file, template_line))
            continue
        parses = True
        if _needs_shape_scan(chunk):
            shape = _shape_error(chunk, file, first_line)
            if isinstance(shape, ManifestError):
                parsed.errors.append(shape)
                continue
            parses = shape
        try:
            documents = _load(chunk, fast=parses)
        except (ValueError, yaml.YAMLError) as exc:
            tags = (
                _foreign(chunk)
                if isinstance(exc, yaml.constructor.ConstructorError)
                and _UNKNOWN_TAG in str(exc.problem)
                else None
            )
            if _TEMPLATE_ACTION.search(chunk):
                parsed.templates.append(Template(file, template_line))
            elif tags:
                parsed.foreign.append(Foreign(file, template_line, tags))
            else:
                parsed.errors.append(_parse_error(exc, file, first_line))
            continue
        for data in documents:
            if data is None:
                continue
            if _is_list(data):
                for i, item in enumerate(data["items"] or []):
                    out.append(Manifest(file, len(out), item, chunk, first_line, ("items", i)))
                continue
            out.append(Manifest(file, len(out), data, chunk, first_line))
    return parsed


def parse(text: str, file: str) -> list[Manifest]:
    """Every object of a multi-document YAML (or JSON) text, `kind: List` expanded;
    ManifestError for the first document that cannot be parsed."""
    parsed = parse_all(text, file)
    if parsed.errors:
        raise parsed.errors[0]
    if parsed.templates:
        line = parsed.templates[0].line
        reason = "cannot parse YAML: a template, not plain YAML"
        raise ManifestError(f"{file}:{line}: {reason}", file, line, reason)
    return parsed.manifests


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


def locate(
    root: yaml.Node | None, field_path: str, prefix: tuple[str | int, ...] = ()
) -> tuple[int, int]:
    """Where a mapping entry's key starts (or a sequence item), for the deepest existing part
    of `prefix` then `field_path` (1-based line and column in the composed text)."""
    if root is None:
        return (1, 1)
    node = root
    for token in prefix:  # the object itself inside its document (a List item)
        child = _child(node, token)
        if child is None:
            break
        node = child
    mark = node.start_mark
    for token in path_tokens(field_path):
        entry = _entry(node, token)
        if entry is None:
            break
        key_node, node = entry
        mark = (key_node or node).start_mark
    return (mark.line + 1, mark.column + 1)


# --- positions in block-style YAML without composing it -----------------------------------------

_BLOCK_KEY = re.compile(r"([A-Za-z0-9_][-A-Za-z0-9_./]*)[ \t]*:(?:[ \t]|$)")
_SEQUENCE_ITEM = re.compile(r"-(?:[ \t]+|$)")


def _closes_on_each_line(source: str, lines: list[str]) -> bool:
    """Whether every quoted scalar and flow collection ends on the line it starts on, so that
    no line is the continuation of one. Errs on the side of no: a backslash anywhere, a line
    with both kinds of quotes or an odd number of double quotes, an odd number of single
    quotes where a value starts with one, brackets that do not balance. (`lines`: the source
    cut at line ends.)"""
    if "\t" in source or "\\" in source:
        return False
    for line in lines:
        if '"' in line:
            if "'" in line or line.count('"') % 2:
                return False
        elif (
            "'" in line
            and line.count("'") % 2
            and (": '" in line or "- '" in line or line.lstrip(" ").startswith("'"))
        ):
            return False
        if "[" in line or "{" in line:
            opened = line.count("[") + line.count("{")
            if opened != line.count("]") + line.count("}"):
                return False
    return True


# What a step into the text finds: the node below (first line, column, end of its lines) and
# the position to report; SCALAR: the field exists and nothing lies below it; OPAQUE: it
# exists, and what lies below is beyond this reader; UNSURE: compose instead.
_Step = tuple[int, int, int, tuple[int, int]]
_SCALAR, _OPAQUE, _UNSURE = -1, -2, -3


class _BlockLines:
    """Positions of fields in the block-style YAML people write (`key: value`, `- item`),
    read from the text's indentation, far cheaper than composing the document. `locate`
    answers None whenever the text uses what this reader does not follow (flow collections
    or anchors on the way, merge keys, tags, quoted or complex keys, multi-line quoted
    scalars, directives), and the caller composes the document instead; a test holds both to
    the same answers."""

    __slots__ = ("indents", "lines", "usable")

    def __init__(self, source: str) -> None:
        self.lines = lines = source.split("\n")
        # Indentation of each line; -1 for lines that carry nothing (blank, comment, marker).
        self.indents = [
            len(line) - len(content) if (content := line.lstrip(" ")) and content[0] != "#" else -1
            for line in lines
        ]
        if lines[0] in ("---", "..."):
            self.indents[0] = -1
        self.usable = _closes_on_each_line(source, lines)

    def _first(self, start: int, end: int) -> int | None:
        for i in range(start, end):
            if self.indents[i] >= 0:
                return i
        return None

    def _end(self, start: int, column: int, sequence: bool) -> int:
        """Where the node at `column` whose lines continue from `start` ends."""
        for i in range(start, len(self.lines)):
            indent = self.indents[i]
            if indent < 0:
                continue
            if indent < column:
                return i
            if sequence and indent == column and not _SEQUENCE_ITEM.match(self.lines[i], indent):
                return i
        return len(self.lines)

    def locate(self, tokens: list[str | int]) -> tuple[int, int] | None:
        """0-based (line, column) of the deepest existing token, or None (compose instead)."""
        if not self.usable:
            return None
        root = self._first(0, len(self.lines))
        if root is None or self.lines[root].lstrip(" ").startswith(("%", "---")):
            return None
        line, column, end = root, self.indents[root], len(self.lines)
        mark = (line, column)
        last = len(tokens) - 1
        for position, token in enumerate(tokens):
            text = self.lines[line]
            step: _Step | None
            if _SEQUENCE_ITEM.match(text, column):
                if not isinstance(token, int):
                    return mark  # a sequence has no named fields
                step = self._item(line, column, end, token)
            elif _BLOCK_KEY.match(text, column) is None:
                return None
            elif isinstance(token, int):
                return mark  # a mapping has no items
            else:
                step = self._entry(line, column, end, token)
            if step is None:
                return mark
            line, column, end, mark = step
            if line == _SCALAR:
                return mark
            if line == _UNSURE or (line == _OPAQUE and position != last):
                return None
            if line == _OPAQUE:
                return mark
        return mark

    def _entry(self, line: int, column: int, end: int, key: str) -> _Step | None:
        """The entry `key` of the block mapping whose first entry is at (line, column)."""
        for i in range(line, end):
            indent = self.indents[i]
            if i != line and indent != column:
                if 0 <= indent < column:
                    break
                continue
            text = self.lines[i]
            if i != line and _SEQUENCE_ITEM.match(text, column):
                continue  # an indentless sequence: the value of the entry before
            match = _BLOCK_KEY.match(text, column)
            if match is None:  # a quoted or complex key, a merge key: compose instead
                return (_UNSURE, 0, 0, (line, column))
            if match.group(1) == key:
                return self._value(i, column, match.end(), end)
        return None

    def _value(self, line: int, key_column: int, value_start: int, end: int) -> _Step:
        """What the entry at (line, key_column) holds."""
        mark = (line, key_column)
        rest = self.lines[line][value_start:].strip()
        if rest and rest[0] != "#":
            # Inline: a scalar, or something this reader does not enter.
            return (_OPAQUE if rest[0] in "{[&*!" else _SCALAR, 0, 0, mark)
        first = self._first(line + 1, end)
        if first is None or self.indents[first] < key_column:
            return (_SCALAR, 0, 0, mark)
        column = self.indents[first]
        text = self.lines[first]
        if _SEQUENCE_ITEM.match(text, column):  # indented, or at the key's column
            return (first, column, self._end(first, column, True), mark)
        if column == key_column:
            return (_SCALAR, 0, 0, mark)  # the next entry: this one holds nothing
        if _BLOCK_KEY.match(text, column) is None:
            return (_OPAQUE, 0, 0, mark)  # a multi-line scalar or a quoted key
        # A block mapping's end is left open: `_entry` stops at the first line indented less,
        # where `_end` would have put it (and `_value` answers alike past it), so the lines are
        # not scanned twice.
        return (first, column, len(self.lines), mark)

    def _item(self, line: int, column: int, end: int, index: int) -> _Step | None:
        """Item `index` of the block sequence whose first item is at (line, column)."""
        seen = -1
        for i in range(line, end):
            if self.indents[i] != column:
                continue
            dash = _SEQUENCE_ITEM.match(self.lines[i], column)
            if dash is None:
                continue
            seen += 1
            if seen != index:
                continue
            item_end = self._end(i + 1, column + 1, False)
            text = self.lines[i]
            rest = text[dash.end() :]
            if not rest or rest[0] == "#":  # `-` alone: the item is on the lines below
                first = self._first(i + 1, item_end)
                if first is None:
                    return (_UNSURE, 0, 0, (i, column))
                inner = self.indents[first]
                if _BLOCK_KEY.match(self.lines[first], inner) is None:
                    return (_UNSURE, 0, 0, (first, inner))
                return (first, inner, len(self.lines), (first, inner))  # (see `_value`)
            mark = (i, dash.end())
            if rest[0] in "{[&*!-?|>'\"":
                return (_OPAQUE if rest[0] in "{[&*!-?" else _SCALAR, 0, 0, mark)
            if _BLOCK_KEY.match(text, dash.end()) is None:
                return (_SCALAR, 0, 0, mark)  # a plain scalar item
            return (i, dash.end(), item_end, mark)
        return None


def read_manifests(path: str, limit: int = MAX_FILE_BYTES) -> list[Manifest]:
    """Parse one file (or stdin); ManifestError names the file and line."""
    return parse(read_text(path, limit), display_name(path))


def read_file(path: str, limit: int = MAX_FILE_BYTES) -> Parsed:
    """Parse one file (or stdin): its objects, the documents that cannot be parsed and the
    templates; ManifestError only when the file cannot be read at all."""
    return parse_all(read_text(path, limit), display_name(path), templates=is_chart_template(path))
