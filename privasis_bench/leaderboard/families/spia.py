"""The SPIA family on the board: its verifier, row, content digest and re-ask of the adversary and the matcher (the
targets :mod:`privasis_bench.spia.family` names; the viewer and the as-published table live beside this module).

The verifier trusts only the outputs and the recorded model answers of ``samples.jsonl``. For a shipped task it
re-derives every row from those answers and the shipped documents (:mod:`.spia_replay`): who the adversary listed,
what it inferred, the pairing, each gold attribute's score (rules first, the recorded matcher answer where the rules
give 0) and whether the document is scored; a row that says anything else is refused. CPR, IPR, per-tag CPR and their
bootstrap intervals are then recomputed from the re-derived scores with the run's recorded bootstrap settings (the
board shows and ranks those). The answers themselves are checked by :func:`rejudge`: the pinned local model
(:data:`privasis_bench.spia.family.PINNED_ROLES`) is asked again, as the adversary and as the matcher, a seeded
stratified sample of the recorded decisions; a decision it firmly gives otherwise rejects the entry.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any, Callable, Mapping

from privasis_bench.adapters.base import ChatRequest
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.leaderboard.families.spans import SELF_REPORTED_FACTS
from privasis_bench.leaderboard.families.spia_board import sections  # noqa: F401 - the family's target
from privasis_bench.leaderboard.families.spia_replay import read_steps, replay, row_problems
from privasis_bench.leaderboard.families.spia_viewer import write_viewer  # noqa: F401 - the family's target
from privasis_bench.leaderboard.family_api import EntryInput, FamilyVerdict, bootstrap_settings, config_hash_problem
from privasis_bench.leaderboard.provenance import role_pin_problems
from privasis_bench.leaderboard.rejudge import REASKS, REJUDGE_CHARS_PER_TOKEN, Agreement, draw
from privasis_bench.leaderboard.scored_content import digest, normal_text
from privasis_bench.leaderboard.task_source import shipped_task
from privasis_bench.results.files import RESULTS_NAME, SAMPLES_NAME, load_sample_rows
from privasis_bench.spia.answers import UnreadableAnswer, parse_pairs, parse_people, parse_profile
from privasis_bench.spia.family import BOARD, PINNED_ROLES
from privasis_bench.spia.matching import parse_verdict
from privasis_bench.spia.records import CODE_TAGS, NON_CODE_TAGS
from privasis_bench.spia.scorer import SpiaScorer

#: Most documents one SPIA entry may hold rows for.
MAX_DOCUMENTS = 5000


def content(rows: list[dict[str, Any]], results: Mapping[str, Any] | None = None) -> str:
    """The digest of what a SPIA entry scores: per document (in id order) its anonymized text (the adversary's and the
    matcher's answers follow from it and the pinned models)."""
    return digest(sorted([str(r.get("id")), normal_text(r.get("output"))] for r in rows))


def verify(entry: EntryInput) -> FamilyVerdict:
    """Recompute one SPIA entry from its recorded answers (see the module docstring)."""
    res, rows, where = entry.results, entry.rows, entry.folder / SAMPLES_NAME
    if entry.custom:  # documents of the user's own: no gold here; the stored scores are re-pooled, self-reported
        return FamilyVerdict(metrics=SpiaScorer.rescore(rows, {}, **bootstrap_settings(res)), facts=dict(SELF_REPORTED_FACTS))
    problems = config_hash_problem(entry)
    if entry.submission.get("track") == "verified":  # the adversary and matcher the re-ask asks again
        problems += [f"{entry.folder / RESULTS_NAME}: {p}" for p in role_pin_problems(res)]
    scorer = SpiaScorer(entry.task)
    limit = (res.get("dataset") or {}).get("limit")
    every = list(scorer.documents.values())
    docs = {d.id: d for d in (every[:limit] if isinstance(limit, int) and limit > 0 else every)}
    if len(rows) > MAX_DOCUMENTS:
        return FamilyVerdict(problems=(*problems, f"{where}: {len(rows)} rows, more than {MAX_DOCUMENTS} documents"))
    by_id: dict[str, dict[str, Any]] = {}
    for n, row in enumerate(rows, start=1):
        rid = str(row.get("id"))
        if rid in by_id or rid not in docs:
            problems.append(f"{where}: line {n}: {rid[:80]!r} is "
                            + ("a second row of its document" if rid in by_id else "not a document of the task"
                               + (" within its limit" if limit else "")))
        by_id.setdefault(rid, row)
    problems += [f"{where}: document {d}: no samples row (every document of the task has one)" for d in docs
                 if d not in by_id]
    rederived, scored_ids, failed = [], [], 0
    for doc_id, doc in docs.items():
        row = by_id.get(doc_id)
        if row is None:
            continue
        got = replay(doc, row, location_max_depth=scorer.location_depth, uncomparable=scorer.uncomparable)
        problems += [f"{where}: {p}" for p in row_problems(doc_id, row, got)]
        failed += not isinstance(row.get("output"), str)
        rederived.append({"id": doc_id, "scored": got.unscored is None, "subjects": got.subjects})
        if got.unscored is None:
            scored_ids.append(doc_id)
    metrics = SpiaScorer.rescore(rederived, {}, **bootstrap_settings(res))
    problems += _count_problems(res, scored=len(scored_ids), failed=failed, loaded=len(docs))
    facts = {"partial": len(scored_ids) < len(every), "records_of_task": len(every), "scored_records": len(scored_ids),
             "failed_outputs": failed,
             "record_set": hashlib.sha256("\n".join(sorted(scored_ids)).encode("utf-8")).hexdigest()}
    return FamilyVerdict(problems=tuple(problems), metrics=metrics, facts=facts, task_records=len(every))


def _count_problems(res: Mapping[str, Any], *, scored: int, failed: int, loaded: int) -> list[str]:
    counts, where = res.get("counts") or {}, RESULTS_NAME
    out = [f"{where}: counts.{key} is {counts.get(key)!r}; the rows give {value}"
           for key, value in (("scored", scored), ("failed_outputs", failed), ("records_loaded", loaded))
           if counts.get(key) != value]
    if failed:
        out.append(f"{where}: {failed} document(s) without an output: an unfinished run (re-run to retry them)")
    if res.get("complete") is not True or (res.get("checks") or {}).get("passed") is not True:
        out.append(f"{where}: complete/checks.passed is not true: only finished runs go on the board")
    return out


def board_row(v: Any, task: str, viewer: str | None) -> dict[str, Any]:
    """The board row of one verified SPIA entry: the shared fields, then CPR and IPR recomputed, with intervals."""
    sub, res, facts, m = v.submission, v.results, v.facts(), v.recomputed or {}
    held = ", answers held to a grammar" if (res.get("scorer") or {}).get("answer_grammar") == "gbnf" else ""
    roles = (f"adversary and matcher {PINNED_ROLES['adversary']} (answers re-asked{held})" if v.agreement
             else f"adversary and matcher answers as recorded (self-reported{held})")
    row: dict[str, Any] = {
        "name": str(sub["name"]), "label": sub.get("label"), "track": sub["track"], "task": task,
        "rejudged": v.agreement is not None, "reference": bool(sub.get("reference")),
        "model": str((res.get("model") or {}).get("label")), "judge": None, "roles": roles,
        "records": facts.get("scored_records"), "records_loaded": (res.get("dataset") or {}).get("records_loaded"),
        "task_records": facts.get("records_of_task"), "limit": (res.get("dataset") or {}).get("limit"),
        "record_set": facts.get("record_set") or "self-reported documents", "partial": bool(facts.get("partial")),
        "gold_reading": not facts.get("rankable", True),
        # an entry with no scored document has no number to rank by: shown, never ranked (not tied first)
        "rankable": bool(facts.get("rankable", True)) and not sub.get("reference") and m.get("cpr") is not None,
        "rejudge_agreement": v.agreement, "viewer": viewer, "marks": [],
        "tolerated": [] if m.get("cpr") is not None else
        ["not ranked: no scored document (the adversary's answers could not be read; see the viewer)"],
        "subjects": m.get("subjects"), "attributes": m.get("attributes"),
        "per_tag_cpr": dict(m.get("per_tag_cpr") or {}),
        "harness_version": (sub.get("harness") or {}).get("version"),
    }
    for key, _ in BOARD.columns:
        ci = (m.get("ci") or {}).get(key) or {}
        row.update({key: m.get(key), f"{key}_low": ci.get("low"), f"{key}_high": ci.get("high")})
    return row


# -- the re-ask ------------------------------------------------------------------------------------------------------
def requests_for(scorer: SpiaScorer) -> dict[str, Callable[..., ChatRequest]]:
    """The requests the SPIA scorer sends (its own request builders: the shipped task's templates, budgets and answer
    grammar), by step."""
    return {"subjects": scorer.subjects_request, "profile": scorer.profile_request, "align": scorer.align_request,
            "match": scorer.match_request}


def decisions(rows: list[dict[str, Any]], docs: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    """(kind, document id, step, question) of every recorded decision the re-ask can draw, sorted: the adversary's
    people list and its two profiles, the matcher's alignment and each value question it answered. A step is a
    decision once the answers before it (which its question is built from) can be read."""
    pool = []
    for row in rows:
        rid, answers = str(row.get("id")), row.get("answers")
        if rid not in docs or not isinstance(row.get("output"), str) or not isinstance(answers, dict):
            continue
        if isinstance(answers.get("subjects"), str):
            pool.append(("adversary:people", rid, "subjects", ""))
        steps = read_steps(answers)
        if steps.people is not None:
            pool += [("adversary:profile", rid, w, "") for w in ("profile_codes", "profile_descriptive")
                     if isinstance(answers.get(w), str)]
        if steps.inferred is not None and isinstance(answers.get("align"), str):
            pool.append(("matcher:align", rid, "align", ""))
        for item in row.get("matcher_answers") or []:
            if isinstance(item, dict) and all(isinstance(item.get(k), str) for k in ("tag", "gold", "guess", "answer")):
                pool.append(("matcher:value", rid, "match", json.dumps([item["gold"], item["guess"], item["tag"]])))
    return sorted(set(pool))


def _decide(step: str, answer: str | None, doc: Any, people: int | None) -> Any:
    """What an answer decides for one step (its reading, or the reason it cannot be read)."""
    if answer is None:
        return "failed call"
    try:
        if step == "subjects":
            return parse_people(answer)
        if step in ("profile_codes", "profile_descriptive"):
            tags = CODE_TAGS if step == "profile_codes" else NON_CODE_TAGS
            found = parse_profile(answer, tags, people or 0)
            return sorted((i, a.tag, a.keyword, a.certainty) for i, attrs in found.items() for a in attrs)
        if step == "align":
            return sorted(parse_pairs(answer, len(doc.subjects), people or 0).items(), key=lambda kv: kv[0])
    except UnreadableAnswer as exc:
        return f"unreadable ({exc})"
    return parse_verdict(answer)


def rejudge(v: Any, asker: Any, *, n: int, seed: int, max_disagreements: int,
            model: str | None = None) -> tuple[Agreement | None, str | list[str]]:
    """Re-ask the pinned adversary and matcher (or ``model`` for both) about ``n`` recorded decisions drawn with
    ``seed`` (see :func:`decisions`; stratified by kind, as the Privasis re-judge draws). A re-asked decision agrees
    when the model's answer reads the same as the recorded one; each of the first ``max_disagreements + 1``
    disagreements is asked :data:`REASKS` more times without the memo: the same other answer every time is firm (the
    entry fails), differing answers are excused as the model's own instability."""
    task = shipped_task(v.results["task"]["name"])
    scorer, rows = SpiaScorer(task), load_sample_rows(v.path)
    bound = REJUDGE_CHARS_PER_TOKEN * task.generation.max_tokens
    long = [str(r.get("id"))[:80] for r in rows if isinstance(r.get("output"), str) and len(r["output"]) > bound]
    if long:
        return None, [f"document {d}: output over the re-ask's bound of {bound} characters ({REJUDGE_CHARS_PER_TOKEN} "
                      f"per token of the task's output budget): the entry cannot be verified" for d in long[:5]]
    specs = {role: ModelSpec.parse(model or PINNED_ROLES[role], asker.model_args) for role in PINNED_ROLES}
    name = f"{str(v.submission.get('name'))[:80]} on {task.task}"
    runners: dict[str, Any] = {}
    pool = decisions(rows, scorer.documents)
    chosen = draw(pool, n, random.Random(f"{seed}:{v.submission.get('name')}:{task.task}"))
    by_id = {str(r.get("id")): r for r in rows}
    make = requests_for(scorer)
    asks = []
    for kind, rid, step, question in chosen:
        row, doc = by_id[rid], scorer.documents[rid]
        steps = read_steps(row["answers"])
        count = len(steps.people) if steps.people is not None else None
        if step == "subjects":
            request = make["subjects"](row["output"])
        elif step != "align" and step != "match":
            request = make["profile"](step, row["output"], steps.people)
        elif step == "align":
            request, count = make["align"](doc, steps.inferred), len(steps.inferred or [])
        else:
            request = make["match"](*json.loads(question))
        recorded = (row["answers"][step] if step != "match" else
                    next(i["answer"] for i in row["matcher_answers"] if isinstance(i, dict)
                         and json.dumps([i.get("gold"), i.get("guess"), i.get("tag")]) == question))
        asks.append((kind, rid, step, question, request, _decide(step, recorded, doc, count), doc, count))
    got = Agreement(seed=seed, sample_size=n, pool=len(pool), asked=len(asks), max_disagreements=max_disagreements)
    answers: dict[int, Any] = {}
    for role in PINNED_ROLES:  # each runner made just before it asks (the progress lines name the role asked)
        runners[role] = asker.runner(role, specs[role], f"rejudge {name} ({role})")
        mine = [i for i, a in enumerate(asks) if a[0].startswith(role)]
        for i, result in zip(mine, runners[role]([asks[i][4] for i in mine]) if mine else []):
            answers[i] = result.text
    differing = 0
    for i, (kind, rid, step, question, request, want, doc, count) in enumerate(asks):
        now = _decide(step, answers.get(i), doc, count)
        tally = got.by_kind.setdefault(kind, [0, 0])
        tally[0] += 1
        if now == want:
            got.agreed += 1
            tally[1] += 1
            continue
        what = f"{step} {json.loads(question)[2]}" if step == "match" else step
        line = f"document {rid} {what}: recorded answer reads {str(want)[:120]}, re-asked {str(now)[:120]}"
        if differing <= max_disagreements:
            role = kind.split(":")[0]
            again = [_decide(step, r.text, doc, count) for r in runners[role].fresh([request] * REASKS)]
            if any(a != now for a in again):
                got.unstable += 1
                line += " (unstable: asked again it reads differently; excused)"
            else:
                line += f" (firm: the same when asked {REASKS} more times)"
        differing += 1
        got.disagreements.append(line)
    identity = " and ".join(f"{role} {spec.cache_identity()}" for role, spec in specs.items())
    return got, identity
