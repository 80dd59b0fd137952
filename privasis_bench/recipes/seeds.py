"""Seed profiles for synthesis, drawn from the recipe's seed files with a per-record generator."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from privasis_bench.errors import TaskConfigError
from privasis_bench.recipes.config import RecipeConfig


@dataclass(frozen=True)
class SeedFiles:
    """The contents of a recipe's seed files."""

    first_names: list[str]
    values: dict[str, list[str]]
    events: list[dict[str, Any]]

    @classmethod
    def load(cls, recipe: RecipeConfig) -> "SeedFiles":
        """Read ``first_names`` (one per line, ``#`` comments), ``values`` and ``life_events`` (YAML)."""
        names_path = recipe.seed_file("first_names")
        names = [ln.strip() for ln in names_path.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.startswith("#")]
        values = _yaml(recipe.seed_file("values"))
        events = _yaml(recipe.seed_file("life_events"))
        for key in ("marital_status", "income_class", "morality", "native_language", "blood_type", "sex", "ethnicity", "formality"):
            if not isinstance(values.get(key), list) or not values[key]:
                raise TaskConfigError(str(recipe.seed_file("values")), key, "must be a non-empty list")
        if not isinstance(events, list) or not all(isinstance(e, dict) and e.get("event") and e.get("attributes") for e in events):
            raise TaskConfigError(str(recipe.seed_file("life_events")), None, "must be a list of {event, attributes} entries")
        if not names:
            raise TaskConfigError(str(names_path), None, "holds no names")
        return cls(names, values, events)


def _yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise TaskConfigError(str(path), None, f"invalid YAML: {str(exc).splitlines()[0]}") from None


def draw_seed(files: SeedFiles, recipe: RecipeConfig, rng: np.random.Generator) -> dict[str, Any]:
    """One seed: demographics, a date, one life event and the event attribute the record will share."""
    p = recipe.synthesis
    pick = lambda items: items[int(rng.integers(len(items)))]  # noqa: E731
    start = dt.date(p.year_range[0], 1, 1).toordinal()
    end = dt.date(p.year_range[1], 12, 31).toordinal()
    event = pick(files.events)
    formal = bool(rng.random() < p.formal_probability)
    return {
        "first_name": pick(files.first_names),
        "date": dt.date.fromordinal(int(rng.integers(start, end + 1))).isoformat(),
        "age": int(rng.integers(p.age_range[0], p.age_range[1] + 1)),
        "marital_status": pick(files.values["marital_status"]),
        "income_class": pick(files.values["income_class"]),
        "morality": pick(files.values["morality"]),
        "native_language": pick(files.values["native_language"]),
        "blood_type": pick(files.values["blood_type"]),
        "event": event["event"],
        "event_attributes": list(event["attributes"]),
        "shared_attribute": pick(list(event["attributes"])),
        "formality": files.values["formality"][0 if formal else min(1, len(files.values["formality"]) - 1)],
    }
