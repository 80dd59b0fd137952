"""Background knowledge for TRIR: public documents of a population of individuals, each with its individual's id.

A background file is a JSON list (or JSON Lines) of objects ``{"individual_id": ..., "text": ...}``; an
individual may have several documents. Every problem is one line naming the file and the record.

:func:`build_background` follows the paper's recipe for TAB (§5.6): the population is a random superset of the
protected individuals ``factor`` times their number (2 in the paper), and each individual's background document
is the first ``fraction`` (10%) of the non-Procedure text of its ruling. It works on local files in TAB's schema:
the protected documents and a pool of other rulings (the individual of a TAB document is its ``doc_id``).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from privasis_bench.errors import DataError
from privasis_bench.tab.records import TabDocument

_HEADING = re.compile(r"^[A-Z][A-Z ,'’()-]{2,80}$")


@dataclass(frozen=True)
class BackgroundDoc:
    """One public document and the individual it is about."""

    individual_id: str
    text: str


def read_background(path: str | Path) -> list[BackgroundDoc]:
    """The documents of a background file (see the module docstring), checked record by record."""
    path = Path(path)
    try:
        raw_text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"{path}: background-knowledge file not found (scorer_args.background)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: background-knowledge file cannot be read ({exc})") from None
    try:
        items = json.loads(raw_text) if raw_text.lstrip().startswith("[") else \
            [json.loads(line) for line in raw_text.splitlines() if line.strip()]
    except ValueError as exc:
        raise DataError(f"{path}: not JSON or JSON Lines ({exc}); expected records "
                        '{"individual_id": ..., "text": ...}') from None
    docs = [_record(item, f"{path}: record {i + 1}") for i, item in enumerate(items)]
    if not docs:
        raise DataError(f"{path}: the background-knowledge file holds no documents")
    return docs


def _record(item: Any, where: str) -> BackgroundDoc:
    if not isinstance(item, dict):
        raise DataError(f"{where}: expected an object {{\"individual_id\": ..., \"text\": ...}}")
    ident, text = item.get("individual_id"), item.get("text")
    if not isinstance(ident, (str, int)) or isinstance(ident, bool) or str(ident).strip() == "":
        raise DataError(f"{where}: no individual_id (a non-empty string or integer naming the individual the "
                        "document is about)")
    if not isinstance(text, str) or not text.strip():
        raise DataError(f"{where} (individual_id {ident}): text must be a non-empty string")
    return BackgroundDoc(str(ident), text)


def without_procedure(text: str) -> str:
    """The text after its PROCEDURE section (from the next all-capitals heading on); all of it without one."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip().upper() != "PROCEDURE":
        return text
    for i, line in enumerate(lines[1:], start=1):
        if _HEADING.match(line.strip()) and line.strip() != "PROCEDURE":
            return "".join(lines[i:])
    return ""


def first_fraction(text: str, fraction: float) -> str:
    """The first ``fraction`` of ``text`` by characters, ending at a word boundary."""
    cut = max(1, round(len(text) * fraction))
    head = text[:cut]
    if cut < len(text) and not text[cut].isspace() and " " in head:
        head = head[:head.rfind(" ")]
    return head.strip()


def build_background(protected: Sequence[TabDocument], pool: Sequence[TabDocument], *, factor: float = 2.0,
                     fraction: float = 0.1, seed: int = 0) -> list[BackgroundDoc]:
    """The paper's background knowledge for ``protected`` drawn from ``protected`` + ``pool`` (module docstring)."""
    if factor < 1 or not 0 < fraction <= 1:
        raise DataError(f"background: factor must be >= 1 and fraction in (0, 1], got {factor} and {fraction}")
    chosen = {d.doc_id: d for d in protected}
    others = sorted({d.doc_id: d for d in pool if d.doc_id not in chosen}.values(), key=lambda d: d.doc_id)
    wanted = round(factor * len(chosen)) - len(chosen)
    if wanted > len(others):
        raise DataError(f"background: {len(chosen)} protected individuals x {factor} needs {wanted} other rulings in "
                        f"the pool, which has {len(others)}; give a larger pool or a smaller --factor")
    population = [*chosen.values(), *random.Random(seed).sample(others, wanted)]
    out = []
    for doc in sorted(population, key=lambda d: d.doc_id):
        head = first_fraction(without_procedure(doc.text) or doc.text, fraction)
        if head:
            out.append(BackgroundDoc(doc.doc_id, head))
    return out


def build_background_files(protected: Sequence[str], pool: Sequence[str], **settings: Any) -> list[BackgroundDoc]:
    """:func:`build_background` over TAB-schema files (each read and checked by the TAB loader)."""
    from privasis_bench.tab.loading import load_documents

    return build_background(load_documents(list(protected)), load_documents(list(pool)), **settings)


def write_background(path: str | Path, docs: Sequence[BackgroundDoc]) -> None:
    """Write a background file (JSON Lines)."""
    body = "".join(json.dumps({"individual_id": d.individual_id, "text": d.text}, ensure_ascii=False) + "\n" for d in docs)
    Path(path).write_text(body, encoding="utf-8")
