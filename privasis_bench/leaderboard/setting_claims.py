"""Settings a submission claims that the verifier checks like every other: the scoring preset, the judge label and
model back-end that submission.json repeats, and the length of the label the board shows.

* ``scoring_preset``: an entry claiming ``paper`` must record every setting of the preset at its value, and a judge
  model (:func:`~privasis_bench.protocol.presets.preset_problems`, the same check ``rescore`` runs); a default run
  that claims it, or a run with ``--judge none``, is refused.
* ``judge.label`` and ``model.backend`` in submission.json must be results.json's (the board shows them), never
  free text such as "judge openai:gpt-oss-120b (paper judge)".
* ``label``: at most :data:`MAX_LABEL_CHARS` characters (the shared free-text bound when there is one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from privasis_bench.protocol.presets import preset_problems

try:  # the board's shared free-text bounds, when this version has them
    from privasis_bench.leaderboard.text_bounds import BOUNDS as _BOUNDS  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on which modules this version ships
    _BOUNDS = {}

#: Longest ``label`` the verifier accepts (characters).
MAX_LABEL_CHARS: int = int(_BOUNDS.get("label", 200))
#: submission.json fields that must equal results.json's: (submission path, results path).
MIRRORED_EXTRA = (("judge.label", "judge.label"), ("model.backend", "model.backend"))


def _get(data: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        data = data.get(part) if isinstance(data, Mapping) else None
    return data


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def setting_problems(folder: Path, submission: Mapping[str, Any], results: Mapping[str, Any]) -> list[str]:
    """One line per claimed setting the files do not hold (empty: every claim checked out)."""
    problems = [f"{folder / 'results.json'}: {p}" for p in preset_problems(results)]
    for sub_path, res_path in MIRRORED_EXTRA:
        if _get(submission, sub_path) != _get(results, res_path):
            problems.append(f"{folder / 'submission.json'}: {sub_path} is {_short(_get(submission, sub_path))} but "
                            f"results.json {res_path} is {_short(_get(results, res_path))}")
    label = submission.get("label")
    if isinstance(label, str) and len(label) > MAX_LABEL_CHARS:
        problems.append(f"{folder / 'submission.json'}: label has {len(label)} characters, more than the "
                        f"{MAX_LABEL_CHARS} the board accepts")
    return problems
