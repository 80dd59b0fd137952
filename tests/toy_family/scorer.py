"""The toy family's scorer: four notes of its own (``tasks/notes.json``), one question to the ``attacker`` role per
rewritten note.

The score is the fraction of scored notes whose city the attacker did not name in its answer (``protected``). A
failed attacker call is recorded on its row (``attacker_error``) and the note is not scored, never counted as
protected.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Mapping

from privasis_bench.adapters.base import ChatRequest
from privasis_bench.data.records import Record
from privasis_bench.data.system_output import SystemOutput
from privasis_bench.fsutil import read_template_text
from privasis_bench.tasks.scoring import OutputScorer

INSTRUCTION = "Rewrite the note so that nobody can tell which city the person lives in."


def named(city: str, answer: str) -> bool:
    """Whether the attacker's answer names the note's city (the one decision the family scores)."""
    return city.casefold() in answer.casefold()


def notes(task: Any) -> list[dict[str, str]]:
    """The task's notes (id, text, city), from its own data file."""
    return json.loads(Path(task.dataset.data_files[0]).read_text(encoding="utf-8"))


#: The attacker's question, a template the family ships (``{text}``: the rewritten note).
ATTACK_TEMPLATE = Path(__file__).parent / "tasks" / "attack.txt"


def attack_template() -> str:
    """The text of the attacker's question template."""
    return read_template_text(ATTACK_TEMPLATE, "toy attack template")


def attack_request(text: str) -> ChatRequest:
    """The one question the attacker is asked about a rewritten note."""
    return ChatRequest.user(attack_template().replace("{text}", text), max_tokens=16)


class ToyScorer(OutputScorer):
    """The toy family's scorer (see the module docstring)."""

    name = "toy"

    def __init__(self, task: Any) -> None:
        self.task = task
        self.notices: list[str] = []
        self.notes = notes(task)
        self.cities = {n["id"]: n["city"] for n in self.notes}

    def records(self, limit: int | None = None) -> list[Record]:
        """The notes as records (the first ``limit`` of them)."""
        return [Record(id=n["id"], record_type="toy", text=n["text"], base_instruction=INSTRUCTION,
                       smoothed_instruction=INSTRUCTION, reference_sanitized="", targets=(), keep=())
                for n in self.notes[:limit]]

    def read_predictions(self, path: str) -> dict[str, SystemOutput]:
        """``{note_id: rewritten text}``."""
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        return {nid: SystemOutput(text=str(text)) for nid, text in raw.items()}

    def describe(self) -> dict[str, Any]:
        """What produced the numbers."""
        return {"name": self.name, "attacker": "asks each note's city from the rewrite", "notes": len(self.notes),
                "template": hashlib.sha256(attack_template().encode("utf-8")).hexdigest()}

    def role_requests(self, record: Record, text: str) -> dict[str, list[ChatRequest]]:
        """What scoring one record asks each role (read by ``run --plan``)."""
        return {"attacker": [attack_request(text)]}

    def score(self, outputs: dict[str, SystemOutput], *, bootstrap_samples: int, seed: int, confidence: float,
              failed_as_empty: bool = False, roles: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Ask the attacker about every output; one row per note."""
        rows: list[dict[str, Any]] = []
        asked: list[tuple[dict[str, Any], ChatRequest]] = []
        for nid, out in outputs.items():
            text = out.text if out.text is not None else ("" if failed_as_empty else None)
            row = {"id": nid, "output": text, "scored": False, "guess": None, "protected": None}
            rows.append(row)
            if text is not None:
                asked.append((row, attack_request(text)))
        answers = roles["attacker"].run([r for _, r in asked], desc="attack toy") if asked else []
        for (row, _), answer in zip(asked, answers):
            if answer.text is None:
                row["attacker_error"] = answer.error or "failed"
                continue
            row.update(guess=answer.text.strip(), scored=True, protected=not named(self.cities[row["id"]], answer.text))
        return self.rescore(rows, {}, bootstrap_samples=bootstrap_samples, seed=seed, confidence=confidence), rows

    @staticmethod
    def rescore(rows: list[dict[str, Any]], stored: dict[str, Any], **settings: Any) -> dict[str, Any]:
        """The metrics from samples rows (no model)."""
        scored = [r for r in rows if r.get("scored")]
        protected = sum(1 for r in scored if r.get("protected")) / len(scored) if scored else None
        return {"scorer": "toy", "protected": protected, "scored_documents": len(scored),
                "bootstrap": {"samples": settings["bootstrap_samples"], "seed": settings["seed"],
                              "confidence": settings["confidence"], "unit": "note"}}

    @staticmethod
    def compare(rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]], **settings: Any) -> dict[str, Any]:
        """The two runs' protected fractions on their common notes (no interval: four notes are too few)."""
        a = {r["id"]: r for r in rows_a if r.get("scored")}
        b = {r["id"]: r for r in rows_b if r.get("scored")}
        common = sorted(set(a) & set(b))
        pa = sum(bool(a[i]["protected"]) for i in common) / len(common) if common else None
        pb = sum(bool(b[i]["protected"]) for i in common) / len(common) if common else None
        diff = None if pa is None or pb is None else pa - pb
        return {"common_records": len(common), "bootstrap": {"samples": settings.get("samples"), "seed": settings.get("seed")},
                "metrics": {"protected": {"a": pa, "b": pb, "diff": diff, "ci_low": None, "ci_high": None,
                                          "p_value": None}}}
