"""Whole-document embeddings for NMI as the paper authors' clustering code computes them (``nmi_variant:
authors_code``; ``eval_doc_clustering.py`` of ``IldikoPilan/text_sanitization``).

The default NMI embedder (a sentence-transformers model) reads only the first window of each document (256 word
pieces for the packaged model). The authors' code instead reads the model's last hidden states over the whole
document and averages them:

- the text is tokenized with the special tokens and padded to the model's maximum length ``block`` (512 for
  BERT); padding positions are attended (no attention mask is passed) and take part in the average;
- a longer text is cut into consecutive blocks of ``block`` pieces, the last block being the final ``block``
  pieces (so it overlaps the one before); every piece's hidden state is kept once (the overlap from the last
  block) and all of them are averaged.

The code as written never advances to the second block: every block it builds is the first one, so a longer text
is embedded from its first ``block`` pieces only. That bug is reproduced only on request
(``reproduce_bugs: [nmi_first_block_repeated]``), never by default.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from privasis_bench.errors import PrivasisError
from privasis_bench.replacement.similarity import model_path

#: The authors' code's NMI bug that ``reproduce_bugs`` may name.
NMI_BUGS = ("nmi_first_block_repeated",)


def block_rows(length: int, block: int) -> list[tuple[int, int]]:
    """The (start, end) piece ranges of the blocks a ``length``-piece text is read in (see the module docstring)."""
    if length <= block:
        return [(0, length)]
    starts = list(range(0, length - block, block))
    return [(s, s + block) for s in starts] + [(length - block, length)]


def kept_rows(length: int, block: int) -> list[int]:
    """Indices into the concatenated block outputs that keep each piece once (the overlap from the last block)."""
    blocks = block_rows(length, block)
    if len(blocks) == 1:
        return list(range(blocks[0][1] - blocks[0][0]))
    last = (len(blocks) - 1) * block
    return list(range(length - block)) + list(range(last, last + block))


class BlockEmbedder:
    """Mean of a transformer's last hidden states over the whole document, read in blocks (module docstring)."""

    def __init__(self, name: str, first_block_repeated: bool = False, loaded: tuple[Any, Any] | None = None) -> None:
        self.name, self.first_block_repeated = name, first_block_repeated
        self.tokenizer, self.model = loaded or _load(name)
        limit = getattr(self.model.config, "max_position_embeddings", None) or 512
        self.block = int(min(self.tokenizer.model_max_length, limit))
        self._memo: dict[str, np.ndarray] = {}

    def describe(self) -> dict[str, Any]:
        """The model and how documents are read (recorded in results)."""
        reading = ("first block only (reproduced bug nmi_first_block_repeated)" if self.first_block_repeated
                   else "whole document in blocks")
        return {"model": self.name, "max_seq_length": self.block, "variant": "authors_code",
                "embedding": f"mean of last hidden states, padded to {self.block} pieces, padding attended; {reading}"}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One embedding per text (rows), remembered per text."""
        for text in dict.fromkeys(texts):
            if text not in self._memo:
                self._memo[text] = self.embed_one(text)
        return np.vstack([self._memo[t] for t in texts]) if texts else np.zeros((0, self.model.config.hidden_size))

    def embed_one(self, text: str) -> np.ndarray:
        """The embedding of one document."""
        import torch

        ids = self.tokenizer.encode(text, truncation=False, padding="max_length", max_length=self.block,
                                    add_special_tokens=True)
        if self.first_block_repeated:
            blocks, keep = [(0, min(len(ids), self.block))], None
        else:
            blocks, keep = block_rows(len(ids), self.block), kept_rows(len(ids), self.block)
        batch = torch.tensor([ids[s:e] for s, e in blocks])
        with torch.no_grad():
            hidden = self.model(batch)[0]
        rows = hidden.reshape(-1, hidden.shape[-1])
        if keep is not None:
            rows = rows[keep]
        return rows.mean(dim=0).numpy().astype(float)


def _load(name: str) -> tuple[Any, Any]:
    """Tokenizer and encoder ``name`` (a folder, an installed model package or the local cache; offline only)."""
    try:
        from transformers import AutoModel, AutoTokenizer
    except ImportError:
        raise PrivasisError(f"nmi_model {name!r} with nmi_variant authors_code needs torch and transformers: "
                            "pip install 'privasis-bench[hf]'") from None
    path = model_path(name)
    try:
        return AutoTokenizer.from_pretrained(path, local_files_only=True), AutoModel.from_pretrained(
            path, local_files_only=True).eval()
    except (OSError, ValueError) as exc:
        raise PrivasisError(f"nmi_model {name!r} cannot be loaded offline (not a folder, not an installed model "
                            f"package, not in the local Hugging Face cache: {type(exc).__name__})") from None
