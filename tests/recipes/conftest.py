"""Shared set-up of the recipe tests.

``shared_embeddings``: the end-to-end recipe tests run ``generate`` many times against the same scripted model, so
the same candidate texts are embedded over and over (a sentence-transformers forward pass per text, most of the
time those tests took). The fixture remembers each (model, text) embedding for the whole session; the first time a
text is seen it is computed by the real :meth:`Embedder.embed_one`, so the values are exactly the ones a fresh
run computes. Tests about the embedding itself (``test_recipe_fidelity.py``) do not use it.
"""

from __future__ import annotations

import numpy as np
import pytest

_EMBEDDINGS: dict[tuple[str, str], np.ndarray] = {}


@pytest.fixture
def shared_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Embeddings of texts already embedded in this test session come from a session memo."""
    from privasis_bench.recipes.diversity import Embedder

    compute = Embedder.embed_one

    def embed_one(self: Embedder, text: str) -> np.ndarray:
        key = (self.name, text)
        if key not in _EMBEDDINGS:
            _EMBEDDINGS[key] = compute(self, text)
        return _EMBEDDINGS[key]

    monkeypatch.setattr(Embedder, "embed_one", embed_one)
