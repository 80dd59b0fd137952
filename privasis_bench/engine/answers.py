"""Which answers the engine accepts, and keeping configured secrets out of every answer it hands on.

An HTTP 200 is not always an answer: a provider hiccup can return empty content, and a reasoning model can
spend its whole budget thinking (``finish_reason: length``) and return nothing or a cut-off text. By default
such answers are failures worth retrying. Empty answers are never stored in the response cache, so a later
run asks again; a cut-off answer is stored only when the policy accepts it as final (then a later run, e.g. a
second model reusing the judge's guesses on original records, reads the same answer). Deterministic local
baselines are exempt: their empty answer is their real answer.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from privasis_bench.adapters.base import CUT_ANSWER, ChatResult

Handling = Literal["retry", "accept"]
HANDLING: tuple[str, ...] = ("retry", "accept")
#: Configured secrets shorter than this are not searched for in answers (too likely to be ordinary words).
MIN_SECRET_CHARS = 8


@dataclass(frozen=True)
class AnswerPolicy:
    """How empty and truncated answers are treated.

    ``empty`` / ``truncated``: ``retry`` (a retryable failure: asked again, then recorded as a failed call)
    or ``accept`` (kept as the answer; a truncated one is counted). ``max_attempts`` bounds the tries spent
    on such answers for one request (each try is paid for, and at temperature 0 a cut-off answer tends to
    repeat).
    """

    empty: Handling = "retry"
    truncated: Handling = "retry"
    max_attempts: int = 3

    def __post_init__(self) -> None:
        if self.empty not in HANDLING or self.truncated not in HANDLING:
            raise ValueError(f"empty/truncated answers must be handled with one of {HANDLING}")
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")

    def problem(self, result: ChatResult) -> str | None:
        """Why this successful result is not acceptable as an answer, or None when it is."""
        if not result.ok:
            return None
        cut = result.finish_reason == "length"
        if self.empty == "retry" and not (result.text or "").strip():
            return "empty answer" + (" (the token budget ran out first: finish_reason length)" if cut else "")
        if self.truncated == "retry" and cut:
            return f"{CUT_ANSWER} (finish_reason length): raise the budget or accept such answers"
        return None

    def worth_caching(self, result: ChatResult) -> bool:
        """Non-empty answers, cut-off ones only when accepted: anything else is asked again by a later run."""
        if not result.ok or not (result.text or "").strip():
            return False
        return result.finish_reason != "length" or self.truncated == "accept"

    def to_dict(self) -> dict[str, Any]:
        return {"empty": self.empty, "truncated": self.truncated, "max_attempts": self.max_attempts}


ACCEPT_ALL = AnswerPolicy(empty="accept", truncated="accept")


def configured_secrets(args: Mapping[str, Any], secret_names: Iterable[str], env_pattern: Any) -> list[str]:
    """Secret values a run was given: secret model arguments, the variable named by ``api_key_env`` and
    every environment variable whose name looks like a key or token."""
    names = {n.lower() for n in secret_names}
    found = [str(v) for k, v in args.items() if k.lower() in names and v]
    env_name = args.get("api_key_env")
    if env_name and os.environ.get(str(env_name)):
        found.append(os.environ[str(env_name)])
    found += [v for k, v in os.environ.items() if env_pattern.search(k.upper()) and len(v) >= MIN_SECRET_CHARS]
    return sorted(set(found), key=len, reverse=True)  # longest first: a key containing another is removed whole


def redact(text: str | None, secrets: Iterable[str]) -> str | None:
    """``text`` with every configured secret value (at least :data:`MIN_SECRET_CHARS` long) replaced by ``***``."""
    if not text:
        return text
    for secret in secrets:
        if len(secret) >= MIN_SECRET_CHARS and secret in text:
            text = text.replace(secret, "***")
    return text


#: For recipe steps: each step has its own, deliberately small token budget and parses what it gets, so an answer
#: cut at the budget is kept (and counted) rather than asked again; an empty answer is still asked again.
RECIPE_STEPS = AnswerPolicy(empty="retry", truncated="accept")
