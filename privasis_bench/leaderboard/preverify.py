"""What ``submit`` checks before writing: the staged folders, verified exactly as ``leaderboard verify`` would.

The files submit is about to write (results.json made portable, samples.jsonl, submission.json) are put in a
private temporary copy laid out as ``<entry>/<task>/`` and verified there with the same code CI runs; every problem
line names the folder the entry would be written to, never the temporary one. Ownership against entries already on
the board is ``submit``'s own name check plus CI's (it needs the base branch).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from privasis_bench.leaderboard.verify import verify_submission


def unverifiable(staged: list[tuple[Path, dict[str, str]]]) -> list[str]:
    """Every problem ``leaderboard verify`` finds in the staged folders ((target folder, {file name: text}) each)."""
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="privasis-submit-") as tmp:
        for out, files in staged:
            folder = Path(tmp) / out.parent.name / out.name
            folder.mkdir(parents=True, exist_ok=True)
            for name, text in files.items():
                (folder / name).write_text(text, encoding="utf-8")
            outcome = verify_submission(folder)
            problems += [p.replace(str(folder), str(out)) for p in outcome.problems]
    return problems
