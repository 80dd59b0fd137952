"""What `leaderboard verify --changed-since BASE` re-judges on a large board, and what it costs.

A board of ``--entries`` verifiable entries (copies of the shipped ``baselines/identity`` entry, each under its own
name with a distinct line added to every output, as in ``leaderboard_verify.py``) is committed on branch ``main`` of a
temporary git repository; a pull-request branch then (a) adds one entry, and (b) edits the label of an existing one.
`leaderboard verify` runs in process through the CLI, with ``--rejudge 90`` so that every entry would be re-judged,
and with the re-judge itself replaced by a recorder (the judge is not what is measured: which entries reach it is).
Printed: the entries re-judged in full mode and in pull-request mode, and the wall time of the cheap checks over the
whole board. The full cost of a re-judge per entry is taken from a measured run (stop 59, run A in
``docs/publishing.md``: the 40 committed entries re-judged in 1,030 s with the pinned judge, about 26 s each), so the CI
estimate is stated as an estimate.

Usage: ``python benchmarks/verify_changed.py [--entries 100]``. A measuring tool, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

from leaderboard_verify import make_board  # noqa: E402 - the synthetic board of that benchmark
from typer.testing import CliRunner  # noqa: E402

import privasis_bench.cli.leaderboard_cmds as cmds  # noqa: E402
from privasis_bench.cli import app  # noqa: E402
from privasis_bench.results.files import dumps_json  # noqa: E402

#: Seconds one entry's re-judge costs in CI (measured: 40 committed entries in 1,030 s, the verify nearly alone).
REJUDGE_SECONDS = 1030 / 40


def _git(cwd: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x",
           "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd)}
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def _verify(subs: Path, *extra: str) -> tuple[list[str], float, str]:
    """(folders re-judged, wall seconds, output) of one in-process `leaderboard verify`."""
    asked: list[str] = []
    real = cmds.rejudged
    cmds.rejudged = lambda v, *a, **k: asked.append(v.path.parent.name)
    try:
        start = time.perf_counter()
        out = CliRunner().invoke(app, ["leaderboard", "verify", str(subs), "--rejudge", "90", "--judge",
                                       "llamacpp:smollm2", "--seed", "1", *extra], catch_exceptions=False)
        took = time.perf_counter() - start
    finally:
        cmds.rejudged = real
    if out.exit_code:
        raise SystemExit(f"verify failed:\n{out.output[-2000:]}")
    return asked, took, out.output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100)
    args = parser.parse_args()
    os.environ.pop("PRIVASIS_BENCH_SUBMITTER", None)
    os.environ["PRIVASIS_BENCH_BASE_REF"] = "main"
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        subs = repo / "submissions"
        folders = make_board(subs, args.entries + 1, 0.0, False)
        extra = folders.pop()  # written now, committed only on the pull-request branch
        hidden = Path(tmp) / "pending"
        extra.parent.rename(hidden)
        _git(repo, "init", "-q", "-b", "main")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", f"{args.entries} verified entries")
        _git(repo, "checkout", "-q", "-b", "pr")
        asked, full_s, _ = _verify(subs)
        print(f"board: {args.entries} entries on main; full mode re-judged {len(asked)} entries, "
              f"cheap checks {full_s:.1f} s ({full_s / args.entries:.2f} s per entry)")
        hidden.rename(extra.parent)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", "a pull request adding one entry")
        asked, pr_s, out = _verify(subs, "--changed-since", "main")
        summary = next(line for line in out.splitlines() if line.startswith("changed since"))
        print(f"pull request adding {extra.parent.name}: re-judged {asked} ({pr_s:.1f} s of cheap checks)\n  {summary}")
        target = folders[42]
        sub = json.loads((target / "submission.json").read_text())
        sub["label"] = "an update of an existing entry"
        (target / "submission.json").write_text(dumps_json(sub))
        asked, _, _ = _verify(subs, "--changed-since", "main")
        print(f"the same pull request also editing {target.parent.name}: re-judged {sorted(asked)}")
        committed = len(list((REPO / "submissions").glob("*/*/submission.json")))
        for n, label in ((committed, f"the committed board ({committed} entries)"), (args.entries, "this board")):
            print(f"estimate, {label}: full .ci/run verify {n * REJUDGE_SECONDS / 60:.0f} min of re-judge + cheap "
                  f"checks; pull-request mode adding one entry {REJUDGE_SECONDS / 60:.1f} min + cheap checks")


if __name__ == "__main__":
    main()
