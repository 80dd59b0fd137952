"""Lossless chunking at natural boundaries (recipe step 1 of the decomposition pipeline).

A chunk is a contiguous slice of the text, so ``"".join(chunks) == text`` always holds (every separator stays
with the chunk before it). Each paragraph (separated by blank lines) of at most ``max_chars`` characters is one
chunk; a longer paragraph is split between lines, keeping a run of list items or table rows
together when the run fits; a long single line is split between sentences, never after an abbreviation, a
title, an initial, or a period inside a number, version, URL or e-mail address (those have no space after the
period, or are listed below). Only a single word longer than ``max_chars`` is cut inside the word.
"""

from __future__ import annotations

import re

_PARAGRAPH_END = re.compile(r"\n[ \t]*\n\s*")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•·]|\d{1,3}[.)]|[a-zA-Z][.)])\s+")
_TABLE_ROW = re.compile(r"\|.*\||\t")
# A sentence ends at . ! ? (optionally followed by closing quotes/brackets) and then whitespace.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s+")
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st no nos vs ver v etc e.g i.e approx dept inc ltd co corp fig ref vol rev gen col capt lt sgt "
    "mt ft ave blvd rd jan feb mar apr jun jul aug sep sept oct nov dec p.m a.m u.s u.k ph.d m.d b.a m.a".split()
)


def _slices(text: str, pattern: re.Pattern[str]) -> list[str]:
    """Split ``text`` after each match of ``pattern`` (the match stays with the piece before it)."""
    pieces, start = [], 0
    for m in pattern.finditer(text):
        pieces.append(text[start : m.end()])
        start = m.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def _is_abbreviation(piece: str) -> bool:
    """True when ``piece`` ends in a period that closes an abbreviation, a title or a single initial."""
    stripped = piece.rstrip()
    if not stripped.endswith("."):
        return False
    word = stripped.split()[-1].rstrip(".").lower() if stripped.split() else ""
    word = word.lstrip("(\"'[")
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())


def sentences(line: str) -> list[str]:
    """Split one line into sentences (each keeps its trailing whitespace); abbreviations do not end one."""
    out: list[str] = []
    for piece in _slices(line, _SENTENCE_END):
        if out and (_is_abbreviation(out[-1]) or piece[:1].islower()):  # "e.g. the", "Dr. Lee": one sentence
            out[-1] += piece
        else:
            out.append(piece)
    return out


def _line_units(block: str) -> list[str]:
    """Lines of a paragraph, with consecutive list items or table rows grouped into one unit."""
    units: list[str] = []
    previous_kind = None
    for line in block.splitlines(keepends=True):
        kind = "list" if _LIST_ITEM.match(line) else "table" if _TABLE_ROW.search(line) else None
        if kind is not None and kind == previous_kind:
            units[-1] += line
        else:
            units.append(line)
        previous_kind = kind
    return units


def _hard_split(piece: str, max_chars: int) -> list[str]:
    """Split between words; a single over-long word is cut at ``max_chars``."""
    words = re.findall(r"\S+\s*|\s+", piece)
    return _pack([w[i : i + max_chars] for w in words for i in range(0, len(w), max_chars)], max_chars)


def _pack(pieces: list[str], max_chars: int) -> list[str]:
    """Greedily join consecutive pieces into chunks of at most ``max_chars`` (pieces are each small enough)."""
    chunks: list[str] = []
    for piece in pieces:
        if chunks and len(chunks[-1]) + len(piece) <= max_chars:
            chunks[-1] += piece
        else:
            chunks.append(piece)
    return chunks


def _split_piece(piece: str, max_chars: int, level: int) -> list[str]:
    """Pieces of at most ``max_chars``: by line units, then lines, then sentences, then words."""
    if len(piece) <= max_chars:
        return [piece]
    splitters = (
        _line_units,
        lambda p: p.splitlines(keepends=True),
        sentences,
        lambda p: _hard_split(p, max_chars),
    )
    for depth in range(level, len(splitters)):
        parts = splitters[depth](piece)
        if len(parts) > 1:
            small = [s for part in parts for s in _split_piece(part, max_chars, depth + 1)]
            return _pack(small, max_chars)
    return _hard_split(piece, max_chars)


def chunk_text(text: str, max_chars: int = 512) -> list[str]:
    """Chunks of at most ``max_chars`` characters that rejoin to exactly ``text``."""
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    if not text:
        return []
    chunks: list[str] = []
    for block in _slices(text, _PARAGRAPH_END):
        chunks.extend(_split_piece(block, max_chars, 0))  # paragraphs are never packed together
    merged: list[str] = []
    for chunk in chunks:  # whitespace-only slices (leading blank lines) join a neighbour
        if merged and (not chunk.strip() or not merged[-1].strip()):
            merged[-1] += chunk
        else:
            merged.append(chunk)
    return merged
