"""Information content from a masked language model, with the paper's alternating masks (§4.1.1).

Masking every span at once would leave the model no context, so the spans take turns: in pass ``k`` (``k = 0 ..
N-1``) the word pieces of every span whose index ``i`` has ``i mod N == k`` are replaced by the mask token and the
other spans stay as context. ``Pr(t)`` is the model's probability of the least likely original word piece of the
span. Long documents are read in consecutive windows of ``window`` word pieces.

``variant="authors_code"`` reads the text as the TPS authors' code (``eval_TPS.py``) does: the word pieces of the
whole text with the tokenizer's special tokens, cut into consecutive segments of ``window`` pieces (100 there)
with no special tokens added per segment, the last segment padded, all segments in one batch, and the masked
positions given attention 0 (besides carrying the mask token).

The paper's model is ``bert-base-uncased`` with ``N = 6``. It is loaded from a local folder or the local Hugging
Face cache only: offline without the model, :func:`load_masked_lm` fails at once with one line naming it.
"""

from __future__ import annotations

from typing import Any, Sequence

from privasis_bench.errors import PrivasisError

PAPER_MODEL = "bert-base-uncased"
PAPER_SPACING = 6
#: The authors' code's segment length, in word pieces.
AUTHORS_WINDOW = 100


def load_masked_lm(name: str) -> tuple[Any, Any]:
    """Tokenizer and masked LM ``name`` (a folder, or a hub id already in the local cache)."""
    try:
        from transformers import AutoModelForMaskedLM, AutoTokenizer
    except ImportError:
        raise PrivasisError(f"information_content mlm:{name} needs torch and transformers: "
                            "pip install 'privasis-bench[hf]' (or use information_content: wordfreq)") from None
    try:
        tokenizer = AutoTokenizer.from_pretrained(name, local_files_only=True)
        model = AutoModelForMaskedLM.from_pretrained(name, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise PrivasisError(f"masked language model {name!r} cannot be loaded offline (not a folder, not in the local "
                            f"Hugging Face cache: {type(exc).__name__}); download it where the hub is reachable "
                            f"(huggingface-cli download {name}) or set information_content: wordfreq") from None
    return tokenizer, model.eval()


def mask_passes(n_spans: int, spacing: int) -> list[list[int]]:
    """The alternating scheme: for each pass, the indices of the spans masked in it (every ``spacing``-th span)."""
    if spacing < 1:
        raise PrivasisError(f"mask_spacing must be at least 1, got {spacing}")
    return [list(range(k, n_spans, spacing)) for k in range(min(spacing, n_spans))]


class MaskedLMEstimator:
    """``Pr(t)`` from a masked LM with alternating masks (see the module docstring)."""

    def __init__(self, model: str = PAPER_MODEL, spacing: int = PAPER_SPACING, window: int = 256,
                 loaded: tuple[Any, Any] | None = None, variant: str = "default") -> None:
        self.model_name, self.spacing, self.window, self.variant = model, int(spacing), int(window), variant
        if self.spacing < 1 or self.window < 8:
            raise PrivasisError("mask_spacing must be at least 1 and mlm_window at least 8")
        self.tokenizer, self.model = loaded or load_masked_lm(model)
        self.name = f"mlm:{model}/N={self.spacing}" + ("/authors_code" if variant == "authors_code" else "")

    def describe(self) -> dict[str, Any]:
        """What produced the probabilities (recorded in results)."""
        out = {"estimator": "masked language model, alternating masks", "name": self.name, "model": self.model_name,
               "mask_spacing": self.spacing, "window": self.window, "multi_token": "least likely word piece"}
        if self.variant == "authors_code":
            out["variant"] = "authors_code: masked positions get attention 0; segments without special tokens"
        return out

    def probabilities(self, text: str, spans: Sequence[tuple[int, int]]) -> list[float]:
        """``Pr`` of each span of ``text`` (1 for a span with no word piece)."""
        import torch

        if self.variant == "authors_code":
            return self._authors_probabilities(torch, text, spans)
        enc = self.tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
        ids = list(enc["input_ids"])
        pieces = [[i for i, (a, b) in enumerate(enc["offset_mapping"]) if b > a and a < end and b > start]
                  for start, end in spans]
        best = [1.0] * len(spans)
        for masked in mask_passes(len(spans), self.spacing):
            current = list(ids)
            for j in masked:
                for i in pieces[j]:
                    current[i] = self.tokenizer.mask_token_id
            probs = self._piece_probabilities(torch, current, ids, {i for j in masked for i in pieces[j]})
            for j in masked:
                if pieces[j]:
                    best[j] = min(probs[i] for i in pieces[j])
        return best

    def _piece_probabilities(self, torch: Any, current: list[int], original: list[int], wanted: set[int]) -> dict[int, float]:
        """Probability of the original piece at every wanted position, window by window."""
        out: dict[int, float] = {}
        cls, sep = self.tokenizer.cls_token_id, self.tokenizer.sep_token_id
        body = self.window - 2
        with torch.no_grad():
            for lo in range(0, len(current), body):
                positions = [i for i in range(lo, min(lo + body, len(current))) if i in wanted]
                if not positions:
                    continue
                chunk = [x for x in (cls,) if x is not None] + current[lo:lo + body] + [x for x in (sep,) if x is not None]
                shift = 1 if cls is not None else 0
                logits = self.model(input_ids=torch.tensor([chunk])).logits[0]
                p = torch.softmax(logits, dim=-1)
                for i in positions:
                    out[i] = float(p[i - lo + shift, original[i]])
        return out

    def _authors_probabilities(self, torch: Any, text: str, spans: Sequence[tuple[int, int]]) -> list[float]:
        """``Pr`` of each span as the authors' code reads it (see the module docstring)."""
        enc = self.tokenizer(text, return_offsets_mapping=True)
        ids = list(enc["input_ids"])
        pieces = [[i for i, (a, b) in enumerate(enc["offset_mapping"]) if b > a and a < end and b > start]
                  for start, end in spans]
        best = [1.0] * len(spans)
        original = torch.tensor(ids)
        for masked in mask_passes(len(spans), self.spacing):
            current, attention = list(ids), [1] * len(ids)
            for i in (i for j in masked for i in pieces[j]):
                current[i], attention[i] = self.tokenizer.mask_token_id, 0
            cut = list(range(self.window, len(ids), self.window))
            batch = [torch.nn.utils.rnn.pad_sequence(list(torch.tensor_split(torch.tensor(x), cut)), batch_first=True)
                     for x in (current, attention)]
            with torch.no_grad():
                logits = self.model(input_ids=batch[0], attention_mask=batch[1]).logits
            probs = torch.softmax(logits.reshape(-1, logits.shape[-1])[:len(ids)], dim=-1)
            actual = probs[torch.arange(len(ids)), original]
            for j in masked:
                if pieces[j]:
                    best[j] = min(float(actual[i]) for i in pieces[j])
        return best
