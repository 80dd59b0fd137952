"""Shared set-up of the adversarial tests: edit a submission the way a careful forger does (every hash and derived
number made to match), so that only the check under test can catch it. Nothing forged is shipped: every attack is
built here from the honest test entries of :mod:`leaderboard_fakes`."""

from __future__ import annotations

import json
from pathlib import Path

from privasis_bench.leaderboard.claims import derive_counts
from privasis_bench.leaderboard.provenance import sha256_file
from privasis_bench.results.files import dumps_json
from privasis_bench.results.rescore import rescore_task


def read_json(path: Path) -> dict:
    return json.loads(path.read_text())


def rows_of(folder: Path) -> list[dict]:
    return [json.loads(x) for x in (folder / "samples.jsonl").read_text().splitlines()]


def rewrite(folder: Path, rows: list[dict] | None = None, results: dict | None = None, sub: dict | None = None) -> None:
    """Write edited files and make every file hash in submission.json match."""
    if rows is not None:
        (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if results is not None:
        (folder / "results.json").write_text(dumps_json(results))
    sub = sub if sub is not None else read_json(folder / "submission.json")
    sub["files"] = {name: sha256_file(folder / name) for name in sub["files"]}
    (folder / "submission.json").write_text(dumps_json(sub))


def rescored(folder: Path) -> None:
    """Recompute results.json's metrics and counts from the (edited) rows, as a forger would."""
    res = read_json(folder / "results.json")
    res["metrics"] = rescore_task(folder).results["metrics"]
    res["counts"]["off_label"] = derive_counts(rows_of(folder)).off_label
    rewrite(folder, results=res)


def claim(folder: Path, edit_results=None, edit_sub=None) -> None:
    """Edit results.json and submission.json together (a claim both files make)."""
    res, sub = read_json(folder / "results.json"), read_json(folder / "submission.json")
    if edit_results:
        edit_results(res)
    if edit_sub:
        edit_sub(sub)
    (folder / "results.json").write_text(dumps_json(res))
    rewrite(folder, sub=sub)


def forge_keep(folder: Path, count: int) -> list[str]:
    """Flip ``count`` judged keep decisions consistently (raw answer, verdict, metrics); returns their names."""
    rows = rows_of(folder)
    flipped = [k for r in rows for k in r.get("keep") or [] if k["via"] == "judge"][:count]
    for k in flipped:
        answer = "NO" if k["retained"] else "YES"
        k.update(inclusion_answer=answer, inclusion_answer_raw=answer, retained=not k["retained"])
    rewrite(folder, rows=rows)
    rescored(folder)
    return [k["name"] for k in flipped]
