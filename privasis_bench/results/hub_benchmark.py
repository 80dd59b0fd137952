"""The ``eval.yaml`` a benchmark dataset's owner adds to its Hub repository to declare it a benchmark.

The Hub reads ``name``, ``description``, ``evaluation_framework`` (one of the frameworks it lists: ``inspect-ai`` is
one; lm-evaluation-harness is not) and ``tasks`` (each with an ``id``, and optionally ``config``, ``split`` and, for
inspect-ai, ``field_spec``, ``solvers``, ``scorers``). :class:`BenchmarkFile` is that field list, strict: an unknown
key or a missing required one is refused before the file is written. :func:`privasis_zero_eval_yaml` builds the file
for Privasis-Zero from the shipped task YAMLs, pointing at privasis-bench's inspect tasks.
"""

from __future__ import annotations

from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from privasis_bench.tasks.registry import load_task

#: Evaluation frameworks the Hub accepts in eval.yaml (as listed in its documentation on 2026-08).
HUB_FRAMEWORKS = ("inspect-ai", "nemo-evaluator")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BenchmarkTask(_Strict):
    """One task of a benchmark dataset."""

    id: str = Field(min_length=1)
    config: str | None = None
    split: str = "test"
    field_spec: dict[str, Any] | None = None
    solvers: list[dict[str, Any]] | None = None
    scorers: list[dict[str, Any]] | None = None


class BenchmarkFile(_Strict):
    """The whole eval.yaml."""

    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    evaluation_framework: Literal[HUB_FRAMEWORKS]  # type: ignore[valid-type]
    tasks: list[BenchmarkTask] = Field(min_length=1)


def privasis_zero_eval_yaml(task_names: tuple[str, ...] = ("privasis_vanilla", "privasis_hard")) -> str:
    """The eval.yaml for ``nvidia/Privasis-Zero``: its vanilla and hard test sets as inspect-ai tasks."""
    tasks = []
    for name in task_names:
        task = load_task(name)
        tasks.append(BenchmarkTask(
            id=name, config=task.dataset.name, split=task.dataset.split or "test",
            field_spec={"id": "id", "input": "original_record",
                        "metadata": ["record_type", "base_instruction", "smoothed_instruction", "attributes_to_drop",
                                     "attributes_to_abstract", "attributes_to_keep", "grouped_annotated_attributes"]},
            solvers=[{"name": f"privasis_bench/{name}", "package": "privasis-bench",
                      "args": {"preset": "paper"}}],
            scorers=[{"name": "privasis_bench/privasis_judge", "roles": {"grader": task.judge.model},
                      "metric": "full_successful_record"}]))
    spec = BenchmarkFile(
        name="Privasis-Zero",
        description=("Instruction-following text sanitization: a model rewrites a private record following a user's "
                     "instruction (drop, generalize, keep); a three-tier leak judge and a retention check score every "
                     "target attribute. Headline: Full Successful Record (%). Scored with privasis-bench."),
        evaluation_framework="inspect-ai", tasks=tasks)
    return yaml.safe_dump(spec.model_dump(exclude_none=True), sort_keys=False, allow_unicode=True, width=100)


def check_eval_yaml(text: str) -> BenchmarkFile:
    """Parse an eval.yaml against the Hub's field list (pydantic's error names the field)."""
    return BenchmarkFile.model_validate(yaml.safe_load(text))
