"""The masked LM and the NMI document embeddings as the paper authors' code reads them (``mlm_variant`` and
``nmi_variant: authors_code``), on fake models whose outputs are known: which positions are masked and attended,
how a text is cut into segments or blocks, and what is averaged."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privasis_bench.replacement.document_embedding import BlockEmbedder, block_rows, kept_rows

torch = pytest.importorskip("torch")

VOCAB = 50
MASK, CLS, SEP = 3, 1, 2


class WordTokenizer:
    """One piece per word (ids 10, 11, ...), with [CLS] and [SEP] around (offsets (0, 0))."""

    mask_token_id, cls_token_id, sep_token_id = MASK, CLS, SEP

    def __call__(self, text, return_offsets_mapping=False, add_special_tokens=True):
        import re

        words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
        ids = [10 + i for i in range(len(words))]
        offsets = words
        if add_special_tokens:
            ids, offsets = [CLS] + ids + [SEP], [(0, 0)] + offsets + [(0, 0)]
        return {"input_ids": ids, "offset_mapping": offsets}


class EchoLM:
    """Every position predicts the id it reads with logit ln 3 (all others 0); records its inputs."""

    def __init__(self):
        self.calls = []

    def __call__(self, input_ids, attention_mask):
        self.calls.append((input_ids.clone(), attention_mask.clone()))
        logits = torch.zeros(*input_ids.shape, VOCAB)
        logits.scatter_(2, input_ids.unsqueeze(-1), math.log(3))
        return type("Out", (), {"logits": logits})()


def test_the_authors_masked_lm_zeroes_attention_on_masks_and_reads_fixed_segments_in_one_batch():
    from privasis_bench.replacement.mlm import MaskedLMEstimator

    text = " ".join(f"w{i}" for i in range(10))  # 12 pieces with [CLS] and [SEP]
    model = EchoLM()
    estimator = MaskedLMEstimator("echo", 6, 8, loaded=(WordTokenizer(), model), variant="authors_code")
    spans = [(3 * i, 3 * i + 2) for i in range(10)]
    probabilities = estimator.probabilities(text, spans)
    # a masked piece reads the mask id, so its original id has logit 0: probability 1 / (VOCAB - 1 + 3)
    assert probabilities == pytest.approx([1 / (VOCAB + 2)] * 10)
    assert len(model.calls) == 6  # N = 6 alternating passes
    ids, attention = model.calls[0]
    assert ids.shape == (2, 8)  # two segments of 8 pieces in one batch, no special tokens added per segment
    assert ids[0].tolist() == [CLS, MASK, 11, 12, 13, 14, 15, MASK]  # spans 0 and 6 (pieces 1 and 7) masked
    assert attention[0].tolist() == [1, 0, 1, 1, 1, 1, 1, 0]
    assert ids[1].tolist() == [17, 18, 19, SEP, 0, 0, 0, 0]  # the last segment padded
    assert attention[1].tolist() == [1, 1, 1, 1, 0, 0, 0, 0]
    assert estimator.describe()["variant"].startswith("authors_code")


def test_the_default_masked_lm_keeps_attention_on_masks_and_wraps_each_window_in_special_tokens():
    from privasis_bench.replacement.mlm import MaskedLMEstimator

    class Plain(EchoLM):
        def __call__(self, input_ids, attention_mask=None):
            assert attention_mask is None  # every position attended
            return super().__call__(input_ids, torch.ones_like(input_ids))

    model = Plain()
    estimator = MaskedLMEstimator("echo", 6, 8, loaded=(WordTokenizer(), model))
    estimator.probabilities(" ".join(f"w{i}" for i in range(10)), [(3 * i, 3 * i + 2) for i in range(10)])
    ids, _ = model.calls[0]
    assert ids.tolist() == [[CLS, MASK, 11, 12, 13, 14, 15, SEP]]  # windows of 6 pieces + [CLS] and [SEP]


def test_block_ranges_keep_every_piece_once():
    assert block_rows(300, 512) == [(0, 300)] and kept_rows(300, 512) == list(range(300))
    assert block_rows(600, 512) == [(0, 512), (88, 600)]
    assert kept_rows(600, 512) == list(range(88)) + list(range(512, 1024))
    assert block_rows(1024, 512) == [(0, 512), (512, 1024)] and kept_rows(1024, 512) == list(range(1024))
    assert block_rows(1100, 512) == [(0, 512), (512, 1024), (588, 1100)]
    assert len(kept_rows(1100, 512)) == 1100


class CountTokenizer:
    """Text "n" -> ids 1..n, padded with 0 to max_length (as the authors' padding='max_length' does)."""

    model_max_length = 4

    def encode(self, text, truncation, padding, max_length, add_special_tokens):
        ids = list(range(1, int(text) + 1))
        return ids + [0] * max(0, max_length - len(ids))


class IdEncoder:
    """Hidden state of a piece: (its id, 1)."""

    config = type("Config", (), {"max_position_embeddings": 4, "hidden_size": 2})()

    def __call__(self, batch):
        return (torch.stack([batch.float(), torch.ones_like(batch, dtype=torch.float)], dim=-1),)


@pytest.mark.parametrize("text, whole, first_block", [("2", 0.75, 0.75), ("6", 3.5, 2.5), ("8", 4.5, 2.5)])
def test_document_embedding_averages_every_piece_once_and_the_bug_reads_the_first_block(text, whole, first_block):
    loaded = (CountTokenizer(), IdEncoder())
    # "2": [1, 2, 0, 0] (padding averaged in); "6": blocks [1..4] and [3..6], the overlap kept once: mean 3.5
    assert BlockEmbedder("ids", loaded=loaded).embed([text])[0] == pytest.approx([whole, 1.0])
    assert BlockEmbedder("ids", True, loaded=loaded).embed([text])[0] == pytest.approx([first_block, 1.0])
    described = BlockEmbedder("ids", True, loaded=loaded).describe()
    assert described["variant"] == "authors_code" and "first block only" in described["embedding"]
    assert np.asarray(BlockEmbedder("ids", loaded=loaded).embed([])).shape == (0, 2)
