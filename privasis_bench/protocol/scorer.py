"""The Privasis-Sanitization judge protocol as a scorer (the ``privasis`` family's ``scorer`` target).

It scores on the runner's record flow (``job.stream``): each record is judged, by the ``judge`` role's engine, as soon
as the model under test has written it, and each verdict is checkpointed in ``judged.jsonl`` so a re-run asks
nothing twice. Finished records go, in record order, to a :class:`~privasis_bench.protocol.sink.ResultSink` (the
samples file and compact tallies), from which the metrics are computed. The judge's settings are ``job.choice``
(resolved from the task's judge section) and are recorded as the run's ``judge`` section.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping

from privasis_bench.data.loading import load_records
from privasis_bench.data.stats import dataset_stats
from privasis_bench.protocol.checkpoint import CHECKPOINT_NAME, output_hash, read_checkpoint
from privasis_bench.protocol.judge import Judge
from privasis_bench.protocol.judging import JudgeStep, resolve_judge
from privasis_bench.protocol.metrics import compute_metrics
from privasis_bench.protocol.presets import preset_values, withhold_inexact_metrics
from privasis_bench.protocol.rescore import compare_rows, rescore_rows, row_checks
from privasis_bench.protocol.sink import ResultSink
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.scoring import ScoredRun, Setup


class PrivasisScorer:
    """The judge protocol for one task (see the module docstring)."""

    name = "privasis"
    #: the numbers of a finished run again, for ``rescore`` and ``compare`` (see :mod:`privasis_bench.protocol.rescore`)
    rescore, row_checks, compare = staticmethod(rescore_rows), staticmethod(row_checks), staticmethod(compare_rows)

    def __init__(self, task: TaskConfig) -> None:
        self.task = task
        self.notices: list[str] = []
        self.loaded: Any = None
        self.choice: Any = None

    @classmethod
    def setup(cls, task: TaskConfig, opts: Any, *, load: bool = True, stream: bool = False,
              all_records: bool = False) -> Setup:
        """The task's dataset rows (``opts.limit``, ``opts.skip_invalid``; at least one scored unless
        ``all_records``), its judge as the command's judge options override it (none for a command without them;
        ``--preset`` sets its temperature) and the instruction variant."""
        def opt(name: str, default: Any = None) -> Any:
            return getattr(opts, name, default)

        scorer = cls(task)
        scorer.choice = resolve_judge(
            task, opt("judge", "none"), opt("judge_args"), prompts_dir=opt("judge_prompts"), parse_mode=opt("parse_mode"),
            guess_max_tokens=opt("judge_guess_max_tokens"), compare_max_tokens=opt("judge_compare_max_tokens"),
            empty_outputs=opt("empty_outputs"), inclusion_text=opt("inclusion_text"))
        if opt("preset") is not None and scorer.choice.spec is not None:  # the preset's judge temperature (no option)
            scorer.choice.settings = replace(scorer.choice.settings,
                                             temperature=preset_values(opts.preset)["judge.temperature"])
        if load:
            scorer.loaded = load_records(task, skip_invalid=opt("skip_invalid", False), limit=opt("limit"),
                                         stream=stream).require(task.task, scored=not all_records)
        return Setup(task, scorer, scorer.loaded, scorer.choice, opt("instruction") or task.prompt.instruction)

    def stats(self) -> dict[str, Any]:
        """Statistics of the loaded rows (``data inspect``)."""
        return dataset_stats(self.loaded)

    def predictions(self, path: Path, label: str | None, saved: Callable[[Any], Any]) -> Any:
        """Saved outputs of the task's rows in the harness's formats: ``saved(loaded records)``."""
        return saved(self.loaded)

    def planner(self, task_dir: Path | None) -> Callable[..., None]:
        """What judging one record asks (``--plan``): nothing for a verdict ``judged.jsonl`` holds; else at most three
        questions per target attribute (guess on the output, guess on the original, comparison: only the guess on
        the original, which does not depend on the output, is looked up in the cache) and two per kept attribute."""
        choice = self.choice
        verdicts = (read_checkpoint(task_dir / CHECKPOINT_NAME, choice.fingerprint())
                    if task_dir is not None and choice.spec is not None else {})
        judge = Judge(None, choice.prompts, choice.settings)

        def plan_record(record: Any, output: str | None, plans: Mapping[str, Any], cached: Callable[[str, Any], bool]) -> None:
            plan = plans.get("judge")
            if plan is None:
                return
            if output is not None and (record.id, output_hash(output, False)) in verdicts:
                plan.answered += 1
                return
            text = record.text if output is None else output
            for attr in (a for a in record.targets if a.value is not None):
                plan.add(judge.target_guess_request(text, attr))
                plan.add(judge.compare_request(attr, str(attr.value), str(attr.value)))
                original = judge.target_guess_request(record.text, attr)
                if cached("judge", original):
                    plan.answered += 1
                else:
                    plan.add(original)
            for attr in (a for a in record.keep if a.value is not None):
                plan.add(judge.keep_guess_request(text, attr))
                plan.add(judge.inclusion_request(text, str(attr.value), attr))
        return plan_record

    def describe(self) -> dict[str, Any]:
        """The scorer's name (the judge is described by the run's ``judge`` section)."""
        return {"name": self.name}

    def evaluate(self, job: Any) -> ScoredRun:
        """Get the outputs (from the model or saved), judge each as it lands and compute the metrics."""
        plan, choice, loaded, checks = job.plan, job.choice, job.records, job.checks
        step = JudgeStep(choice, job.task_dir / CHECKPOINT_NAME)
        # --score-failed-as-empty under the judge rule: a failed output is judged as "", as the official client reads it
        step.failed_as_empty = judged_as_empty = checks.score_failed_as_empty and choice.settings.empty_outputs == "judge"
        sink = ResultSink(job.samples_path, official=choice.settings.parse_mode == "official", journal=plan.journal,
                          left_out=plan.left_out, failed_as_empty=judged_as_empty)

        def start(asks: Any) -> Any:
            if "judge" in asks:
                step.ask = asks["judge"]

            async def judge(record: Any, out: Any) -> Any:
                return out, await step.verdict(record, out)
            return judge

        try:
            try:
                job.stream(loaded.iter_records(), start, sink)
            finally:
                step.close()
                if job.spend is not None:
                    job.spend.save()  # what was paid is on record even if the run stops here
            return self._sections(job, step, sink)
        finally:
            sink.close()  # drops a samples file that was not committed

    def _sections(self, job: Any, step: JudgeStep, sink: ResultSink) -> ScoredRun:
        task, choice, loaded, checks = job.task, job.choice, job.records, job.checks
        stats, mcfg = step.stats, task.metrics
        samples, seed = job.bootstrap()
        metrics = compute_metrics(sink.tallies, bootstrap_samples=samples, seed=seed, confidence=mcfg.confidence,
                                  top_failed=mcfg.top_failed_attributes)
        counts = {
            "records_loaded": len(loaded), "excluded": len(loaded.excluded), "invalid_rows": len(loaded.invalid),
            "judged_records": sink.judged_records, "scored": metrics["scored_records"],
            "failed_outputs": len(sink.failed_ids), "failed_outputs_cut_at_budget": sink.failed_cut,
            "empty_outputs": sink.empty_outputs, "truncated_outputs": sink.truncated_outputs,
            "unjudged": len(sink.unjudged_ids), "unjudged_cut_at_budget": sink.unjudged_cut,
            "missing_predictions": len(sink.missing_ids), "unparseable": len(sink.unparseable_ids),
            "off_label": sink.off_label_count, "verdicts_reused_from_checkpoint": step.reused,
        }
        sections = {
            "judge": choice.describe(),
            "parse_mode": choice.settings.parse_mode,
            "scoring_preset": job.preset,  # "paper" when --preset paper set every comparability setting
            "metrics": metrics,
            "counts": counts,
            "judge_calls": stats.to_dict(),
            "excluded_records": [{"id": r.id, "reason": r.excluded_reason} for r in loaded.excluded],
            # rows skipped with --skip-invalid: which, where and why (row numbers count from 1 in the source)
            "invalid_row_details": [{"id": r.record_id, "row": r.row_number, "field": r.field, "reason": r.message}
                                    for r in loaded.invalid],
            "failed_output_records": sink.failed_ids,
            "unjudged_records": sink.unjudged_ids,
            "missing_prediction_records": sink.missing_ids,
            "unparseable_records": sink.unparseable_ids,
            "off_label_answers": [a.to_dict() for a in sink.off_label],
        }
        dataset = {"ids_hash": loaded.ids_hash, "limit": job.limit, "records_loaded": len(loaded),
                   "invalid_rows": len(loaded.invalid)}
        # every record judged, and no failed model output unless those are knowingly scored as empty
        complete = (counts["unjudged"] == 0 and counts["missing_predictions"] == 0
                    and (counts["failed_outputs"] == 0 or checks.score_failed_as_empty))
        # an incomplete --preset paper run records no skip-rule number as the paper's (metrics is changed in place)
        withhold_inexact_metrics({**sections, "checks": checks.to_dict()})
        sink.commit()
        return ScoredRun(sections, dataset, complete, complete and sink.off_label_count <= checks.max_off_label,
                         lambda spend: spend.finish("completed", judge_calls=stats.to_dict()))
