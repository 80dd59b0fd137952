"""Execution machinery for model calls: concurrency, pacing, retries, the response cache and progress bars.

The model under test and the judge both call models through :class:`executor.Engine`; adapters make one call
and classify its errors, the engine owns everything around it. Nothing here knows the Privasis protocol.

May import: ``privasis_bench.errors`` and ``privasis_bench.adapters``. Never the protocol, pipeline, results or CLI.
"""
