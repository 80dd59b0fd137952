"""What a submission claims about its own run, re-derived from its samples and checked.

``results.json`` says whether the run was complete, how many outputs failed, how many records are unjudged, how
many judge answers were off-label and how many were cut at their budget (:mod:`.judge_cuts`); ``submission.json``
says which harness made it and when. None of that is taken on trust: :func:`claim_problems` recounts from
``samples.jsonl`` and rejects a file that claims more than it holds (the judge answers' cleaning is checked by
:func:`privasis_bench.protocol.row_checks.answer_cleaning_problems`, which ``rescore`` shares).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from privasis_bench import __version__
from privasis_bench.adapters.spec import TRANSPORT_ARGS
from privasis_bench.leaderboard.judge_cuts import RowCuts, cut_problems, row_cuts
from privasis_bench.protocol.judge import JUDGE_NONE_LABEL
from privasis_bench.protocol.labels import off_label_answers
from privasis_bench.protocol.verdicts import RecordVerdict

_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)")
#: A whole privasis-bench version (PEP 440 release with optional pre/post/dev parts and a short local part): the
#: recorded version must be exactly this, never a version followed by free text.
_WHOLE_VERSION = re.compile(r"\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?(?:\+[a-z0-9]+(?:\.[a-z0-9]+)*)?")


@dataclass(frozen=True)
class DerivedCounts:
    """What ``samples.jsonl`` itself shows about a run."""

    failed_outputs: int
    unjudged: int
    off_label: int
    cut_outputs: int | None = None  # outputs cut at the token budget (None: the rows predate the output_cut field)
    cut_judge_answers: int | None = None  # judge answers cut at their budget (None: the rows predate cut_answers)
    judge_answers: int = 0  # judge answers the rows record (see judge_cuts)


def derive_counts(rows: Iterable[Mapping[str, Any]]) -> DerivedCounts:
    """Failed outputs, unjudged records, off-label judge answers and cut outputs and judge answers, from samples rows."""
    rows = list(rows)
    failed = unjudged = off_label = cut = 0
    every_row_says = True
    for row in rows:
        if row.get("status") == "excluded":
            continue
        if "output_cut" in row:
            cut += row.get("output_cut") is True
        else:
            every_row_says = False
        failed += bool(row.get("output_failed"))
        verdict = RecordVerdict.from_dict(dict(row))
        unjudged += verdict.status == "unjudged"
        off_label += len(off_label_answers([verdict]))
    judge_cuts = row_cuts(rows)
    return DerivedCounts(failed, unjudged, off_label, cut if every_row_says else None, judge_cuts.flagged,
                         judge_cuts.answers)


def claim_problems(results: Mapping[str, Any], derived: DerivedCounts) -> list[str]:
    """Where ``results.json`` claims more than its samples hold, or was not a finished run (one line each)."""
    counts, checks = results.get("counts") or {}, results.get("checks") or {}
    derivable = [("failed_outputs", derived.failed_outputs), ("unjudged", derived.unjudged),
                 ("off_label", derived.off_label)]
    if derived.cut_outputs is not None:
        derivable.append(("truncated_outputs", derived.cut_outputs))
    problems = [f"counts.{name} is {counts.get(name)!r} but samples.jsonl holds {value}"
                for name, value in derivable if counts.get(name) != value]
    problems += cut_problems(results, RowCuts(derived.cut_judge_answers, derived.judge_answers))
    complete, passed = finished(derived, checks)
    if results.get("complete") is not complete:
        problems.append(f"complete is {results.get('complete')!r} but samples.jsonl gives {complete} "
                        f"({derived.failed_outputs} failed output(s), {derived.unjudged} unjudged record(s))")
    if checks.get("passed") is not passed:
        problems.append(f"checks.passed is {checks.get('passed')!r} but samples.jsonl gives {passed}")
    if not passed:
        problems.append(f"the run did not pass its checks ({why_not_passed(derived, checks)}): "
                        "only finished runs can be ranked")
    return problems


def finished(derived: DerivedCounts, checks: Mapping[str, Any]) -> tuple[bool, bool]:
    """(complete, passed) of a run from its counts and the tolerances its ``checks`` record."""
    limit = checks.get("max_off_label", 0)
    complete = derived.unjudged == 0 and (derived.failed_outputs == 0 or checks.get("failed_outputs") == "scored_as_empty")
    return complete, complete and derived.off_label <= (limit if isinstance(limit, int) else 0)


def why_not_passed(derived: DerivedCounts, checks: Mapping[str, Any]) -> str:
    """The reason a run is not finished, naming the flag that would have tolerated it."""
    scored_as_empty, max_off_label = checks.get("failed_outputs") == "scored_as_empty", checks.get("max_off_label", 0)
    reasons = []
    if derived.unjudged:
        reasons.append(f"{derived.unjudged} unjudged record(s); re-run the same command to judge them")
    if derived.failed_outputs and not scored_as_empty:
        reasons.append(f"{derived.failed_outputs} failed model output(s); re-run to retry them, or score them as "
                       "empty with --score-failed-as-empty")
    if isinstance(max_off_label, int) and derived.off_label > max_off_label:
        reasons.append(f"{derived.off_label} off-label judge answer(s) over --max-off-label {max_off_label}")
    return "; ".join(reasons) or "checks failed"


def harness_problems(submission: Mapping[str, Any]) -> list[str]:
    """The harness version must be a version string not newer than this verifier; dates must be in order."""
    problems = []
    version = str((submission.get("harness") or {}).get("version") or "")
    match, mine = _VERSION.match(version), _VERSION.match(__version__)
    if not match or len(version) > 64 or not _WHOLE_VERSION.fullmatch(version):
        problems.append(f"harness.version {version!r} is not a privasis-bench version")
    elif mine and tuple(map(int, match.groups())) > tuple(map(int, mine.groups())):
        problems.append(f"harness.version {version} is newer than this verifier ({__version__}): upgrade to verify it")
    dates = submission.get("dates") or {}
    parsed = {}
    for key in ("run_started", "run_finished", "submitted"):
        try:
            parsed[key] = _dt.datetime.fromisoformat(str(dates.get(key)))
        except ValueError:
            problems.append(f"dates.{key} {dates.get(key)!r} is not an ISO date")
    if len(parsed) == 3:
        now = _dt.datetime.now(_dt.timezone.utc) + _dt.timedelta(days=1)
        ordered = [parsed["run_started"], parsed["run_finished"], parsed["submitted"]]
        if any(d.tzinfo is None for d in ordered):
            problems.append("dates must carry a time zone")
        elif not ordered[0] <= ordered[1] <= ordered[2] <= now:
            problems.append("dates are out of order (run_started <= run_finished <= submitted <= today expected)")
    return problems


def transport_problems(submission: Mapping[str, Any], results: Mapping[str, Any]) -> list[str]:
    """Transport arguments (base_url, timeout, ...) name someone's machine: they never go into published files."""
    problems = []
    for where, data in (("submission.json", submission), ("results.json", results)):
        for role in ("model", "judge"):
            args = ((data.get(role) or {}).get("spec") or {}).get("args") or {}
            leaked = sorted(k for k in args if str(k).lower() in TRANSPORT_ARGS)
            if leaked:
                problems.append(f"{where}: {role}.spec.args holds transport argument(s) {', '.join(leaked)} "
                                "(left out of published files; re-submit)")
    return problems


