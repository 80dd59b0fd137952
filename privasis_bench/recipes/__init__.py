"""Data recipes: synthesize Privasis-style records, build a sanitization corpus, and the ``decomp:`` sanitizer.

:mod:`config` (the recipe YAML schema, under the top-level ``tasks/recipes/``), :mod:`steps` (calling a model
for one step over a batch of rows), :mod:`store` (resumable JSONL outputs), :mod:`chunking`, :mod:`targets`
(sensitivity weights, target and keep selection), :mod:`decompose` (spans, strategies, chunk rewrites),
:mod:`corpus` (``build-corpus``), :mod:`synthesis` + :mod:`seeds` + :mod:`diversity` (``generate``), :mod:`drivers` (the
resumable loops behind both commands) and
:mod:`decomp_adapter` (the ``decomp:<spec>`` model provider).

Every step is a function over a batch of rows with no global state; every model call goes through an
:class:`~privasis_bench.engine.executor.Engine`.

May import: ``privasis_bench.errors``, ``data``, ``tasks``, ``adapters``, ``engine`` and ``protocol`` (the
judge that labels corpus rows vanilla or hard). Never the pipeline, results or the CLI. Optional third-party
packages (sentence-transformers, vendi-score, rapidfuzz, rouge-score: the ``[recipes]`` extra) are imported
only inside the functions that use them.
"""
