"""The re-identification classifier as the TRI authors' code trains it (``trir_variant: authors_code``).

Their code (``BenetManzanaresSalor/TextRe-Identification``, ``tri.py``, read at commit ``a62b3fe``) departs from
the plain fine-tuning of :mod:`classifier` in six ways, each an option of :class:`TriOptions` (the defaults are
theirs) so that its effect can be measured alone:

1. an anonymised copy of the background is added to training (``anonymised_copy``, :mod:`tri_pretreatment`);
2. every text is curated first (``curation``, :mod:`tri_pretreatment`);
3. the language model is further pre-trained on the (treated) background with masked language modelling before
   the classifier is fine-tuned (``pretraining_epochs`` 3, batches of 8 at 5e-5, 15% of the pieces masked the
   usual BERT way, windows of 512 pieces overlapping by 128); the classifier then starts from that encoder;
4. fine-tuning reads windows of 100 pieces (with the special tokens) overlapping by 25 (``overlap``), batches of
   16, for 15 epochs at 5e-5, with AdamW (epsilon 1e-6, no weight decay), a constant rate and the gradient norm
   clipped at 1 (the Hugging Face trainer's default they run under);
5. 15 epochs at 5e-5 instead of 10 at 5e-5 (the epochs and rate of :class:`ClassifierSettings`);
6. the model kept is the epoch with the best accuracy on the attacked documents themselves (``selection: best``;
   they evaluate every epoch on the anonymised documents and reload the best, the first on a tie), not the last.

A document's guess sums its windows' logits (their evaluation; the same argmax as the mean). Not reproduced: they
drop an empty anonymised document from the count (here it is a document without a guess), pool the logits of all
documents of one individual (here each document is attacked alone), and give labels to individuals that have no
background; their windowing adds one window of overlap only when a text ends exactly at a window's end and is not
the longest of its tokenisation block of 250 (a quirk of padding, not followed).

With ``selection: best`` the fine-tuning needs the attacked documents and their individuals, so :meth:`fit` treats
the background and pre-trains, and :meth:`predict` fine-tunes (seeded, from the same pre-trained encoder each
time) before it guesses; with ``selection: last`` both happen in :meth:`fit`.
"""

from __future__ import annotations

import copy
import random
from dataclasses import asdict, dataclass
from typing import Any, Sequence

from privasis_bench.errors import PrivasisError
from privasis_bench.replacement.background import BackgroundDoc
from privasis_bench.replacement.classifier import ClassifierAttacker, ClassifierSettings, load_classifier

#: The authors' fine-tuning defaults (``classifier_*`` keys not given take these under ``trir_variant: authors_code``).
AUTHORS_CLASSIFIER = {"epochs": 15, "learning_rate": 5e-5, "batch_size": 16, "max_length": 100}
SELECTIONS = ("best", "last")


@dataclass(frozen=True)
class TriOptions:
    """The steps the TRI authors' code adds (see the module docstring); the defaults are theirs."""

    anonymised_copy: bool = True
    curation: bool = True
    pretraining_epochs: int = 3
    pretraining_learning_rate: float = 5e-5
    pretraining_batch_size: int = 8
    pretraining_window: int = 512
    pretraining_overlap: int = 128
    mlm_probability: float = 0.15
    overlap: int = 25
    selection: str = "best"


def overlapping_windows(ids: Sequence[int], length: int, overlap: int, head: list[int], tail: list[int]) -> list[list[int]]:
    """Windows of ``length`` pieces with the special tokens, each ``overlap`` pieces over the one before, until one
    reaches the end of ``ids``."""
    body = length - len(head) - len(tail)
    stride = max(body - overlap, 1)
    starts = [0]
    while starts[-1] + body < len(ids):
        starts.append(starts[-1] + stride)
    return [head + list(ids[s:s + body]) + tail for s in starts]


