"""Finished runs as flat tables and as the Hugging Face Hub's eval-results entries.

* :func:`metric_rows`: one row per run x task x metric (value, interval bounds, unit, judge, preset, counts), the
  table a data scientist loads into pandas; :func:`record_rows`: one row per scored record (the samples file's
  scalar fields, nested ones as JSON text).
* :func:`hub_entries`: the ``.eval_results/<variant>.yaml`` entries for a model repository (one value per task: the
  family's headline metric), built with ``huggingface_hub``'s own ``EvalResultEntry`` and written with its
  ``eval_result_entries_to_yaml``; everything the format has no field for goes to ``notes``.

Only finished runs are exported; the family of a run (and so its headline metric) comes from the task-family
registry, never from a list here.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from privasis_bench.errors import PrivasisError
from privasis_bench.results.files import RESULTS_NAME, SAMPLES_NAME
from privasis_bench.tasks.family import FAMILIES, family_name


class ExportError(PrivasisError):
    """A run cannot be exported (unfinished, unreadable, or missing what the format needs)."""


@dataclass(frozen=True)
class TaskRun:
    """One finished task of a run: its directory and parsed results.json."""

    directory: Path
    results: dict[str, Any]

    @property
    def family(self) -> str:
        """The task family the results name (``scorer.name``; the default family when none)."""
        return family_name(self.results)

    @property
    def task(self) -> str:
        """The task's name."""
        return str((self.results.get("task") or {}).get("name") or self.directory.name)


def find_task_runs(path: str | Path) -> list[TaskRun]:
    """Every task directory (holding results.json) at ``path`` or up to two levels below it, sorted by path."""
    root = Path(path)
    if not root.exists():
        raise ExportError(f"{root}: no such run directory")
    found = sorted({p.parent for pattern in (RESULTS_NAME, f"*/{RESULTS_NAME}", f"*/*/{RESULTS_NAME}")
                    for p in root.glob(pattern)})
    if not found:
        raise ExportError(f"{root}: no {RESULTS_NAME} here or up to two levels below (is it a run directory?)")
    runs = []
    for directory in found:
        file = directory / RESULTS_NAME
        try:
            results = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ExportError(f"{file}: cannot read ({exc})") from None
        if not isinstance(results, dict):
            raise ExportError(f"{file}: not a JSON object")
        runs.append(TaskRun(directory, results))
    return runs


def require_finished(run: TaskRun) -> None:
    """Refuse a run whose results say it is not complete."""
    if run.results.get("complete") is not True:
        raise ExportError(f"{run.directory / RESULTS_NAME}: complete is not true: only finished runs are exported "
                          "(re-run the same command to finish it)")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def metric_values(results: dict[str, Any]) -> dict[str, tuple[float, float | None, float | None]]:
    """Every metric of a results file with its interval: ``{name: (value, low, high)}``.

    Values sit at the top of ``metrics`` or under ``metrics.headline``, intervals under ``metrics.ci``. A metric is
    a number with an interval, a headline number, or a column of the family's board (counts such as
    ``scored_documents`` are not metrics).
    """
    metrics = results.get("metrics") if isinstance(results.get("metrics"), dict) else {}
    intervals = metrics.get("ci") if isinstance(metrics.get("ci"), dict) else {}
    headline = metrics.get("headline") if isinstance(metrics.get("headline"), dict) else {}
    family = family_name(results)
    columns = {key for key, _ in FAMILIES.get(family).board.columns} if family in FAMILIES else set()
    values: dict[str, Any] = {k: v for k, v in metrics.items()
                              if _number(v) is not None and (k in intervals or k in columns)}
    values.update({k: v for k, v in headline.items() if _number(v) is not None})
    out: dict[str, tuple[float, float | None, float | None]] = {}
    for name, value in values.items():
        ci = intervals.get(name) if isinstance(intervals.get(name), dict) else {}
        out[name] = (float(value), _number(ci.get("low")), _number(ci.get("high")))
    return out


def _label(part: Any) -> str | None:
    return str(part.get("label") or part.get("key")) if isinstance(part, dict) and (part.get("label") or part.get("key")) else None


def graders(results: dict[str, Any]) -> str | None:
    """Who graded the outputs: the judge, else every recorded role but the model under test (SPIA's adversary and
    matcher: ``adversary=..., matcher=...``); None when no model graded them (span measures, retrieval attacks)."""
    judge = _label(results.get("judge"))
    roles = results.get("roles") if isinstance(results.get("roles"), dict) else {}
    named = [f"{role}={_label(spec)}" for role, spec in sorted(roles.items()) if role != "model" and _label(spec)]
    return judge or ", ".join(named) or None


def run_facts(run: TaskRun) -> dict[str, Any]:
    """The facts every exported row of one task run repeats (model, task, family, judge, preset, dataset); ``judge``
    names whoever graded the outputs (:func:`graders`)."""
    r = run.results
    dataset = r.get("dataset") if isinstance(r.get("dataset"), dict) else {}
    counts = r.get("counts") if isinstance(r.get("counts"), dict) else {}
    return {
        "model": _label(r.get("model")), "task": run.task, "task_version": (r.get("task") or {}).get("version"),
        "family": run.family, "judge": graders(r), "scoring_preset": r.get("scoring_preset"),
        "complete": r.get("complete") is True, "records_scored": counts.get("scored"),
        "dataset_id": dataset.get("path") or dataset.get("name"), "dataset_revision": dataset.get("revision"),
        "harness_version": (r.get("harness") or {}).get("version"), "finished": (r.get("timestamps") or {}).get("finished"),
    }


