"""lm-eval hooks for the privasis tasks.

lm-eval imports this file by path (``!function utils.<name>`` in the YAMLs). Everything of substance
lives in ``privasis_bench.interop.lmeval`` so that documents and prompts are built by the same code as
``privasis-bench sanitize``; privasis-bench must therefore be installed in lm-eval's Python environment.
"""

from __future__ import annotations

from typing import Any


def load_dataset(**kwargs: Any):
    """custom_dataset hook: a DatasetDict with one ``test`` split holding the task's documents.

    ``kwargs`` are the task's ``metadata`` merged with lm-eval's ``--metadata`` (and model args);
    see ``privasis_bench.interop.lmeval.build_docs`` for the keys that are honoured.
    """
    from privasis_bench.interop.lmeval import load_lmeval_dataset

    return load_lmeval_dataset(**kwargs)


def doc_to_text(doc: dict[str, Any]) -> str:
    """The single user message of the sanitization request (built by privasis-bench)."""
    return doc["prompt"]


def doc_to_target(doc: dict[str, Any]) -> str:
    """No target is shown to the model or compared against: the judge scores outputs later."""
    return ""


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """A plumbing metric only (is the output non-empty?); run `privasis-bench evaluate` to score."""
    from privasis_bench.interop.lmeval import nonempty_metric

    return nonempty_metric(doc, results)
