"""Reproduced outputs: re-run a submission's model on a seeded sample of its records and compare the outputs.

``leaderboard verify --regenerate K`` (docs/publishing.md, *Spans derived, not claimed; outputs reproduced* and
*Endpoints the maintainer configures*, states which models, the comparison rules and what a mark means). Here:
:func:`regenerable` decides whether the verifier runs the model itself (a llama.cpp model the harness pins by name,
alone or in a wrapper whose every call goes to it, or a ``.gguf`` whose recorded sha256 the verifier's copy has;
greedy decoding, the task's own prompt), :func:`plan_for` prefers an endpoint the maintainer configured
(:mod:`.regen_endpoints`), :func:`sample_ids` draws the K records (seeded, in id order), and
:func:`regenerate_entry` sends the run's own requests and compares each cleaned output with the row's (exactly, or
by the endpoint's similarity rule). The outcome (:class:`Regeneration`) is "outputs reproduced (k/K)" only when all
K agree; the board marks entries from the committed report (:func:`board_mark`).
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
from privasis_bench.protocol.testee_prompt import custom_testee_prompt

#: The board-data name of the committed regeneration report (beside rejudge.json).
REPORT_NAME = "regenerate.json"
REPORT_FORMAT = "privasis-bench/regenerate-report/1"
#: Wrapper providers whose sub-calls all go to the wrapped model, and the arguments that keep it so.
WRAPPERS = ("intact", "decomp")
WRAPPER_ARGS = {"levels", "guesses", "max_spans", "recipe", "inner_concurrency"}


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
    endpoint: str | None = None  # the configured endpoint's model spec (never its arguments)
    threshold: float | None = None  # the similarity rule's per-record minimum (None: exact)
    similarities: tuple[float, ...] = field(default_factory=tuple)  # per drawn record, under the similarity rule
    failed_calls: int = 0

    @property
    def passed(self) -> bool:
        """Every drawn record reproduced (and at least one drawn)."""
        return self.asked > 0 and self.reproduced == self.asked

    def mark(self) -> str:
        """The board's words for it."""
        return reproduced_mark(self.reproduced, self.asked, self.threshold) if self.passed else "outputs as submitted"

    def as_dict(self) -> dict[str, Any]:
        """The report form (every field, plus the mark)."""
        return {**asdict(self), "differing": list(self.differing), "similarities": list(self.similarities),
                "mark": self.mark()}


def reproduced_mark(reproduced: int, asked: int, threshold: float | None) -> str:
    """"outputs reproduced (k/K)", with the similarity threshold when the comparison was not exact."""
    rule = "" if threshold is None else f", similarity >= {threshold:.2f}"
    return f"outputs reproduced ({reproduced}/{asked}{rule})"


@dataclass(frozen=True)
class _Plan:
    """How one entry is regenerated: the spec called, the rule, and what pins the model."""

    spec: str
    args: Mapping[str, Any]
    rule: str
    threshold: float | None = None  # None: exact
    path: Path | None = None  # the local model file
    endpoint: str | None = None


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
    provider, name = spec.get("provider"), str(spec.get("model") or "")
    if provider in WRAPPERS:  # a wrapper whose every call goes to one pinned local model
        inner, _, name = name.partition(":")
        extra = sorted(set(map(str, spec.get("args") or {})) - WRAPPER_ARGS)
        if inner != "llamacpp" or extra:
            return None, f"a {provider}: wrapper around {inner[:40]!r}{' with ' + ', '.join(extra) if extra else ''}"
    elif provider != "llamacpp":
        return None, f"provider {str(provider)[:40]!r} is not a local model the verifier runs"
    if generation.get("temperature") not in (0, 0.0):
        return None, "sampled decoding (temperature > 0): no exact output to compare with"
    if custom_testee_prompt(dict(results)):
        return None, "a testee prompt of the submission's own"
    from privasis_bench.adapters.llamacpp_adapter import NAMED_MODELS, resolve_model_path

    try:
        path = resolve_model_path(name)
    except PrivasisError as exc:
        return None, f"the verifier has no copy of llamacpp:{name[:60]} ({str(exc)[:120]})"
    if name not in NAMED_MODELS:
        claimed = model.get("file_sha256")
        if not isinstance(claimed, str) or claimed != model_file_sha256(path):
            return None, "a .gguf path without a recorded file_sha256 the verifier's file has"
    return path, "exact: greedy local decoding, output equal after the protocol's post-processing"


def sample_ids(rows: list[Mapping[str, Any]], k: int, seed: int) -> list[str]:
    """``k`` record ids drawn (seeded, in id order) from the rows that hold a model output."""
    ids = sorted(_row_id(r) for r in rows
                 if r.get("status") != "excluded" and isinstance(r.get("output"), str) and not r.get("output_failed"))
    return sorted(random.Random(seed).sample(ids, min(k, len(ids))))


