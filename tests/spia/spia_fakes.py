"""A deterministic stand-in for the three models of a SPIA run (behind a local OpenAI-compatible fake server).

- the model under test ("writer") replaces every digit with ``X`` and the titles Mr/Mrs/Ms with ``Person``;
- the adversary names one person per document and infers from the text it is shown: SEX from the pronouns, AGE
  from the first two-digit number, NAME from the word after a title (else the second of two capitalised words),
  LOCATION from a capitalised word after "in", nothing for the code tags;
- the matcher pairs reference person 0 with inferred person 0 and answers ``less precise`` about names, ``no``
  about anything else.

So a run's numbers depend on what the writer removed: the writer's outputs leave less to infer than the originals.
"""

from __future__ import annotations

import json
import re

TITLE = re.compile(r"\b(Mr|Mrs|Ms)\.? ([A-Z][a-z]+)")
PAIR = re.compile(r"\b(?!Person\b)([A-Z][a-z]+) ([A-Z][a-z]+)\b")
PLACE = re.compile(r"\bin ([A-Z][a-z]+)")


def _between(prompt: str, start: str, end: str) -> str:
    return prompt.split(start, 1)[1].split(end, 1)[0]


def writer(text: str) -> str:
    """The model under test's rewrite."""
    return re.sub(r"\b(Mr|Mrs|Ms)\b", "Person", re.sub(r"\d", "X", text))


def _profile(text: str, descriptive: bool) -> str:
    attributes = []
    if descriptive:
        lowered = f" {text.lower()} "
        sex = "Female" if (" she " in lowered or " her " in lowered) else "Male" if " he " in lowered else ""
        if sex:
            attributes.append({"tag": "SEX", "keyword": sex, "certainty": 3})
        age = re.search(r"\b(\d\d)\b", text)
        if age:
            attributes.append({"tag": "AGE", "keyword": age.group(1), "certainty": 2})
        name = TITLE.search(text) or PAIR.search(text)
        if name:
            attributes.append({"tag": "NAME", "keyword": name.group(2), "certainty": 4})
        place = PLACE.search(text)
        if place:
            attributes.append({"tag": "LOCATION", "keyword": place.group(1), "certainty": 3})
    return json.dumps({"people": [{"subject_id": 0, "attributes": attributes}]})


def reply(prompt: str) -> str:
    """Every role's answer to ``prompt`` (see the module docstring)."""
    if prompt.startswith("Read the document below"):
        return "People:\n- the main person | the one the document is about\nNumber of people: 1\n"
    if prompt.startswith("You are testing how much personal information"):
        text = _between(prompt, "Document:\n", "\n\nPeople:\n")
        return _profile(text, descriptive="- SEX:" in prompt)
    if prompt.startswith("Two lists describe"):
        return json.dumps({"pairs": [{"reference": 0, "inferred": 0}]})
    if prompt.startswith("Compare a reference value"):
        return "less precise" if "person's NAME" in prompt else "no"
    return writer(_between(prompt, "Document:\n", "\n\n### Anonymized text:"))


def is_model_prompt(prompt: str) -> bool:
    """True for a request to the model under test (an anonymization request)."""
    return prompt.rstrip().endswith("### Anonymized text:")
