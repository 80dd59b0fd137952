"""What a run leaves behind and what can be done with it without calling a model.

:mod:`files` (``results.json`` + ``samples.jsonl``, atomic writes, loading), :mod:`rescore` (recompute every
metric from samples), :mod:`compare` (paired bootstrap of two runs), :mod:`tables` (console tables),
:mod:`agreement` (decision-level agreement and Cohen's kappa of two judgings of the same outputs).

May import: ``privasis_bench.errors``, ``data``, ``tasks`` and ``protocol``. Never the engine, the pipeline or the CLI.
"""
