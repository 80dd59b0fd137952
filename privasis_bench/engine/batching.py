"""``--batch ROLE`` (model, judge, or any role a task family declares): an engine whose calls go through provider batch APIs.

:func:`attach_batching` is the one hook: it checks, once and at start, that the provider offers batches (one clear
line otherwise), then puts a :class:`BatchedAdapter` in front of the engine's adapter. Everything the engine owns
still applies per request (the response cache, one call for identical requests, claims in a shared cache, the
answer policy, retries, secrets removed); only the call itself waits for a batch. The engine's concurrency is
raised to what the batches can hold, and its per-call timeout and pacing are off (a batch may take hours).
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Any

from privasis_bench.adapters.base import Adapter, ChatRequest, ChatResult, Usage
from privasis_bench.adapters.batch_api import BatchClient, BatchUnsupported
from privasis_bench.adapters.spec import SECRET_ARGS
from privasis_bench.engine.answers import configured_secrets, redact
from privasis_bench.engine.batch_broker import BatchBroker, BatchOptions
from privasis_bench.engine.batch_store import BatchStore, abandon_batches, pending_batches
from privasis_bench.engine.calls import copy_result
from privasis_bench.errors import PrivasisError
from privasis_bench.registry import Registry

if TYPE_CHECKING:
    from privasis_bench.engine.executor import Engine

#: Providers with a batch interface -> their batch client class (plugins: the ``privasis_bench.batch_clients`` group).
BATCH_CLIENTS: Registry[Any] = Registry("batch client", entry_point_group="privasis_bench.batch_clients")
BATCH_CLIENTS.register("openai", "privasis_bench.adapters.openai_batch:OpenAIBatchClient")
BATCH_CLIENTS.register("anthropic", "privasis_bench.adapters.anthropic_batch:AnthropicBatchClient")
_SECRET_ENV = re.compile(r"(API_KEY|_TOKEN|_SECRET|_PASSWORD)$")  # the environment names the engine also redacts


class BatchedAdapter(Adapter):
    """The engine's adapter with every call answered from a provider batch."""

    cacheable = True
    #: Read by ``engine.stats.usage_by_role``: what this engine pays is recorded as batched spend; and by the engine,
    #: which then leaves counting requests and tokens to the broker (a request counts when the provider accepted its
    #: batch, its tokens when the batch's answers are stored, once across a killed run and the run that resumes it).
    sent_in_batches = True

    def __init__(self, inner: Adapter, broker: BatchBroker) -> None:
        super().__init__(inner.model, **inner.args)
        self.inner, self.broker = inner, broker
        self.provider = inner.provider  # type: ignore[misc]
        self.constrains = inner.constrains  # type: ignore[misc]  # a grammar goes into the batched request as sent

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        """Wait for this request's answer from a batch."""
        return await self.broker.ask(request)

    def interrupt(self) -> None:
        """Ctrl-C: the wrapped adapter stops too (batches stop being created in the signal handler, see PAID)."""
        self.inner.interrupt()

    async def aclose(self) -> None:
        """Stop polling and release the provider client."""
        await self.broker.aclose()
        await self.inner.aclose()


def batch_client(adapter: Adapter) -> BatchClient:
    """The provider's batch client for an adapter (BatchUnsupported when it has none)."""
    if adapter.provider not in BATCH_CLIENTS:
        raise BatchUnsupported(
            f"--batch: provider {adapter.provider!r} has no batch interface; batches work with "
            f"{' and '.join(p + ':' for p in BATCH_CLIENTS)} models (and OpenAI-compatible base_url servers offering "
            "/v1/batches)")
    return BATCH_CLIENTS.get(adapter.provider)(adapter)


