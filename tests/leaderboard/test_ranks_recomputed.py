"""Issue 50.4: the board shows and ranks the verifier's recomputed numbers, never a submitted file's, and numbers
that show the same tie (ranks compare values rounded to the family's displayed digits)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from privasis_bench.leaderboard.build import board_rows
from privasis_bench.leaderboard.rows import rank_rows
from privasis_bench.leaderboard.verify import verify_paths

REPO = Path(__file__).resolve().parents[2]
TASK = "privasis_sample"


def _copy(root: Path, name: str) -> Path:
    return Path(shutil.copytree(REPO / "submissions" / name / TASK, root / name / TASK))


def _nudge(folder: Path, key: str, delta: float) -> None:
    """Add ``delta`` to one submitted headline number and re-hash results.json as a forger would."""
    res = json.loads((folder / "results.json").read_text("utf-8"))
    res["metrics"]["headline"][key] += delta
    text = json.dumps(res)
    (folder / "results.json").write_text(text, encoding="utf-8")
    sub = json.loads((folder / "submission.json").read_text("utf-8"))
    sub["files"]["results.json"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    (folder / "submission.json").write_text(json.dumps(sub), encoding="utf-8")


def _ranks(root: Path) -> dict[str, tuple]:
    accepted = [v for v in verify_paths([root]) if v.ok]
    return {r["name"]: (r["rank"], r["tied"], r["full_successful_record"], r.get("no_order"))
            for r in board_rows(accepted, {})}


def test_a_submitted_number_nudged_within_the_tolerance_changes_no_rank_and_no_shown_number(tmp_path):
    for name in ("scrubadub__scrubadub", "microsoft__presidio-patterns"):
        _copy(tmp_path / "before", name)
        _copy(tmp_path / "after", name)
    _nudge(tmp_path / "after" / "microsoft__presidio-patterns" / TASK, "full_successful_record", 1e-9)
    before, after = _ranks(tmp_path / "before"), _ranks(tmp_path / "after")
    assert len(after) == 2 and after == before  # still verified, same ranks, same (recomputed) numbers
    # the two entries tie on FSR (both 0.00) and stay a group with no order: no rank, and the board says why
    assert all(rank is None and "no order" in str(why) for rank, _, _, why in after.values())


def _row(name: str, value: float, family: str = "tab") -> dict:
    return {"family": family, "name": name, "task": "t", "track": "verified", "record_set": "s", "partial": False,
            "records": 10, "rankable": True, "token_recall": value}


def test_numbers_equal_to_the_shown_digits_tie_and_a_visible_difference_ranks():
    rows = rank_rows([_row("a", 0.7661), _row("b", 0.7660000001), _row("c", 0.7649)])
    got = {r["name"]: (r["rank"], r["tied"]) for r in rows}
    assert got == {"a": (1, True), "b": (1, True), "c": (3, False)}  # 0.766 and 0.766 tie; 0.765 is third