def plan_for(results: Mapping[str, Any], endpoints: Mapping[str, Any] | None = None) -> _Plan | str:
    """How the verifier regenerates an entry (a configured endpoint first, else a pinned local model), or why not."""
    from privasis_bench.leaderboard.regen_endpoints import endpoint_for

    endpoint = endpoint_for(results, endpoints or {})
    if endpoint is not None:
        if custom_testee_prompt(dict(results)):
            return "a testee prompt of the submission's own"
        return _Plan(endpoint.spec, dict(endpoint.args), endpoint.describe_rule(),
                     None if endpoint.rule == "exact" else endpoint.threshold, endpoint=endpoint.spec)
    path, rule = regenerable(results)
    if path is None:
        return rule
    spec = results["model"]["spec"]
    return _Plan(f"{spec['provider']}:{spec['model']}", dict(spec.get("args") or {}), rule, path=path)


def regenerate_entry(entry: str, results: Mapping[str, Any], rows: list[Mapping[str, Any]], records: Mapping[str, Any],
                     task: Any, *, k: int, seed: int, build: Callable[[Any], Any] | None = None,
                     endpoints: Mapping[str, Any] | None = None, retry: Any = None) -> Regeneration:
    """Regenerate ``k`` seeded records of one entry and compare (see the module docstring). ``records``: the task's
    records by id; ``build``: the adapter factory (the registry's by default); ``endpoints``: the maintainer's
    configured endpoints (:func:`.regen_endpoints.load_endpoints`), called with retries (``retry``: a
    ``RetryPolicy``, the engine's default when None) and no response cache."""
    from privasis_bench.adapters.spec import ModelSpec
    from privasis_bench.leaderboard.regen_endpoints import similarity
    from privasis_bench.protocol.testee import build_sanitize_request, postprocess_output

    plan = plan_for(results, endpoints)
    if isinstance(plan, str):
        return Regeneration(entry, seed=seed, reason=plan)
    spec = ModelSpec.parse(plan.spec, dict(plan.args))
    ids = [i for i in sample_ids(list(rows), k, seed) if i in records]
    by_id = {_row_id(r): r for r in rows}
    gen = results["model"].get("generation") or {}
    requests = [build_sanitize_request(records[i], task, instruction=results.get("instruction"),
                                       max_tokens=gen.get("max_tokens"), temperature=gen.get("temperature"))
                for i in ids]
    if build is None:
        from privasis_bench.adapters.registry import build_adapter as build
    try:
        adapter = build(spec)
    except PrivasisError as exc:  # e.g. the endpoint's key variable is not set: said, never the key itself
        return Regeneration(entry, seed=seed, rule=plan.rule, endpoint=plan.endpoint, threshold=plan.threshold,
                            reason=f"cannot call {plan.spec}: {str(exc).splitlines()[0][:200]}")
    texts = (_generate_remote(adapter, spec, requests, retry) if plan.endpoint is not None
             else _generate_batch(adapter, requests) if getattr(adapter, "batched", False)
             else asyncio.run(_generate(adapter, requests)))
    cue = task.prompt.answer_cue
    outputs = [None if text is None else postprocess_output(text, cue) for text in texts]
    wanted = [str(by_id[i].get("output")) for i in ids]
    scores = tuple(0.0 if out is None else round(similarity(out, want), 4) for out, want in zip(outputs, wanted))
    same = [out is not None and (out == want if plan.threshold is None else score >= plan.threshold)
            for out, want, score in zip(outputs, wanted, scores)]
    differing = tuple(i for i, ok in zip(ids, same) if not ok)
    failed = sum(out is None for out in outputs)
    reason = None
    if differing:
        reason = f"records whose output differs: {', '.join(differing[:5])}"
        reason += f" ({failed} failed call(s))" if failed else ""
    return Regeneration(entry, asked=len(ids), reproduced=len(ids) - len(differing), seed=seed,
                        model=spec.cache_identity() if plan.endpoint is None else None,
                        model_sha256=model_file_sha256(plan.path) if plan.path is not None else None, rule=plan.rule,
                        reason=reason, differing=differing, endpoint=plan.endpoint, threshold=plan.threshold,
                        similarities=scores if plan.threshold is not None else (), failed_calls=failed)


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


def _generate_batch(adapter: Any, requests: list[Any]) -> list[str | None]:
    """A batched adapter's text for each request (a wrapper such as ``intact:`` runs its steps over the batch)."""
    try:
        results = adapter.generate_batch(list(requests))
    finally:
        asyncio.run(adapter.aclose())
    return [r.text if r.ok else None for r in results]


