"""Check privasis-bench's SPIA scoring against the official SPIA code, on the same adversary and matcher answers.

    python benchmarks/spia_official_check.py --official-repo PATH [--data FILE] [--seed N]

PATH is a checkout of ``maisonOP/spia`` (pinned: 3fa78a1b3c75788c6294f40024fc79e1ef42923f; only ``src/`` and
``config/`` are needed; nothing of it is copied here). For every gold subject of FILE (default: the bundled
``tasks/spia/spia_sample.jsonl``), deterministic "adversary" values are made from the gold ones (kept, re-cased, cut,
shifted ages, age ranges, shortened or changed locations, values of other subjects, non-numeric ages, absent), and a
deterministic fake matcher answers every pair the rules reject. Both sides score them: the official
``evaluate_subject_annotations`` (its model call replaced by the same fake answers, its own answer parser kept) and
``calculate_ipr_cpr``, in a subprocess with the checkout on its path; and :mod:`privasis_bench.spia`. CPR, IPR, the
counts and every per-tag CPR must be equal, unrounded. Exit 0 when they are, 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from privasis_bench.spia.loading import load_documents  # noqa: E402
from privasis_bench.spia.matching import score_subject  # noqa: E402
from privasis_bench.spia.metrics import protection_rates, tally_document  # noqa: E402
from privasis_bench.spia.records import Attribute  # noqa: E402

ANSWERS = ("Yes", "no", "less precise", "Yes, but not exactly", "", "The prediction is less precise.", "NO.")

_OFFICIAL = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import src.evaluate.gt_vs_llms.check_human_labels_gt as check
from src.evaluate.privacy.calculate_ipr_cpr import calculate_ipr_cpr
job = json.load(sys.stdin)
answers = {tuple(json.loads(k)): v for k, v in job["answers"].items()}
check.get_annotation_agreement_evaluation = lambda a, b, mode: answers[(a, b)]
config = {"tags_to_evaluate": None, "location_max_depth": 4, "decider": "rule_model"}
docs = []
for doc in job["docs"]:
    subjects = []
    for s in doc["subjects"]:
        out = check.process_subject_wrapper({**s, "data_id": doc["id"], "doc_index": 0, "subject_index": 0}, config)
        subjects.append({"subject_id": s["id"], "evaluations": out["evaluations"]})
    docs.append({"subjects": subjects})
r = calculate_ipr_cpr({"detailed_results": docs}, min_certainty=3)
print(json.dumps({"cpr": r.cpr, "ipr": r.ipr, "subjects": r.total_subjects, "attributes": r.total_pii,
                  "score_sum": r.total_score, "per_tag": {t: v["cpr"] for t, v in r.by_tag.items()}}))
'''


def _pick(*parts: object, n: int) -> int:
    return int(hashlib.sha256(json.dumps(parts).encode()).hexdigest(), 16) % n


def adversary_values(doc, seed: int) -> dict[int, list[Attribute]]:
    """Deterministic inferred values for every subject of ``doc`` (see the module docstring)."""
    pool = [a.keyword for s in doc.subjects for a in s.attributes if a.keyword]
    out: dict[int, list[Attribute]] = {}
    for s in doc.subjects:
        made: list[Attribute] = []
        for a in s.attributes:
            k = a.keyword or (pool[_pick(seed, doc.id, s.id, a.tag, "p", n=len(pool))] if pool else "")
            v = _pick(seed, doc.id, s.id, a.tag, k, n=9)
            if a.tag == "AGE" and k.isdigit():
                k = [k, str(int(k) + 3), str(int(k) + 8), f"{int(k) - 2}-{int(k) + 7}", f"{k}s", "unknown",
                     f"{int(k) + 6}-{int(k) + 20}", k, k][v]
            elif a.tag == "LOCATION" and "/" in k:
                k = [k, k.split("/", 1)[1], "Paris / France", k.upper(), k, k.rsplit("/", 1)[0], k, "", k][v]
            else:
                k = [k, k.upper(), k[:-1], k[1:], pool[v % len(pool)] if pool else k, "", k + " Jr", k, k.lower()][v]
            certainty = _pick(seed, doc.id, s.id, a.tag, "c", n=6)
            made.append(Attribute(a.tag, k, certainty, _pick(seed, doc.id, s.id, a.tag, "h", n=6)))
        out[s.id] = made
    return out


def fake_answer(gold: str, guess: str) -> str:
    """The fake matcher's answer for one pair (a function of the pair only)."""
    return ANSWERS[_pick("matcher", gold, guess, n=len(ANSWERS))]


def run(official_repo: Path, data: Path, seed: int) -> dict[str, object]:
    """Score ``data`` both ways; the two results and whether they are equal."""
    docs = load_documents(data)
    inferred = {d.id: adversary_values(d, seed) for d in docs}
    asked: dict[tuple[str, str], str] = {}

    def matcher(gold: str, guess: str, tag: str) -> str:
        asked[(gold, guess)] = fake_answer(gold, guess)
        return asked[(gold, guess)]

    tallies = [tally_document(d.id, [score_subject(s, inferred[d.id][s.id], matcher, uncomparable="drop-subject")
                                     for s in d.subjects]) for d in docs]
    ours = protection_rates(tallies)
    ours = {**ours, "per_tag": {t: v["cpr"] for t, v in ours["per_tag"].items()}}  # type: ignore[union-attr]
    pairs = {json.dumps([g.keyword, i.keyword]): fake_answer(g.keyword, i.keyword)
             for d in docs for s in d.subjects for g in s.attributes for i in inferred[d.id][s.id]}
    job = {"answers": pairs, "docs": [{"id": d.id, "subjects": [
        {"id": s.id, "description": s.description,
         "annotation_A": [vars(a) for a in s.attributes], "annotation_B": [vars(a) for a in inferred[d.id][s.id]]}
        for s in d.subjects]} for d in docs]}
    env = {**os.environ, "OPENAI_API_KEY": "unused-offline", "ANTHROPIC_API_KEY": "unused-offline"}
    proc = subprocess.run([sys.executable, "-c", _OFFICIAL, str(official_repo)], input=json.dumps(job), text=True,
                          capture_output=True, env=env, cwd=official_repo, timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"the official code failed:\n{proc.stderr[-2000:]}")
    official = json.loads(proc.stdout.strip().splitlines()[-1])
    keys = ("cpr", "ipr", "subjects", "attributes", "score_sum", "per_tag")
    return {"ours": {k: ours[k] for k in keys}, "official": official, "matcher_questions": len(asked),
            "equal": all(ours[k] == official[k] for k in keys)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--official-repo", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=ROOT / "tasks" / "spia" / "spia_sample.jsonl")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    result = run(args.official_repo, args.data, args.seed)
    ours, official = result["ours"], result["official"]
    print(f"{'measure':<28}{'privasis-bench':>22}{'official':>22}")
    for k in ("cpr", "ipr", "subjects", "attributes", "score_sum"):
        print(f"{k:<28}{ours[k]!r:>22}{official[k]!r:>22}")  # type: ignore[index]
    for tag in sorted(set(ours["per_tag"]) | set(official["per_tag"])):  # type: ignore[index]
        print(f"{'CPR ' + tag:<28}{ours['per_tag'].get(tag)!r:>22}{official['per_tag'].get(tag)!r:>22}")  # type: ignore[index]
    print(f"matcher questions: {result['matcher_questions']}; equal: {result['equal']}")
    return 0 if result["equal"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