def metric_rows(runs: list[TaskRun]) -> list[dict[str, Any]]:
    """One row per task run x metric, with interval bounds and the run's facts."""
    rows = []
    for run in runs:
        facts = run_facts(run)
        unit = (run.results.get("metrics") or {}).get("unit") or "fraction"
        for name, (value, low, high) in sorted(metric_values(run.results).items()):
            rows.append({**facts, "metric": name, "value": value, "ci_low": low, "ci_high": high, "unit": unit})
    return rows


def _cell(value: Any) -> Any:
    return value if value is None or isinstance(value, (str, int, float, bool)) else json.dumps(value, sort_keys=True)


def record_rows(runs: list[TaskRun]) -> Iterator[dict[str, Any]]:
    """One row per samples.jsonl line of every task run (scalars as they are, nested values as JSON text)."""
    for run in runs:
        facts = {k: v for k, v in run_facts(run).items() if k in ("model", "task", "family", "judge")}
        file = run.directory / SAMPLES_NAME
        if not file.exists():
            raise ExportError(f"{file}: missing (per-record export reads it)")
        with file.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ExportError(f"{file}:{number}: not valid JSON ({exc.msg})") from None
                if not isinstance(row, dict):
                    raise ExportError(f"{file}:{number}: not a JSON object")
                yield {**facts, **{f"record.{k}": _cell(v) for k, v in row.items()}}


def headline_metric(run: TaskRun) -> str:
    """The family's headline metric (the first key its board ranks by)."""
    return FAMILIES.get(run.family).board.rank_key


def variant_name(run: TaskRun) -> str:
    """The eval-results file a run belongs in: one per judge and preset, never mixed."""
    judge = run_facts(run)["judge"] or "no-judge"
    preset = run.results.get("scoring_preset") or "harness-defaults"
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in f"privasis-bench_{judge}_{preset}")
    return safe.strip("-")[:120]


def _notes(run: TaskRun, headline: str) -> str:
    facts = run_facts(run)
    values = metric_values(run.results)
    value, low, high = values[headline]
    parts = [f"privasis-bench {facts['harness_version']}", f"task {facts['task']} v{facts['task_version']}",
             f"value: {headline}"]
    if low is not None and high is not None:
        conf = ((run.results.get("metrics") or {}).get("bootstrap") or {}).get("confidence", 0.95)
        parts.append(f"{round(conf * 100)}% bootstrap interval [{low:.4g}, {high:.4g}]")
    parts.append(f"judge: {facts['judge']}" if facts["judge"] else "no judge model")
    parts.append("scoring: the paper's preset" if facts["scoring_preset"] == "paper"
                 else "scoring: harness defaults, not the paper's exact preset")
    parts.append(f"records scored: {facts['records_scored']}")
    others = [f"{k}={v:.4g}" for k, (v, _, _) in sorted(values.items()) if k != headline]
    if others:
        parts.append("other metrics: " + ", ".join(others))
    return "; ".join(parts)


def hub_entries(runs: list[TaskRun], *, source_url: str | None = None, source_name: str | None = None,
                dataset_ids: dict[str, str] | None = None) -> dict[str, list[Any]]:
    """The Hub eval-results entries per variant file name (see :func:`variant_name`), finished runs only.

    ``dataset_ids`` maps a task to a benchmark dataset id where the run read local files (the Hub needs one).
    """
    from huggingface_hub import EvalResultEntry

    files: dict[str, list[Any]] = {}
    for run in runs:
        require_finished(run)
        facts = run_facts(run)
        dataset_id = (dataset_ids or {}).get(run.task) or facts["dataset_id"]
        if not dataset_id:
            raise ExportError(f"{run.directory / RESULTS_NAME}: task {run.task} read local files, so it has no Hub "
                              f"dataset id: pass --dataset-id {run.task}=OWNER/NAME to name the benchmark dataset")
        headline = headline_metric(run)
        if headline not in metric_values(run.results):
            raise ExportError(f"{run.directory / RESULTS_NAME}: metrics.{headline} (the family's headline) is missing")
        entry = EvalResultEntry(
            dataset_id=str(dataset_id), task_id=run.task, value=metric_values(run.results)[headline][0],
            dataset_revision=facts["dataset_revision"], date=facts["finished"], source_url=source_url,
            source_name=source_name if source_url else None, notes=_notes(run, headline))
        files.setdefault(variant_name(run), []).append(entry)
    return files


def hub_yaml(entries: list[Any]) -> str:
    """The YAML text of one eval-results file, checked by parsing it back with ``huggingface_hub``'s parser."""
    import yaml
    from huggingface_hub import eval_result_entries_to_yaml, parse_eval_result_entries

    text = yaml.safe_dump(eval_result_entries_to_yaml(entries), sort_keys=False, allow_unicode=True)
    back = parse_eval_result_entries(yaml.safe_load(text))
    if [vars(e) for e in back] != [vars(e) for e in entries]:
        raise ExportError("the eval-results YAML does not parse back to the same entries (please report this)")
    return text