def attach_batching(engine: "Engine", options: BatchOptions, *, client: BatchClient | None = None) -> BatchBroker | None:
    """Route ``engine``'s calls through provider batches when its role is in ``options.roles``; the broker."""
    _pending_check(engine, options)
    if engine.role not in options.roles:
        return None
    client = client or batch_client(engine.adapter)
    if engine.cache is None:
        raise PrivasisError(f"--batch {engine.role}: batches need the response cache (it keeps the batches in flight "
                            "so that none is paid twice); drop --no-cache")
    client.check()
    secrets = configured_secrets(engine.spec.args, SECRET_ARGS, _SECRET_ENV)

    def keep(key: str, result: ChatResult) -> None:
        stored = copy_result(result)
        stored.text = redact(stored.text, secrets)
        engine.store_result(key, stored)

    def sent(requests: int) -> None:  # the engine counts no batched request itself (see BatchedAdapter)
        engine.stats.requests += requests

    def paid(usage: Usage) -> None:  # the engine counts no tokens of a batched call itself (see BatchedAdapter)
        engine.stats.usage.add(usage)

    note = _note if engine.progress else None
    broker = BatchBroker(client, BatchStore(engine.cache.path), spec_key=engine.spec_key, role=engine.role,
                         label=str(engine.spec), options=options, keep=keep, note=note, on_sent=sent,
                         retry=engine.retry, on_paid=paid)
    engine.adapter = BatchedAdapter(engine.adapter, broker)
    engine.concurrency = max(engine.concurrency, options.size * options.max_in_flight)
    engine.call_timeout, engine.rpm = None, None
    return broker


def _pending_check(engine: "Engine", options: BatchOptions) -> None:
    """Batches an earlier run submitted for this engine (``--batch-detach``, or a kill) are paid for: a run that would
    not collect them (no --batch for the role, or --no-cache) stops with one line saying how to collect or abandon
    them, instead of asking everything again live; ``--batch-abandon`` forgets them, saying so."""
    path = engine.cache.path if engine.cache is not None else options.cache_file
    pending = pending_batches(path, engine.spec_key, engine.role)
    if not pending:
        return
    if options.abandon:
        dropped = abandon_batches(path, engine.spec_key, engine.role)  # type: ignore[arg-type]
        _note(f"{engine.role} {engine.spec}: abandoned {dropped} batch(es) an earlier --batch run submitted (--batch-"
              "abandon); the provider bills them all the same, and their requests are asked again")
        return
    if engine.role in options.roles and engine.cache is not None:
        return  # collected by this run's broker
    why = "--no-cache" if engine.cache is None else f"no --batch {engine.role}"
    raise PrivasisError(
        f"{engine.role} {engine.spec}: {pending} batch(es) an earlier --batch run submitted (already paid for) are "
        f"still pending in the response cache, and this run ({why}) would ask their requests again; collect them by "
        f"running with --batch {engine.role} and the same cache, or pass --batch-abandon to drop them")


def _note(line: str) -> None:
    """One progress line on stderr (above a progress bar on a terminal)."""
    if sys.stderr.isatty() and sys.stdout.isatty():
        from tqdm.auto import tqdm

        tqdm.write(line, file=sys.stderr)
    else:
        print(line, file=sys.stderr, flush=True)


def batch_roles(values: list[str] | None, known: tuple[str, ...] = ("model", "judge")) -> frozenset[str]:
    """``--batch`` values checked: each is a role name in ``known`` (comma-separated or repeated)."""
    roles = {v.strip() for value in values or [] for v in value.split(",") if v.strip()}
    bad = sorted(roles - set(known))
    if bad:
        raise PrivasisError(f"--batch takes {' and/or '.join(known)}, not {', '.join(bad)}")
    return frozenset(roles)


def describe(broker: BatchBroker | None) -> dict[str, Any] | None:
    """The batch figures of one engine for results.json (None when it ran live)."""
    if broker is None:
        return None
    c = broker.counts
    return {"batches_submitted": c.submitted, "batches_completed": c.completed, "batches_recovered": c.recovered,
            "requests_batched": c.requests, "answers_from_batches": c.answered}
