"""Waiting for a request another process is already paying for (several runs sharing one response cache).

Before a call, the engine claims the request's cache key (:meth:`ResponseCache.claim`). If another live process
holds the claim, the engine polls the cache until that process stores the answer (then it is a cache hit, paid
once) or gives the claim up without one (failed call, process killed): then this engine claims it and calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from privasis_bench.adapters.base import ChatResult
from privasis_bench.engine.cache import ResponseCache

#: First and longest pause between two looks at the cache while another process holds a claim.
POLL_S, MAX_POLL_S = 0.05, 0.5


async def claim_or_wait(cache: ResponseCache, key: str, usable: Callable[[ChatResult | None], ChatResult | None],
                        stop: asyncio.Event) -> ChatResult | None:
    """None when the key is ours to call (claimed, or the run is stopping); else the answer another process stored.

    ``usable`` turns a cache lookup into an acceptable answer or None.
    """
    delay = POLL_S
    while not stop.is_set():
        if cache.claim(key):
            hit = usable(cache.get(key))  # answered between our first lookup and the claim
            if hit is not None:
                cache.release(key)
            return hit
        await asyncio.sleep(delay)
        delay = min(MAX_POLL_S, delay * 2)
        hit = usable(cache.get(key))
        if hit is not None:
            return hit
    return None
