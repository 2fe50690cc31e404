"""Name and value syntax as apimachinery checks it (`k8s.io/apimachinery/pkg/util/validation`),
with upstream's messages, so errors read exactly like the API server's.

Each function returns the list of problems (empty when the value is valid), as upstream's
`IsDNS1123Label` and friends do. Results are cached: manifests repeat the same names. Label keys
and values have two wordings (`label_wording`): IsQualifiedName and IsValidLabelValue up to
Kubernetes 1.34, `k8s.io/apimachinery/pkg/api/validate/content`'s IsLabelKey and IsLabelValue
from 1.35. Lengths are UTF-8 bytes, as Go's len() counts them.

Upstream: `k8s.io/apimachinery/pkg/util/validation`, k8s.io/apimachinery v0.37.2 (kubernetes v1.37.2).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from jobguard.validators.memo import MiB, short_key_cache
from jobguard.validators.versions import Release

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_LABEL = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
_PORT_NAME_CHARSET = re.compile("[-a-z0-9]+")
_PORT_NAME_LETTER = re.compile("[a-z]")
_RELAXED_ENV_MSG = (
    "a valid environment variable name must consist only of printable ASCII characters other "
    "than '='"
)


def is_dns1123_label(value: str) -> bool:
    """True when IsDNS1123Label finds no problem (uncached: the length is checked first)."""
    return len(value) <= DNS1123_LABEL_MAX_LENGTH and _DNS1123_LABEL.fullmatch(value) is not None


def is_dns1123_subdomain(value: str) -> bool:
    """True when IsDNS1123Subdomain finds no problem (uncached: the length is checked first)."""
    return (
        len(value) <= DNS1123_SUBDOMAIN_MAX_LENGTH
        and _DNS1123_SUBDOMAIN.fullmatch(value) is not None
    )


def byte_length(value: str) -> int:
    """Go's len(): UTF-8 bytes (a lone surrogate, which Go decodes as U+FFFD, counts 3)."""
    return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def regex_error(message: str, fmt: str, *examples: str) -> str:
    """upstream RegexError: the message, its examples and the regular expression."""
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def inclusive_range_error(low: int, high: int) -> str:
    return f"must be between {low} and {high}, inclusive"


@short_key_cache(2 * MiB, 256)
def dns1123_label_problems(value: str) -> tuple[str, ...]:
    """IsDNS1123Label."""
    problems: list[str] = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        problems.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if _DNS1123_LABEL.fullmatch(value) is None:
        if _DNS1123_SUBDOMAIN.fullmatch(value) is not None:
            # A valid subdomain but not a label, within the length: it has dots.
            problems.append("must not contain dots")
        else:
            problems.append(
                regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc")
            )
    return tuple(problems)


