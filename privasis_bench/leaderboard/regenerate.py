"""Reproduced outputs: re-run a submission's model on a seeded sample of its records and compare the outputs.

No re-judge can say which model wrote an entry's outputs; running the model again can. ``leaderboard verify
--regenerate K`` does it where the verifier can run the submitted model spec itself:

* **Which models.** A local llama.cpp model the harness pins by name (``llamacpp:smollm2``, ``llamacpp:gemma3-270m``:
  the GGUF file inside a pinned package) is run from the verifier's own copy, and the sha256 of that file is
  recorded with the outcome (:func:`model_file_sha256`). A ``.gguf`` path is run only when ``results.json`` records
  the file's sha256 (``model.file_sha256``) and the verifier's file at that path has it. Anything else (a hosted
  API, a plugin, a model file the verifier does not hold) is *not regenerated*: its outputs stay "as submitted".
* **Which records.** ``K`` records drawn with a seeded generator from the entry's records with a model output,
  in record-id order (:func:`sample_ids`), so the draw is repeatable and does not follow the rows' order.
* **Same request.** The task's own template and answer cue (an entry with a testee prompt of its own is not
  regenerated), the recorded instruction variant and the recorded generation settings (temperature, output budget).
* **Comparison rule.** Greedy decoding (temperature 0) of a local model is deterministic for one llama.cpp build
  and thread/slot setting (the in-process engine pins one thread and one slot): the regenerated output, cleaned by
  the protocol's post-processing, must equal the row's ``output`` exactly. Sampled decoding (temperature > 0) is not
  regenerated: there is no exact answer to compare with, and a similarity threshold would let a look-alike pass.

The outcome (:class:`Regeneration`) is "outputs reproduced (k/K)" when all K agree, else "outputs as submitted" with
the reason (not regenerable here, or which records differ); ``--regenerate-report FILE`` writes it per entry, and
the board marks entries from the committed report (:func:`board_mark`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from privasis_bench.errors import PrivasisError

#: The board-data name of the committed regeneration report (beside rejudge.json).
REPORT_NAME = "regenerate.json"
REPORT_FORMAT = "privasis-bench/regenerate-report/1"


@dataclass(frozen=True)
class Regeneration:
    """What regenerating one entry showed: how many of the drawn records came back the same."""

    entry: str
    asked: int = 0
    reproduced: int = 0
    seed: int | None = None
    model: str | None = None
    model_sha256: str | None = None
    rule: str | None = None
    reason: str | None = None  # why not regenerated, or which records differ
    differing: tuple[str, ...] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        """Every drawn record reproduced (and at least one drawn)."""
        return self.asked > 0 and self.reproduced == self.asked

    def mark(self) -> str:
        """The board's words for it."""
        return f"outputs reproduced ({self.reproduced}/{self.asked})" if self.passed else "outputs as submitted"

    def as_dict(self) -> dict[str, Any]:
        """The report form (every field, plus the mark)."""
        return {**asdict(self), "differing": list(self.differing), "mark": self.mark()}


def model_file_sha256(path: Path) -> str:
    """sha256 of a model file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def regenerable(results: Mapping[str, Any]) -> tuple[Path | None, str]:
    """(the model file the verifier would run, the comparison rule) or (None, why it cannot regenerate)."""
    model = results.get("model") if isinstance(results.get("model"), Mapping) else {}
    spec = model.get("spec") if isinstance(model.get("spec"), Mapping) else {}
    generation = model.get("generation") if isinstance(model.get("generation"), Mapping) else {}
    if spec.get("provider") != "llamacpp":
        return None, f"provider {str(spec.get('provider'))[:40]!r} is not a local model the verifier runs"
    if generation.get("temperature") not in (0, 0.0):
        return None, "sampled decoding (temperature > 0): no exact output to compare with"
    if testee_prompt_is_own(results):
        return None, "a testee prompt of the submission's own"
    from privasis_bench.adapters.llamacpp_adapter import NAMED_MODELS, resolve_model_path

    name = str(spec.get("model") or "")
    try:
        path = resolve_model_path(name)
    except PrivasisError as exc:
        return None, f"the verifier has no copy of llamacpp:{name[:60]} ({str(exc)[:120]})"
    if name not in NAMED_MODELS:
        claimed = model.get("file_sha256")
        if not isinstance(claimed, str) or claimed != model_file_sha256(path):
            return None, "a .gguf path without a recorded file_sha256 the verifier's file has"
    return path, "exact: greedy local decoding, output equal after the protocol's post-processing"


def testee_prompt_is_own(results: Mapping[str, Any]) -> bool:
    """True when the run's testee prompt is not the shipped one."""
    testee = results.get("testee_prompt")
    return isinstance(testee, Mapping) and testee.get("shipped") is False


def sample_ids(rows: list[Mapping[str, Any]], k: int, seed: int) -> list[str]:
    """``k`` record ids drawn (seeded, in id order) from the rows that hold a model output."""
    ids = sorted(_row_id(r) for r in rows
                 if r.get("status") != "excluded" and isinstance(r.get("output"), str) and not r.get("output_failed"))
    return sorted(random.Random(seed).sample(ids, min(k, len(ids))))


