"""Every Eval Ever (EEE) records from a finished task run: one aggregate record and its per-instance sidecar.

The aggregate record (``<uuid>.json``) holds one evaluation result per metric, with its bootstrap interval and, for
a family whose outputs models graded (a judge; SPIA's adversary and matcher), each grader's model information and
every real prompt template (read back and checked against the sha256 the run recorded; the family says which, see
``FamilySpec.graders``). The sidecar (``<uuid>_samples.jsonl``) holds one instance per scored
record, with the family's own per-record outcome; its sha256 and row count are written into the aggregate record.
Files are laid out as EEE's datastore expects: ``data/<benchmark>/<developer>/<model>/<uuid>.json``.

The ``every-eval-ever`` package needs Python 3.12, newer than this project's floor, so it is not imported here:
``privasis_bench/results/eee_check.py`` is run with a Python that has it, to validate and read the files back.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from privasis_bench.results.export import ExportError, TaskRun, headline_metric, metric_values, run_facts
from privasis_bench.tasks.family import FAMILIES
from privasis_bench.tasks.paths import is_shipped_ref
from privasis_bench.tasks.templates import TemplateMismatch, recorded_template

SCHEMA_VERSION = "0.3.0"  # every-eval-ever 0.3.0's schema
RELATIONSHIPS = ("first_party", "third_party", "collaborative", "other")
LOCAL_PROVIDERS = {"llamacpp", "vllm", "hf", "transformers", "identity", "empty", "regex-scrubber", "presidio",
                   "scrubadub", "spacy-ner", "datafog", "intact"}


class ForeignPrompt(ExportError):
    """A grader's prompt template is a file of the run's own where only shipped templates may be read."""


@dataclass(frozen=True)
class EEERecord:
    """One task run as EEE files: the aggregate record, the instance rows and where each goes."""

    aggregate: dict[str, Any]
    instances: list[dict[str, Any]]
    aggregate_path: str  # repository-relative, data/...
    instances_path: str


def _component(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "unknown"


def _uuid(*parts: str) -> str:
    """A version-4-shaped UUID derived from ``parts`` (the same run exports to the same file name)."""
    digest = bytearray(hashlib.sha256("\x1f".join(parts).encode()).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x40
    digest[8] = (digest[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(digest)))


def _strings(mapping: dict[str, Any]) -> dict[str, str]:
    return {k: v if isinstance(v, str) else json.dumps(v, sort_keys=True) for k, v in mapping.items() if v is not None}


def _model_info(part: dict[str, Any], model_id: str | None, availability: str) -> dict[str, Any]:
    spec = part.get("spec") if isinstance(part.get("spec"), dict) else {}
    if not spec and ":" in str(part.get("key") or ""):  # a role recorded by its ``provider:model[,args]`` key only
        provider, _, model = str(part["key"]).partition(",")[0].partition(":")  # (SPIA's adversary and matcher)
        spec = {"provider": provider.strip(), "model": model.strip()}
    provider = str(spec.get("provider") or "")
    name = str(part.get("label") or part.get("key") or "unknown")
    return {
        "name": name, "id": model_id or f"{_component(provider or 'unknown')}/{_component(str(spec.get('model') or name))}",
        "inference_platform": provider or None,
        "additional_details": _strings({
            "deployment_type": "self_deployed" if provider in LOCAL_PROVIDERS else "externally_managed" if provider else "unknown",
            "model_availability": availability, "privasis_bench_spec": part.get("key")}),
    }


def llm_scoring(run: TaskRun, *, shipped_prompts_only: bool = False) -> dict[str, Any] | None:
    """EEE's ``llm_scoring`` for a run its family says models graded (``FamilySpec.graders``): each grader's model
    information and temperature, and the real text of every prompt template, by role, read back and checked against
    the sha256 the run recorded (``shipped_prompts_only``: a template that is not a shipped file is refused unread,
    as the board needs for files a submission names); None when no model graded the run."""
    family = FAMILIES.get(run.family)
    graders = family.call("graders", run.results) if family.graders else []
    if not graders:
        return None
    parts = []
    for grader in graders:
        for name, (source, sha256) in grader.templates.items():
            what = f"{grader.role} template {name}"
            if shipped_prompts_only and not is_shipped_ref(source):
                raise ForeignPrompt(f"{what}: {source or 'no source'} is not a shipped template (the board reads only "
                                    "the harness's own prompts)")
            try:
                parts.append(f"### {grader.role}: {name}\n{recorded_template(what, source, sha256)}")
            except TemplateMismatch as exc:
                raise ExportError(f"{exc}; EEE needs the real prompt of every model that graded the run") from None
    judges = [{k: v for k, v in {"model_info": _model_info(dict(g.model), None, "unknown"),
                                 "temperature": g.temperature}.items() if v is not None} for g in graders]
    details = {("" if len(graders) == 1 else f"{g.role}_") + key: value for g in graders for key, value in g.details.items()}
    return {"judges": judges, "input_prompt": "\n\n".join(parts), "additional_details": _strings(details)}


def _source_data(run: TaskRun, facts: dict[str, Any]) -> dict[str, Any]:
    dataset = run.results.get("dataset") if isinstance(run.results.get("dataset"), dict) else {}
    details = _strings({"ids_hash": dataset.get("ids_hash"), "revision": dataset.get("revision"),
                        "config": dataset.get("name"), "source": dataset.get("source")})
    if facts["dataset_id"]:
        return {"dataset_name": run.task, "source_type": "hf_dataset", "hf_repo": str(facts["dataset_id"]),
                "hf_split": str(dataset.get("split") or "test"), "samples_number": facts["records_scored"],
                "additional_details": details}
    return {"dataset_name": run.task, "source_type": "other", "additional_details": details}


def eee_record(run: TaskRun, *, relationship: str, organization: str, model_id: str | None = None,
               availability: str = "unknown", retrieved: int, shipped_prompts_only: bool = False) -> EEERecord:
    """The EEE files of one finished task run (see the module docstring; ``shipped_prompts_only``: see
    :func:`llm_scoring`)."""
    if relationship not in RELATIONSHIPS:
        raise ExportError(f"--evaluator-relationship {relationship!r}: choose one of {', '.join(RELATIONSHIPS)}")
    family = FAMILIES.get(run.family)
    facts, results = run_facts(run), run.results
    model = results.get("model") if isinstance(results.get("model"), dict) else {}
    info = _model_info(model, model_id, availability)
    benchmark = _component(f"privasis-bench_{run.task}")
    developer, _, name = info["id"].partition("/")
    record_id = _uuid(run.task, info["id"], str(facts["finished"]), json.dumps(results.get("task"), sort_keys=True))
    base = f"data/{benchmark}/{_component(developer)}/{_component(name or developer)}/{record_id}"
    evaluation_id = f"{benchmark}/{info['id']}/{retrieved}"
    scoring = llm_scoring(run, shipped_prompts_only=shipped_prompts_only)
    boot = (results.get("metrics") or {}).get("bootstrap") or {}
    percent = (results.get("metrics") or {}).get("unit") == "percent"
    order = dict(family.board.rank_by)
    headers = dict(family.board.columns)
    headline = headline_metric(run)
    evaluation_results = []
    for metric, (value, low, high) in sorted(metric_values(results).items()):
        uncertainty: dict[str, Any] = {"num_samples": facts["records_scored"]}
        if low is not None and high is not None:
            uncertainty["confidence_interval"] = {"lower": low, "upper": high,
                                                  "confidence_level": float(boot.get("confidence", 0.95)),
                                                  "method": "percentile bootstrap"}
            uncertainty["num_bootstrap_samples"] = int(boot.get("samples", 0)) or None
        config = {"evaluation_description": f"{family.title}: {headers.get(metric, metric)}",
                  "metric_id": f"privasis_bench.{run.family}.{metric}", "metric_name": headers.get(metric, metric),
                  "metric_kind": "rate", "metric_unit": "percent" if percent else "proportion",
                  "lower_is_better": order.get(metric) == "lower", "score_type": "continuous",
                  "min_score": 0.0, "max_score": 100.0 if percent else 1.0}
        if scoring:
            config["llm_scoring"] = scoring
        evaluation_results.append({
            "evaluation_result_id": f"{run.task}/{metric}", "evaluation_name": run.task,
            "source_data": _source_data(run, facts), "evaluation_timestamp": facts["finished"],
            "metric_config": config,
            "score_details": {"score": value, "uncertainty": {k: v for k, v in uncertainty.items() if v is not None},
                              "details": _strings({"headline": str(metric == headline), "scoring_preset": facts["scoring_preset"] or "harness-defaults"})},
            "generation_config": {"generation_args": {k: v for k, v in (model.get("generation") or {}).items()
                                                      if k in ("temperature", "max_tokens")},
                                  "additional_details": _strings({"testee_prompt": results.get("testee_prompt")})},
        })
    instances = list(_instances(run, family, evaluation_id, info["id"], headline))
    body = "".join(json.dumps(i, ensure_ascii=False, sort_keys=True) + "\n" for i in instances)
    aggregate = {
        "schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id, "evaluation_timestamp": facts["finished"],
        "retrieved_timestamp": str(retrieved),
        "source_metadata": {"source_name": "privasis-bench", "source_type": "evaluation_run",
                            "source_organization_name": organization, "evaluator_relationship": relationship,
                            "additional_details": _strings({"harness_git_revision": (results.get("harness") or {}).get("git_revision")})},
        "eval_library": {"name": "privasis-bench", "version": str(facts["harness_version"] or "unknown")},
        "model_info": info, "evaluation_results": evaluation_results,
        "detailed_evaluation_results": {"format": "jsonl", "file_path": f"{base}_samples.jsonl", "hash_algorithm": "sha256",
                                        "checksum": hashlib.sha256(body.encode("utf-8")).hexdigest(),
                                        "total_rows": len(instances)},
    }
    return EEERecord(aggregate, instances, f"{base}.json", f"{base}_samples.jsonl")


def _instances(run: TaskRun, family: Any, evaluation_id: str, model_id: str, headline: str):
    outcome = family.load("record_outcome") if family.record_outcome else None
    file = run.directory / "samples.jsonl"
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        result = outcome(row) if outcome else None
        if result is None:
            continue
        score, correct = result
        output = row.get("output")
        sample_id = str(row.get("record_id") or row.get("id") or number)
        yield {
            "schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id, "model_id": model_id,
            "evaluation_name": run.task, "evaluation_result_id": f"{run.task}/{headline}", "sample_id": sample_id,
            "sample_hash": None, "interaction_type": "single_turn",
            "input": {"raw": f"{run.task} record {sample_id} (the text is in the benchmark data)", "reference": []},
            "output": {"raw": [output if isinstance(output, str) else ""]},
            "answer_attribution": [{"turn_idx": 0, "source": "output.raw", "extracted_value": "whole output",
                                    "extraction_method": "custom", "is_terminal": True}],
            "evaluation": {"score": float(score), "is_correct": bool(correct)},
            "metadata": {"family": run.family, "status": str(row.get("status", ""))},
        }


def write_record(record: EEERecord, root: Path) -> list[Path]:
    """Write both files of ``record`` under ``root`` (the datastore's parent); the paths written."""
    written = []
    for rel, text in ((record.instances_path, "".join(json.dumps(i, ensure_ascii=False, sort_keys=True) + "\n"
                                                       for i in record.instances)),
                      (record.aggregate_path, json.dumps(record.aggregate, ensure_ascii=False, indent=2) + "\n")):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
