"""Interoperability with other harnesses: lm-evaluation-harness task files and reading its samples.

May import: ``privasis_bench.errors``, ``data``, ``tasks``, ``adapters`` (the request type) and ``protocol``
(the same testee prompt as ``sanitize``). Never the engine, pipeline, results or CLI.
"""
