"""What a board row says about an entry's claims beyond its numbers: its scoring preset, why it shows no re-judge
agreement, and what stays self-reported (the verifier cannot check it beyond a sample).

* ``scoring_preset``: ``paper`` when the run used ``--preset paper`` (the verifier checked every setting of the preset
  and that a judge model was used), else ``harness`` (the harness's own rules, docs/reproducing.md).
* ``rejudge_note``: set by the build for an entry without an agreement (custom inputs the verifier cannot re-ask, not
  in the committed report, self-reported track); None when the agreement is shown.
* ``self_reported``: short lines for what the files alone state (see :func:`~.judge_cuts.self_reported`).
"""

from __future__ import annotations

from typing import Any, Mapping

from privasis_bench.leaderboard.judge_cuts import self_reported

#: What the board shows for an entry that claims no preset.
HARNESS_RULES = "harness"


def board_claims(v: Any, submission: Mapping[str, Any]) -> dict[str, Any]:
    """The row fields above for one verified entry (``v``: a ``Verified``)."""
    preset = submission.get("scoring_preset")
    note = getattr(v, "rejudge_note", None)
    return {"scoring_preset": preset if isinstance(preset, str) else HARNESS_RULES,
            "rejudge_note": note if isinstance(note, str) else None,
            "self_reported": self_reported(getattr(v, "results", None) or {})}