def _dns1123_subdomain_problems(value: str, too_long: Callable[[int], str]) -> list[str]:
    """IsDNS1123Subdomain, its length worded by `too_long` (util/validation's MaxLenError, or
    content's in a label key's prefix from apimachinery v0.35)."""
    problems: list[str] = []
    if byte_length(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        problems.append(too_long(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if _DNS1123_SUBDOMAIN.fullmatch(value) is None:
        problems.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return problems


@short_key_cache(2 * MiB, 256)
def dns1123_subdomain_problems(value: str) -> tuple[str, ...]:
    """IsDNS1123Subdomain."""
    return tuple(_dns1123_subdomain_problems(value, max_len_error))


def _mask_trailing_dash(name: str) -> str:
    """upstream maskTrailingDash: a generateName may end in '-' (a suffix follows)."""
    if name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> tuple[str, ...]:
    """NameIsDNSSubdomain: object names; `prefix` for generateName."""
    return dns1123_subdomain_problems(_mask_trailing_dash(name) if prefix else name)


def port_num_problems(port: int) -> tuple[str, ...]:
    """IsValidPortNum."""
    return () if 1 <= port <= 65535 else (inclusive_range_error(1, 65535),)


@short_key_cache(MiB // 4, 64)
def port_name_problems(port: str) -> tuple[str, ...]:
    """IsValidPortName (an IANA_SVC_NAME)."""
    problems: list[str] = []
    if len(port) > 15:
        problems.append(max_len_error(15))
    if _PORT_NAME_CHARSET.fullmatch(port) is None:
        problems.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if _PORT_NAME_LETTER.search(port) is None:
        problems.append("must contain at least one letter (a-z)")
    if "--" in port:
        problems.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        problems.append("must not begin or end with a hyphen")
    return tuple(problems)


@short_key_cache(2 * MiB, 256)
def relaxed_env_var_name_problems(value: str) -> tuple[str, ...]:
    """IsRelaxedEnvVarName: the rule in force from Kubernetes 1.32 (RelaxedEnvironmentVariable-
    Validation, on by default in every supported version)."""
    if not value:
        return ("environment variable name must be non-empty",)
    if any(not (" " <= ch <= "~") or ch == "=" for ch in value):
        return (_RELAXED_ENV_MSG,)
    return ()


_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
QUALIFIED_NAME = re.compile(_QUALIFIED_NAME_FMT)
"""A qualified name's name part, and a non-empty label value."""
_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)


def _max_bytes_error(length: int) -> str:
    """apimachinery content.MaxLenError (v0.35+)."""
    return f"must be no more than {length} bytes"


def _key_problems(value: str, too_long: Callable[[int], str], invalid_lead: str) -> tuple[str, ...]:
    """IsQualifiedName (apimachinery <= v0.34) and content.IsLabelKey (v0.35+): the same checks,
    worded by `too_long` and `invalid_lead` (a key with more than one '/')."""
    problems: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            # IsDNS1123Subdomain of the same package (its MaxLenError's words).
            problems += ["prefix part " + p for p in _dns1123_subdomain_problems(prefix, too_long)]
    else:
        return (
            invalid_lead
            + regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        )
    if not name:
        problems.append("name part must be non-empty")
    elif byte_length(name) > 63:
        problems.append("name part " + too_long(63))
    if QUALIFIED_NAME.fullmatch(name) is None:
        problems.append(
            "name part "
            + regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return tuple(problems)


@short_key_cache(2 * MiB, 320)
def qualified_name_problems(value: str) -> tuple[str, ...]:
    """IsQualifiedName (apimachinery <= v0.34, Kubernetes 1.33 and 1.34): an optional DNS
    subdomain prefix and '/', then a name of at most 63."""
    return _key_problems(value, max_len_error, "a qualified name ")


@short_key_cache(2 * MiB, 320)
def label_key_problems(value: str) -> tuple[str, ...]:
    """content.IsLabelKey, what IsQualifiedName became in apimachinery v0.35 (Kubernetes 1.35):
    the same checks, lengths in bytes, a key with more than one '/' "a valid label key"."""
    return _key_problems(value, _max_bytes_error, "a valid label key ")


_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', "
    "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  "
    "or 'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def _label_value_problems(value: str, too_long: Callable[[int], str]) -> tuple[str, ...]:
    problems: list[str] = []
    if byte_length(value) > 63:
        problems.append(too_long(63))
    if _LABEL_VALUE.fullmatch(value) is None:
        problems.append(_LABEL_VALUE_MSG)
    return tuple(problems)


@short_key_cache(2 * MiB, 64)
def label_value_problems(value: str) -> tuple[str, ...]:
    """IsValidLabelValue (apimachinery <= v0.34)."""
    return _label_value_problems(value, max_len_error)


@short_key_cache(2 * MiB, 64)
def content_label_value_problems(value: str) -> tuple[str, ...]:
    """content.IsLabelValue (apimachinery v0.35+): the length in bytes."""
    return _label_value_problems(value, _max_bytes_error)


@dataclass(frozen=True, slots=True)
class LabelWording:
    """The label key and label value checks of one release, in its words (a key's or value's
    validity is the same in every release)."""

    key: Callable[[str], tuple[str, ...]]
    """IsQualifiedName / content.IsLabelKey: label, annotation and toleration keys, selector
    keys, topology keys, finalizers, resource and condition names."""
    value: Callable[[str], tuple[str, ...]]
    """IsValidLabelValue / content.IsLabelValue."""


_QUALIFIED_NAME_WORDING = LabelWording(qualified_name_problems, label_value_problems)
_CONTENT_WORDING = LabelWording(label_key_problems, content_label_value_problems)


@lru_cache(maxsize=16)
def label_wording(version: str) -> LabelWording:
    """The wording of release `version` (versions.CHANGES, LabelKeyAndValueContentMessages)."""
    if Release.of(version).has("LabelKeyAndValueContentMessages"):
        return _CONTENT_WORDING
    return _QUALIFIED_NAME_WORDING