def label_problems(results: Mapping[str, Any]) -> list[str]:
    """The judge and model labels the board shows must be what their recorded specs make (never free text)."""
    from privasis_bench.adapters.spec import ModelSpec

    problems = []
    for role in ("judge", "model"):
        section = results.get(role) or {}
        spec = section.get("spec")
        if not isinstance(spec, dict) or not spec.get("provider"):
            if role == "judge" and section.get("label") not in (None, JUDGE_NONE_LABEL):
                problems.append(f"judge.label is {_short(section.get('label'))!r} but no judge was used")
            continue
        model = spec.get("model") or ""
        want = f"{spec['provider']}:{model}" if model else str(spec["provider"])
        label = section.get("label")
        if role == "judge" and label != want:
            problems.append(f"judge.label is {_short(label)!r} but the recorded judge spec is {want!r}")
        try:
            key = ModelSpec.parse(want, spec.get("args") or {}).cache_identity()
        except Exception:  # noqa: BLE001 - an unparseable spec is reported as such
            problems.append(f"{role}.spec {_short(str(spec))!r} is not a model spec")
            continue
        if role == "judge" and section.get("key") not in (None, key):
            problems.append(f"judge.key is {_short(section.get('key'))!r} but the recorded judge spec gives {key!r}")
    return problems


def _short(text: Any) -> Any:
    return text if not isinstance(text, str) or len(text) <= 60 else text[:57] + "..."