def regenerate_entry(entry: str, results: Mapping[str, Any], rows: list[Mapping[str, Any]], records: Mapping[str, Any],
                     task: Any, *, k: int, seed: int, build: Callable[[Any], Any] | None = None) -> Regeneration:
    """Regenerate ``k`` seeded records of one Privasis entry and compare (see the module docstring). ``records``:
    the task's records by id; ``build``: the adapter factory (the registry's by default)."""
    from privasis_bench.adapters.spec import ModelSpec
    from privasis_bench.protocol.testee import build_sanitize_request, postprocess_output

    path, rule = regenerable(results)
    if path is None:
        return Regeneration(entry, seed=seed, reason=rule)
    model = results["model"]
    spec = ModelSpec.parse(f"{model['spec']['provider']}:{model['spec']['model']}", model["spec"].get("args") or {})
    ids = [i for i in sample_ids(list(rows), k, seed) if i in records]
    by_id = {_row_id(r): r for r in rows}
    gen = model.get("generation") or {}
    requests = [build_sanitize_request(records[i], task, instruction=results.get("instruction"),
                                       max_tokens=gen.get("max_tokens"), temperature=gen.get("temperature"))
                for i in ids]
    if build is None:
        from privasis_bench.adapters.registry import build_adapter as build
    adapter = build(spec)
    texts = asyncio.run(_generate(adapter, requests))
    cue = task.prompt.answer_cue
    differing = tuple(i for i, text in zip(ids, texts)
                      if text is None or postprocess_output(text, cue) != by_id[i].get("output"))
    sha = model_file_sha256(path)
    return Regeneration(entry, asked=len(ids), reproduced=len(ids) - len(differing), seed=seed,
                        model=spec.cache_identity(), model_sha256=sha, rule=rule,
                        reason=f"records whose output differs: {', '.join(differing[:5])}" if differing else None,
                        differing=differing)


async def _generate(adapter: Any, requests: list[Any]) -> list[str | None]:
    """The adapter's text for each request, one at a time (None for a failed call)."""
    out: list[str | None] = []
    try:
        for request in requests:
            result = await adapter.agenerate(request)
            out.append(result.text if result.ok else None)
    finally:
        await adapter.aclose()
    return out


def write_report(path: Path, outcomes: list[Regeneration]) -> None:
    """Write the regeneration report (entries by their folder, sorted)."""
    body = {"format": REPORT_FORMAT, "entries": {o.entry: o.as_dict() for o in sorted(outcomes, key=lambda o: o.entry)}}
    path.write_text(json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def entry_key(folder: Path) -> str:
    """How the report names an entry: ``<entry folder>/<task>`` (the last two parts of its path)."""
    return "/".join(Path(folder).parts[-2:])


def board_mark(report_dir: Path, entry: str) -> str:
    """The board's regeneration mark for ``entry`` (:func:`entry_key`) from the committed report in ``report_dir``:
    "outputs reproduced (k/K)", else "outputs as submitted"."""
    path = report_dir / REPORT_NAME
    try:
        body = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        body = {}
    item = (body.get("entries") or {}).get(entry) if isinstance(body, dict) else None
    if isinstance(item, dict) and item.get("asked") and item.get("reproduced") == item.get("asked") \
            and isinstance(item.get("asked"), int):
        return f"outputs reproduced ({item['reproduced']}/{item['asked']})"
    return "outputs as submitted"


def _row_id(row: Mapping[str, Any]) -> str:
    """A samples row's record id (``record_id`` in judged families' rows, ``id`` in the others)."""
    return str(row.get("record_id", row.get("id")))


def _task_records(v: Any, task: Any, data_dir: Any) -> dict[str, Any]:
    """The task's records by id, as the entry's family reads them (its scorer's, or the task's data)."""
    from privasis_bench.leaderboard.data_source import task_records
    from privasis_bench.tasks.family import scorer_class

    scorer, limit = scorer_class(v.family), v.results["dataset"].get("limit")
    if not scorer.own_records:
        loaded, _ = task_records(task, limit=limit, directory=data_dir)
        return {r.id: r for r in loaded.records}
    return {r.id: r for r in scorer(task).records(limit=limit)}


def regenerate_outcomes(outcomes: list[Any], *, k: int, seed: int, data_dir: Any = None,
                        build: Callable[[Any], Any] | None = None) -> list[Regeneration]:
    """:func:`regenerate_entry` for every verified entry of ``outcomes`` (``Verified`` objects) on a shipped task; each
    gets ``outputs_mark`` set to its board mark, and an entry that is not regenerated says why."""
    from privasis_bench.leaderboard.task_source import shipped_task
    from privasis_bench.results.files import load_sample_rows

    found = []
    for v in outcomes:
        key = entry_key(v.path)
        if not v.ok or v.custom:
            found.append(Regeneration(key, seed=seed, reason="not a verified entry on a shipped task"))
        else:
            task = shipped_task(v.results["task"]["name"])
            found.append(regenerate_entry(key, v.results, list(load_sample_rows(v.path)), _task_records(v, task, data_dir),
                                          task, k=k, seed=seed, build=build))
        v.outputs_mark = found[-1].mark()
    return found