def _generate_remote(adapter: Any, spec: Any, requests: list[Any], retry: Any) -> list[str | None]:
    """An endpoint's text for each request through an engine (retries on 429/5xx/timeouts, no cache); a call that
    still fails, or an endpoint nothing answers at, gives None. An empty answer or one cut at the recorded token
    budget is the endpoint's answer, compared as it is (the run's own outputs may be cut there too)."""
    from privasis_bench.engine.answers import ACCEPT_ALL
    from privasis_bench.engine.executor import Engine
    from privasis_bench.engine.retry import RetryPolicy

    engine = Engine(adapter, spec, role="regenerate", cache=None, retry=retry or RetryPolicy(), concurrency=1,
                    progress=False, answers=ACCEPT_ALL)
    try:
        results = engine.run(requests, desc="regenerate")
    except PrivasisError:
        return [None] * len(requests)
    finally:
        engine.close()
    return [r.text if r.ok else None for r in results]


def write_report(path: Path, outcomes: list[Regeneration]) -> None:
    """Write the regeneration report (entries by their folder, sorted); an existing report's other entries are kept."""
    old = _read_report(path)
    kept = old.get("entries") if isinstance(old, dict) and old.get("format") == REPORT_FORMAT else None
    entries = {**(kept if isinstance(kept, dict) else {}), **{o.entry: o.as_dict() for o in outcomes}}
    body = {"format": REPORT_FORMAT, "entries": dict(sorted(entries.items()))}
    path.write_text(json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def _read_report(path: Path) -> dict[str, Any]:
    """A regeneration report's JSON ({} when it is missing or cannot be read)."""
    try:
        body = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def entry_key(folder: Path) -> str:
    """How the report names an entry: ``<entry folder>/<task>`` (the last two parts of its path)."""
    return "/".join(Path(folder).parts[-2:])


def board_mark(report_dir: Path, entry: str) -> str:
    """The board's regeneration mark for ``entry`` (:func:`entry_key`) from the committed report in ``report_dir``:
    "outputs reproduced (k/K)", else "outputs as submitted"."""
    item = (_read_report(report_dir / REPORT_NAME).get("entries") or {}).get(entry)
    if isinstance(item, dict) and item.get("asked") and item.get("reproduced") == item.get("asked") \
            and isinstance(item.get("asked"), int):
        threshold = item.get("threshold")
        return reproduced_mark(item["reproduced"], item["asked"],
                               float(threshold) if isinstance(threshold, (int, float)) else None)
    return "outputs as submitted"


def _row_id(row: Mapping[str, Any]) -> str:
    """A samples row's record id (``record_id`` in judged families' rows, ``id`` in the others)."""
    return str(row.get("record_id", row.get("id")))


def _task_records(v: Any, task: Any, data_dir: Any) -> dict[str, Any]:
    """The task's records by id, as the entry's family reads them (its scorer's, or the task's data)."""
    from privasis_bench.leaderboard.data_source import task_records
    from privasis_bench.tasks.family import scorer_class
    from privasis_bench.tasks.scoring import OutputScorer

    scorer, limit = scorer_class(v.family), v.results["dataset"].get("limit")
    if not issubclass(scorer, OutputScorer):  # the task's dataset rows, not the scorer's own documents
        loaded, _ = task_records(task, limit=limit, directory=data_dir)
        return {r.id: r for r in loaded.records}
    return {r.id: r for r in scorer(task).records(limit=limit)}


def regenerate_outcomes(outcomes: list[Any], *, k: int, seed: int, data_dir: Any = None,
                        build: Callable[[Any], Any] | None = None,
                        endpoints: Mapping[str, Any] | None = None, retry: Any = None) -> list[Regeneration]:
    """:func:`regenerate_entry` for every verified entry of ``outcomes`` (``Verified`` objects) on a shipped task; each
    gets ``outputs_mark`` set to its board mark, and an entry that is not regenerated says why. No response cache
    is used: a wrapper's sub-calls are made again, never read back from an earlier command's answers."""
    from privasis_bench.engine.cache import end_session
    from privasis_bench.leaderboard.task_source import shipped_task
    from privasis_bench.results.files import load_sample_rows

    end_session()

    found = []
    for v in outcomes:
        key = entry_key(v.path)
        if not v.ok or v.custom:
            found.append(Regeneration(key, seed=seed, reason="not a verified entry on a shipped task"))
        else:
            task = shipped_task(v.results["task"]["name"])
            found.append(regenerate_entry(key, v.results, list(load_sample_rows(v.path)), _task_records(v, task, data_dir),
                                          task, k=k, seed=seed, build=build, endpoints=endpoints,
                                          retry=retry))
        v.outputs_mark = found[-1].mark()
    return found
