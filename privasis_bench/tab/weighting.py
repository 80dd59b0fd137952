"""TAB's optional information-weighted precision: each system unit weighted by how hard a masked language model
finds it to guess (``-log p`` of its least likely word piece, with every system unit masked at once).

It needs ``bert-base-uncased`` (the official script's model) from the local Hugging Face cache; when the model,
``torch`` or ``transformers`` is missing it fails at once with one line, before any scoring work.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from privasis_bench.errors import PrivasisError
from privasis_bench.tab.metrics import precision_units, ratio
from privasis_bench.tab.records import TabDocument

MODEL = "bert-base-uncased"
SEGMENT = 100  # word pieces per model window, as in the official script


def load_model(name: str = MODEL) -> tuple[Any, Any]:
    """Tokenizer and masked LM from the local cache only; a clear error when they are not there."""
    try:
        from transformers import AutoModelForMaskedLM, AutoTokenizer
    except ImportError:
        raise PrivasisError("weighted precision (scorer_args.weighted_precision) needs torch and transformers: "
                            "pip install 'privasis-bench[hf]', or set weighted_precision: false") from None
    try:
        tokenizer = AutoTokenizer.from_pretrained(name, local_files_only=True)
        model = AutoModelForMaskedLM.from_pretrained(name, local_files_only=True)
    except (OSError, ValueError):
        raise PrivasisError(f"weighted precision needs the masked language model {name} in the local Hugging Face "
                            "cache, and it is not there (offline?): download it where the hub is reachable "
                            f"(huggingface-cli download {name}) or set scorer_args.weighted_precision: false") from None
    return tokenizer, model.eval()


def unit_weights(text: str, units: Sequence[tuple[int, int]], tokenizer: Any, model: Any) -> list[float]:
    """``-log p`` of each unit's least likely word piece, every unit's pieces masked together (0 for no piece)."""
    import torch

    enc = tokenizer(text, return_offsets_mapping=True)
    ids = list(enc["input_ids"])
    original = list(ids)
    attention = list(enc["attention_mask"])
    pieces: list[list[int]] = []
    for start, end in units:
        own = [i for i, (a, b) in enumerate(enc["offset_mapping"]) if b > a and a < end and b > start]
        pieces.append(own)
        for i in own:
            ids[i], attention[i] = tokenizer.mask_token_id, 0
    probs: list[float] = []
    with torch.no_grad():
        for lo in range(0, len(ids), SEGMENT):
            logits = model(input_ids=torch.tensor([ids[lo:lo + SEGMENT]]),
                           attention_mask=torch.tensor([attention[lo:lo + SEGMENT]])).logits[0]
            p = torch.softmax(logits, dim=-1)
            probs.extend(float(p[k, original[lo + k]]) for k in range(len(ids[lo:lo + SEGMENT])))
    return [-math.log(max(min(probs[i] for i in own), 1e-12)) if own else 0.0 for own in pieces]


def weighted_precision(docs: list[TabDocument], spans: dict[str, Sequence[Sequence[int]]],
                       loaded: tuple[Any, Any]) -> dict[str, float]:
    """Token- and mention-level weighted precision over the documents that have spans (``loaded``: from
    :func:`load_model`)."""
    tokenizer, model = loaded
    out = {}
    for kind, token_level in (("token", True), ("mention", False)):
        tp = den = 0.0
        for doc in docs:
            if doc.doc_id not in spans:
                continue
            units, n_annotators = precision_units(doc, spans[doc.doc_id], token_level=token_level)
            weights = unit_weights(doc.text, [(s, e) for s, e, _ in units], tokenizer, model)
            tp += sum(w * n for (_, _, n), w in zip(units, weights))
            den += sum(w * n_annotators for w in weights)
        out[f"weighted_{kind}_precision"] = ratio(tp, den)
    return out
