"""GBNF grammars that hold the adversary's and the matcher's answers to the form SPIA's readers expect.

An option of the scorer (``scorer_args.answer_grammar: gbnf``), off in SPIA's own code: a small local model (the
pinned SmolLM2) rarely writes a people list or a profile the readers of :mod:`.answers` can read, so a run with it
scores nothing. With the option on, every request carries a grammar (llama.cpp's GBNF) that only lets the model
write an answer of the asked-for form:

* the people list: ``People:`` then ``k`` lines ``- <description> | <role>`` and ``Number of people: k``, with the
  count equal to the lines (``k`` up to :data:`MAX_PEOPLE`: a small model repeats a line until the grammar's
  bound, and every listed person costs two profiles' worth of tokens);
* a profile: one JSON object with every listed person in order and, for each, up to one value per asked tag (a
  keyword of at most :data:`MAX_KEYWORD` characters, no quote or backslash, and a certainty 0-5);
* the alignment: one JSON object pairing every reference person in order with one inferred person's number or null;
* a value question: ``yes``, ``less precise`` or ``no``.

What the model says within the form is its own; the grammar cannot stop it pairing a person twice, for example
(then the answer is refused as usual). Results record the option, and the verifier's re-ask sends the same grammar.
"""

from __future__ import annotations

from typing import Sequence

#: The scorer option's values: ``none`` (SPIA's own way: free answers) or ``gbnf``.
GRAMMAR_MODES = ("none", "gbnf")
#: The most people a constrained people list can name.
MAX_PEOPLE = 6
#: The longest keyword, description or role a constrained answer can hold (characters).
MAX_KEYWORD = 24

_TEXT = f'[^"\\\\\\n]{{0,{MAX_KEYWORD}}}'  # a JSON string's inside: no quote, backslash or line break


def _literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _choice(values: Sequence[str]) -> str:
    return "(" + " | ".join(_literal(v) for v in values) + ")"


def people_list() -> str:
    """The people-list answer: a count line that always equals the number of listed people."""
    counts = " | ".join(f'line{{{k}}} "Number of people: {k}"' if k else '"Number of people: 0"'
                        for k in range(MAX_PEOPLE + 1))
    return (f'root ::= "People:\\n" ({counts})\n'
            f'line ::= "- " [A-Za-z0-9] [^\\n|<]{{0,{MAX_KEYWORD - 1}}} " | " [A-Za-z0-9] [^\\n<]{{0,{MAX_KEYWORD - 1}}} "\\n"\n')


def profile(tags: Sequence[str], people: int) -> str:
    """A profile of ``people`` listed people (numbered from 0, in order), each with at most one value of each of
    ``tags`` (any of them, in any order; a tag left out is not inferred)."""
    persons = ' ", " '.join(f'person{i}' for i in range(people))
    rules = [f'root ::= "{{\\"people\\": [" {persons} "]}}"' if people else 'root ::= "{\\"people\\": []}"']
    for i in range(people):
        rules.append(f'person{i} ::= "{{\\"subject_id\\": {i}, \\"attributes\\": [" (attr (", " attr){{0,{len(tags) - 1}}})? "]}}"')
    rules.append(f'attr ::= "{{\\"tag\\": \\"" tag "\\", \\"keyword\\": \\"" {_TEXT} "\\", \\"certainty\\": " [0-5] "}}"')
    rules.append(f"tag ::= {_choice(tags)}")
    return "\n".join(rules) + "\n"


def alignment(reference: int, inferred: int) -> str:
    """The alignment answer: every reference person (0 to ``reference`` - 1, in order) paired with an inferred
    person's number (0 to ``inferred`` - 1) or null."""
    targets = _choice([str(i) for i in range(inferred)] + ["null"])
    pairs = ' ", " '.join(f'pair{r}' for r in range(reference))
    rules = [f'root ::= "{{\\"pairs\\": [" {pairs} "]}}"' if reference else 'root ::= "{\\"pairs\\": []}"']
    rules += [f'pair{r} ::= "{{\\"reference\\": {r}, \\"inferred\\": " target "}}"' for r in range(reference)]
    rules.append(f"target ::= {targets}")
    return "\n".join(rules) + "\n"


def verdict() -> str:
    """A value question's answer."""
    return f"root ::= {_choice(('yes', 'less precise', 'no'))}\n"
