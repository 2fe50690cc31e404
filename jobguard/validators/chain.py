"""The admission chain: what the API server does with a request, as every entry point asks it.

The API server runs the mutating webhooks, then the validating webhooks on the mutated object.
`admit` is that chain; each entry point says which stages it stands for and assembles nothing
itself:

| entry point                  | stages               | why                                         |
|------------------------------|----------------------|---------------------------------------------|
| `POST /mutate`               | MUTATING             | the mutating webhook's answer only          |
| `POST /validate`             | VALIDATING           | the object already went through the         |
|                              |                      | cluster's mutating stage, /mutate included  |
| `jobguard review --mutate`   | MUTATING             | replays what /mutate received               |
| `jobguard review`            | VALIDATING           | replays what /validate received             |
| `jobguard review             | MUTATING, VALIDATING | what the API server does with a request     |
|  --mutate-first`, `test`     |                      | both webhooks see (`test`: `mutate: false`  |
|                              |                      | asks VALIDATING only)                       |
| `jobguard check` (`audit`)   | MUTATING, VALIDATING | a manifest goes through both stages         |

/validate never mutates: judging a mutated copy would judge an object other than the one the
API server stores (a missing or failed mutating webhook must still meet SUS-001). The chain is
idempotent all the same: a request that /mutate already patched needs no mutation, so running
both stages on it judges exactly what /validate judges.

Decode errors are DEC-001 violations resolved through the configuration like every rule, and the
namespace is resolved once, in `Request`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Flag, auto

from jobguard.validators.context import Request
from jobguard.validators.pipeline import Mutation, Verdict, evaluate, mutate
from jobguard.validators.settings import Settings


class Stage(Flag):
    """The API server's admission stages a caller stands for."""

    MUTATING = auto()
    VALIDATING = auto()


BOTH_STAGES = Stage.MUTATING | Stage.VALIDATING


# Not frozen: one per request, and a frozen dataclass's __init__ costs five times a plain one's.
@dataclass(slots=True)
class Admission:
    """What the chain did with one request."""

    request: Request
    """The request as validated: with the mutation applied (its namespace resolved)."""
    mutation: Mutation
    """The mutating stage's patch (none when that stage was not asked or had nothing to do)."""
    verdict: Verdict | None
    """The validating stage's verdict; None when that stage was not asked."""

    @property
    def allowed(self) -> bool:
        return self.verdict is None or self.verdict.allowed


def admit(request: Request, settings: Settings, stages: Stage = BOTH_STAGES) -> Admission:
    """Run the asked stages in the API server's order: mutation, then validation of the result.

    Never raises for bad objects: they are left unpatched and give a DEC-001 verdict.
    """
    # /validate's stage is tested by identity first: Flag's `in` runs in Python.
    validating_only = stages is Stage.VALIDATING
    mutating = not validating_only and Stage.MUTATING in stages
    mutation = mutate(request, settings) if mutating else _NO_MUTATION
    if mutation.policy is not None and isinstance(request.object, dict):
        request = dataclasses.replace(request, object=mutation.apply(request.object))
    validating = validating_only or Stage.VALIDATING in stages
    verdict = evaluate(request, settings) if validating else None
    return Admission(request, mutation, verdict)


_NO_MUTATION = Mutation(None)
