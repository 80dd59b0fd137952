"""SPIA's prompts (our own wording, shipped as templates under ``tasks/spia/prompts/``) and how they are filled.

Five templates: ``subjects`` (who the people are), ``profile_codes`` and ``profile_descriptive`` (the adversary's
two profiling calls: the 5 code tags, the 10 descriptive ones), ``align`` (pair the reference people with the
inferred ones) and ``match`` (is an inferred value the reference value?). A task may point any of them at a file of
its own; results record each template's sha256.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from privasis_bench.fsutil import read_template_text
from privasis_bench.spia.records import Attribute, Subject
from privasis_bench.tasks.paths import builtin_tasks_dir

TEMPLATE_NAMES = ("subjects", "profile_codes", "profile_descriptive", "align", "match")
PLACEHOLDERS: dict[str, tuple[str, ...]] = {
    "subjects": ("text",), "profile_codes": ("text", "subjects"), "profile_descriptive": ("text", "subjects"),
    "align": ("reference", "inferred"), "match": ("tag", "gold", "guess"),
}
#: The adversary's sampling temperature in SPIA's code.
ADVERSARY_TEMPERATURE = 0.1


@dataclass(frozen=True)
class Templates:
    """The five template texts, by name."""

    texts: Mapping[str, str]

    def sha256(self) -> dict[str, str]:
        """Each template's sha256 (recorded in results)."""
        return {k: hashlib.sha256(v.encode("utf-8")).hexdigest() for k, v in sorted(self.texts.items())}


def load_templates(overrides: Mapping[str, str | Path] | None = None) -> Templates:
    """The shipped templates, with any ``overrides`` (name -> file) read instead; each must hold its placeholders."""
    texts = {}
    for name in TEMPLATE_NAMES:
        path = Path((overrides or {}).get(name) or builtin_tasks_dir() / "spia" / "prompts" / f"{name}.txt")
        text = read_template_text(path, f"SPIA {name} template")
        missing = [p for p in PLACEHOLDERS[name] if "{" + p + "}" not in text]
        if missing:
            raise ValueError(f"{path}: the {name} template lacks {', '.join('{' + m + '}' for m in missing)}")
        texts[name] = text
    return Templates(texts)


def fill(template: str, **values: str) -> str:
    """Replace ``{name}`` for the given names only, in one pass (other braces, e.g. JSON examples, stay)."""
    pattern = re.compile(r"\{(" + "|".join(re.escape(k) for k in values) + r")\}")
    return pattern.sub(lambda m: values[m.group(1)], template)


def subject_lines(descriptions: Sequence[str]) -> str:
    """The numbered people list the profiling prompts show."""
    return "\n".join(f"{i}. {d}" for i, d in enumerate(descriptions))


def people_block(people: Sequence[tuple[str, Sequence[Attribute]]]) -> str:
    """People for the alignment prompt: number, description, and the values that have a keyword."""
    lines = []
    for i, (description, attributes) in enumerate(people):
        values = "; ".join(f"{a.tag}={a.keyword}" for a in attributes if a.keyword and a.certainty)
        lines.append(f"{i}. {description}" + (f" ({values})" if values else ""))
    return "\n".join(lines) or "(nobody)"


def reference_people(subjects: Sequence[Subject]) -> list[tuple[str, Sequence[Attribute]]]:
    """The gold subjects as (description, values) for :func:`people_block`."""
    return [(s.description, s.attributes) for s in subjects]