class AuthorsClassifierAttacker(ClassifierAttacker):
    """The TRI authors' training of the re-identification classifier (see the module docstring)."""

    def __init__(self, settings: ClassifierSettings, options: TriOptions = TriOptions(),
                 spacy_pipeline: str | None = None) -> None:
        super().__init__(settings)
        self.options = options
        self.spacy_pipeline = spacy_pipeline
        self.pretreatment: Any = None
        self.training: list[BackgroundDoc] = []
        self.encoder_state: Any = None
        self.epoch_accuracy: list[float] = []
        self.kept_epoch: int | None = None

    @property
    def selects_on_attacked(self) -> bool:
        """True when :meth:`predict` needs the attacked documents' individuals (best-epoch selection)."""
        return self.options.selection == "best"

    def describe(self) -> dict[str, Any]:
        """The attack, its hyper-parameters and the authors' steps (recorded in results)."""
        described = {**super().describe(), "variant": "authors_code",
                     "method": "TRI authors' code: treated background, MLM pre-training, windowed fine-tuning, "
                               f"{self.options.selection} epoch", **asdict(self.options),
                     "training_documents": len(self.training)}
        if self.pretreatment is not None:
            described["pretreatment"] = self.pretreatment.describe()
        if self.epoch_accuracy:
            described.update(epoch_accuracy=self.epoch_accuracy, kept_epoch=self.kept_epoch)
        return described

    def _treat(self, text: str) -> str:
        return self.pretreatment.curate(text) if self.options.curation else text

    def fit(self, background: Sequence[BackgroundDoc]) -> None:
        """Treat the background, pre-train the encoder, and (``selection: last``) fine-tune the classifier."""
        import torch

        o, s = self.options, self.settings
        self.labels = sorted({d.individual_id for d in background})
        if o.anonymised_copy or o.curation:
            from privasis_bench.replacement.tri_pretreatment import Pretreatment

            self.pretreatment = self.pretreatment or Pretreatment(self.spacy_pipeline)
            self.training = self.pretreatment.background(background, copy=o.anonymised_copy, curate=o.curation)
        else:
            self.training = list(background)
        torch.manual_seed(s.seed)
        self.tokenizer, self.model = load_classifier(s.model, len(self.labels))
        self.encoder_state = self._pretrain() if o.pretraining_epochs else None
        if o.selection == "last":
            self._finetune(None)

    def windows(self, text: str) -> list[list[int]]:
        """The fine-tuning windows of a text: ``max_length`` pieces overlapping by ``overlap``."""
        return self._windows(text, self.settings.max_length, self.options.overlap)

    def _windows(self, text: str, length: int, overlap: int) -> list[list[int]]:
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        head = [self.tokenizer.cls_token_id] if self.tokenizer.cls_token_id is not None else []
        tail = [self.tokenizer.sep_token_id] if self.tokenizer.sep_token_id is not None else []
        return overlapping_windows(ids, length, overlap, head, tail)

    def _pretrain(self) -> Any:
        """Masked-LM training of the encoder on the treated background; its encoder weights."""
        import torch
        from transformers import AutoModelForMaskedLM, DataCollatorForLanguageModeling

        from privasis_bench.replacement.similarity import model_path

        o, s = self.options, self.settings
        torch.manual_seed(s.seed)
        from transformers.utils import logging as hf_logging

        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()  # an encoder-only checkpoint gets a new masked-LM head, by design
        try:
            mlm = AutoModelForMaskedLM.from_pretrained(model_path(s.model), local_files_only=True)
        finally:
            hf_logging.set_verbosity(verbosity)
        length = min(o.pretraining_window, mlm.config.max_position_embeddings)
        examples = [{"input_ids": w} for d in self.training for w in self._windows(d.text, length, o.pretraining_overlap)]
        collate = DataCollatorForLanguageModeling(self.tokenizer, mlm_probability=o.mlm_probability, seed=s.seed)
        self._train(mlm, examples, o.pretraining_epochs, o.pretraining_batch_size, o.pretraining_learning_rate,
                    lambda batch: dict(collate(batch)))
        return {k: v.detach().clone() for k, v in mlm.base_model.state_dict().items()}

    def _fresh_classifier(self) -> Any:
        """A classifier head over the pre-trained encoder (or the checkpoint's, without pre-training)."""
        import torch

        torch.manual_seed(self.settings.seed)
        _, model = load_classifier(self.settings.model, len(self.labels))
        if self.encoder_state is not None:
            result = model.base_model.load_state_dict(self.encoder_state, strict=False)
            stray = [k for k in (*result.missing_keys, *result.unexpected_keys) if not k.startswith("pooler.")]
            if stray:
                raise PrivasisError(f"the pre-trained encoder of {self.settings.model!r} does not fit its classifier "
                                    f"({len(stray)} weights differ, e.g. {stray[0]})")
        return model

    def _finetune(self, attacked: tuple[Sequence[str], Sequence[str]] | None) -> None:
        """Fine-tune the classifier; with ``attacked`` (texts, individuals) keep the epoch that names most of them."""
        import torch

        s = self.settings
        self.model = self._fresh_classifier()
        index = {label: i for i, label in enumerate(self.labels)}
        examples = [(w, index[d.individual_id]) for d in self.training for w in self.windows(d.text)]
        best: list[Any] = [None, None]  # accuracy, weights
        self.epoch_accuracy = []

        def after_epoch(epoch: int) -> None:
            if attacked is None:
                return
            texts, truths = attacked
            right = sum(g == t for g, t in zip(self._guess(texts), truths))
            accuracy = right / max(len(truths), 1)
            self.epoch_accuracy.append(accuracy)
            if best[0] is None or accuracy > best[0]:
                best[:] = [accuracy, copy.deepcopy(self.model.state_dict())]
                self.kept_epoch = epoch

        def batch_of(batch: list[tuple[list[int], int]]) -> dict[str, Any]:
            ids, mask = self._pad([w for w, _ in batch])
            return {"input_ids": ids, "attention_mask": mask, "labels": torch.tensor([y for _, y in batch])}

        self._train(self.model, examples, s.epochs, s.batch_size, s.learning_rate, batch_of, after_epoch)
        if best[1] is not None:
            self.model.load_state_dict(best[1])
        else:
            self.kept_epoch = s.epochs
        self.model.eval()

    def _train(self, model: Any, examples: list, epochs: int, batch_size: int, learning_rate: float, batch_of: Any,
               after_epoch: Any = None) -> None:
        """The authors' optimiser: AdamW (eps 1e-6, no weight decay), constant rate, gradient norm clipped at 1."""
        import torch

        optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, betas=(0.9, 0.999), eps=1e-6,
                                      weight_decay=0.0)
        rng = random.Random(self.settings.seed)
        for epoch in range(1, epochs + 1):
            model.train()
            rng.shuffle(examples)
            for lo in range(0, len(examples), batch_size):
                loss = model(**batch_of(examples[lo:lo + batch_size])).loss
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
            model.eval()
            if after_epoch is not None:
                after_epoch(epoch)

    def _guess(self, texts: Sequence[str]) -> list[str | None]:
        """The individual whose summed window logits are highest, per (already treated) text."""
        import torch

        out: list[str | None] = []
        with torch.no_grad():
            for text in texts:
                ids, mask = self._pad(self.windows(text))
                logits = self.model(input_ids=ids, attention_mask=mask).logits.sum(dim=0)
                out.append(self.labels[int(torch.argmax(logits))])
        return out

    def predict(self, texts: Sequence[str], truths: Sequence[str] | None = None) -> list[str | None]:
        """The guess per text (None for an empty one); with best-epoch selection, fine-tune on ``truths`` first."""
        import time

        if self.tokenizer is None:
            raise PrivasisError("the classifier attacker must be fitted on background knowledge first")
        started = time.perf_counter()
        keep = [i for i, t in enumerate(texts) if t.strip()]
        treated = [self._treat(texts[i]) for i in keep]
        if self.selects_on_attacked and keep:
            if truths is None or len(truths) != len(texts):
                raise PrivasisError("trir classifier_selection best picks the epoch on the attacked documents: "
                                    "their individuals must be given")
            self._finetune((treated, [truths[i] for i in keep]))
        guesses = dict(zip(keep, self._guess(treated)))
        self.inference_seconds += time.perf_counter() - started
        return [guesses.get(i) for i in range(len(texts))]
