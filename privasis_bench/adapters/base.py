"""The adapter contract: what every model back-end receives and returns.

An adapter turns one :class:`ChatRequest` into one :class:`ChatResult`. Adapters never retry,
cache or pace themselves: the execution engine (``privasis_bench.engine.executor``) owns that, for the
model under test and the judge alike.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from privasis_bench.data.records import Record

#: How a call that failed because every answer was cut at the token budget begins its error message.
CUT_ANSWER = "answer cut at the token budget"


def is_cut_failure(error: str | None) -> bool:
    """True for a failed call whose answers were all cut at the token budget (a budget problem, not a server one)."""
    return bool(error) and CUT_ANSWER in str(error)



@dataclass(frozen=True)
class ChatRequest:
    """One chat call: messages plus generation settings.

    ``record`` is context for baselines that need the gold record (identity, reference,
    mask-targets); it is not part of the cache key.
    """

    messages: tuple[tuple[str, str], ...]  # (role, content) pairs
    max_tokens: int
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    record: "Record | None" = field(default=None, compare=False, repr=False)
    #: Sampling seed of this draw. Set by recipe steps that sample (T > 0) so that two draws of the same prompt
    #: are two requests (two cache entries); None (every protocol call) leaves the backend's default.
    seed: int | None = None
    #: A grammar (llama.cpp's GBNF) the answer must follow, for a caller that reads answers of one fixed form; only an
    #: adapter whose ``constrains`` is True may be sent one (the engine fails the call otherwise). None: free text.
    grammar: str | None = None

    @classmethod
    def user(cls, content: str, *, max_tokens: int, temperature: float = 0.0, record: "Record | None" = None,
             seed: int | None = None, grammar: str | None = None) -> "ChatRequest":
        """A single user message with no system prompt (how every protocol call is made)."""
        return cls(messages=(("user", content),), max_tokens=max_tokens, temperature=temperature, record=record, seed=seed,
                   grammar=grammar)

    def as_openai_messages(self) -> list[dict[str, str]]:
        return [{"role": role, "content": content} for role, content in self.messages]

    def generation_settings(self) -> dict[str, Any]:
        """max_tokens, temperature, stop, and the seed and grammar when set (absent otherwise: old cache keys hold)."""
        settings: dict[str, Any] = {"max_tokens": self.max_tokens, "temperature": self.temperature, "stop": list(self.stop)}
        if self.seed is not None:
            settings["seed"] = self.seed
        if self.grammar is not None:
            settings["grammar"] = self.grammar
        return settings

    def cache_key(self, spec_key: str) -> str:
        """Canonical sha256 over (model spec, messages, generation settings)."""
        payload = {"spec": spec_key, "messages": [list(m) for m in self.messages], "gen": self.generation_settings()}
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def prompt_hash(self) -> str:
        """sha256 of the messages only (identifies the prompt independent of the model)."""
        blob = json.dumps([list(m) for m in self.messages], ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass
class Usage:
    """Token usage of one call, or summed over many."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: "Usage") -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}


@dataclass
class ChatResult:
    """The outcome of one call after the engine's retries.

    ``text`` is None exactly when the call failed; ``error`` then says why. An empty string is a
    real (empty) model output, distinct from a failure.
    """

    text: str | None
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    cached: bool = False
    attempts: int = 1
    #: Character spans of the request's record text that a masking system replaced, when it knows them
    #: (regex-scrubber, presidio); None for systems that rewrite freely (span scorers then align the text).
    spans: list[tuple[int, int]] | None = None
    #: What the system wrote in place of each of ``spans`` (same order), when it says so (the de-identification
    #: tools: ``<PERSON>``, ``****``, a synthetic name); None when unknown.
    replacements: list[str] | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.text is not None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "text": self.text,
            "finish_reason": self.finish_reason,
            "usage": self.usage.to_dict(),
            "error": self.error,
            "cached": self.cached,
            "attempts": self.attempts,
        }
        if self.spans is not None:
            out["spans"] = [list(s) for s in self.spans]
        if self.replacements is not None:
            out["replacements"] = list(self.replacements)
        return out


class AdapterError(Exception):
    """A failed call. ``retryable`` tells the engine whether trying again can help.

    ``retry_after`` (seconds) carries a server's Retry-After hint when it sent one; ``timeout`` says the
    call got no reply in time (the engine bounds how often those are retried and says so on the console);
    ``refused`` says nothing listens at the server's address (the engine stops at once unless the server has
    answered before or ``--wait-for-server`` asks it to wait).
    """

    def __init__(self, message: str, *, retryable: bool, status: int | None = None, retry_after: float | None = None,
                 timeout: bool = False, refused: bool = False):
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.timeout = timeout
        self.refused = refused  # the connection was refused: nothing listens at the address (yet)


class Adapter:
    """Base class of every model back-end.

    Subclasses set ``provider`` and implement :meth:`agenerate` (async, one request) or, for
    in-process engines that batch, :meth:`generate_batch`. Errors are raised as
    :class:`AdapterError` (or any exception, treated as retryable by the engine).
    """

    provider: ClassVar[str] = ""
    #: False for baselines that read gold labels (mask-targets, reference): never ranked.
    rankable: ClassVar[bool] = True
    #: True for a masking system that reports the character spans it replaced (a span masker): only then does a
    #: span-scored task's verifier take reported spans (checked against the output text) instead of aligning.
    reports_spans: ClassVar[bool] = False
    #: True when the back-end can hold an answer to a request's ``grammar`` (llama.cpp, in process or as a server).
    constrains: ClassVar[bool] = False
    #: True for in-process engines: the engine calls generate_batch in chunks instead of agenerate.
    batched: ClassVar[bool] = False
    #: A batched adapter that answers the requests of a batch one after another (no speed-up from larger
    #: batches): the engine hands it one request at a time, so each answer is cached the moment it exists.
    sequential: ClassVar[bool] = False
    #: True for deterministic local baselines: results are not worth caching.
    cacheable: ClassVar[bool] = True
    #: True for rule-based baselines whose answer is final by construction (an empty one is their real answer):
    #: the engine's empty/cut answer policy does not apply. A model that is merely not cached (``hf:`` on a local
    #: directory) keeps the policy, so every model adapter treats a cut answer alike.
    deterministic: ClassVar[bool] = False
    #: Name of the pip extra that provides this adapter's dependencies, if any.
    extra: ClassVar[str | None] = None
    #: One sentence a board can show about what kind of system this is (instruction-blind, rule-based, NER-based);
    #: empty for model back-ends. Read through ``registry.board_descriptions()``.
    description: ClassVar[str] = ""
    #: Why this system is a degenerate end point rather than a real system (it deletes everything, it changes
    #: nothing); a board lists such entries apart with this reason and never ranks them. Empty for real systems.
    degenerate: ClassVar[str] = ""

    def __init__(self, model: str, **args: Any) -> None:
        self.model = model
        self.args = args

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        """Run one request; raise AdapterError on failure."""
        raise NotImplementedError

    def generate_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """Run several requests in-process (only for ``batched`` adapters)."""
        raise NotImplementedError

    def interrupt(self) -> None:
        """Stop in-process work as soon as possible (called from another thread on Ctrl-C); default: nothing."""

    async def aclose(self) -> None:
        """Release clients/servers; called once when the engine is done."""
