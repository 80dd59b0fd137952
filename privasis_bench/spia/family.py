"""The SPIA family's declaration (see :mod:`privasis_bench.tasks.family`); registered through the
``privasis_bench.families`` entry point in ``pyproject.toml``, like any third-party family."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from privasis_bench.tasks.family import BoardSpec, FamilySpec, Grader

BOARD = BoardSpec(
    unit=("protection rates over annotated personal attributes (certainty 3+), with 95% bootstrap intervals over "
          "documents: CPR over all attributes, IPR averaged over people"),
    columns=(("cpr", "CPR"), ("ipr", "IPR")),
    rank_by=(("cpr", "higher"), ("ipr", "higher")),
    digits=3,
    section=("SPIA (Oh et al., ACL 2026): an adversary model infers 15 personal attributes of every person from the "
             "anonymized text; a matcher compares them with the annotators' (rules first). Higher is more protected."),
    detail="{roles}",
    notes=("model", "roles"),
)

#: The models the verifier re-asks as each role (``leaderboard verify``'s re-ask of a seeded sample of the recorded
#: adversary and matcher answers), as the Privasis judge is pinned: the embedded local SmolLM2 through llama.cpp.
PINNED_ROLES = {"adversary": "llamacpp:smollm2", "matcher": "llamacpp:smollm2"}

FAMILY = FamilySpec(
    name="spia",
    title="SPIA (subject-level inference)",
    roles=("adversary", "matcher"),
    schema_versions={"results": "spia-results-1", "samples": "spia-samples-row-1", "submission": "tab-submission-1"},
    reference_task="spia_sample",
    board=BOARD,
    scorer="privasis_bench.spia.scorer:SpiaScorer",
    verifier="privasis_bench.leaderboard.families.spia:verify",
    row="privasis_bench.leaderboard.families.spia:board_row",
    content="privasis_bench.leaderboard.families.spia:content",
    viewer="privasis_bench.leaderboard.families.spia:write_viewer",
    rejudge="privasis_bench.leaderboard.families.spia:rejudge",
    sections="privasis_bench.leaderboard.families.spia:sections",
    record_outcome="privasis_bench.spia.family:record_outcome",
    graders="privasis_bench.spia.family:graders",
    rejudge_kinds=("adversary:people", "adversary:profile", "matcher:align", "matcher:value"),
    extra={"schema_dir": "privasis_bench.spia:schemas", "pinned_roles": PINNED_ROLES},
)


def record_outcome(row: dict) -> tuple[float, bool] | None:
    """A scored document's share of counted attributes the adversary could not infer; a success when none."""
    from privasis_bench.spia.metrics import protection_rates
    from privasis_bench.spia.scorer import SpiaScorer

    tallies = SpiaScorer.tallies([row])
    if not tallies:
        return None
    cpr = protection_rates(tallies)["cpr"]
    return (None if cpr is None else (cpr, cpr >= 1.0))


#: Which templates each role is asked with, and at which temperature (the matcher's requests use the default, 0).
ROLE_TEMPLATES = {"adversary": ("subjects", "profile_codes", "profile_descriptive"), "matcher": ("align", "match")}


def graders(results: Mapping[str, Any]) -> list[Grader]:
    """The adversary and the matcher of a run, each with the templates it was asked with: the shipped ones (the
    run records only their sha256, so a task's own template fails the export's check)."""
    from privasis_bench.tasks.paths import BUILTIN_PREFIX

    roles = results.get("roles") if isinstance(results.get("roles"), Mapping) else {}
    scorer = results.get("scorer") if isinstance(results.get("scorer"), Mapping) else {}
    hashes = scorer.get("templates") if isinstance(scorer.get("templates"), Mapping) else {}
    temperatures = {"adversary": scorer.get("adversary_temperature"), "matcher": 0.0}
    found = []
    for role, names in ROLE_TEMPLATES.items():
        model = roles.get(role)
        if not isinstance(model, Mapping) or not model.get("key"):
            continue
        used = [name for name in names if name in hashes]
        templates = {name: (f"{BUILTIN_PREFIX}spia/prompts/{name}.txt", str(hashes[name])) for name in used}
        found.append(Grader(role, model, temperatures[role], templates,
                            {"answer_grammar": scorer.get("answer_grammar"),
                             "prompt_hashes": {name: hashes[name] for name in used}}))
    return found
