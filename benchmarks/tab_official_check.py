"""Check privasis-bench's TAB scores against TAB's own evaluation script, masker by masker.

For each masker this runs ``privasis-bench run`` on a TAB data file, writes the run's masks with
``export-tab-masks``, scores that file again with ``privasis-bench evaluate -p``, and scores the same file with the
official ``evaluation.py`` of NorskRegnesentral/text-anonymization-benchmark in a separate interpreter. It prints one
table per masker (every measure the official script computes: the official value, ours from the exported file, ours
from the run itself, and the largest difference at full precision) and exits 1 when any measure differs.

This is a check, not a test: it needs a copy of TAB's repository (a checkout, or a bare git mirror, from which
``evaluation.py`` and, when present, the data files are read), the official script's own dependency
``intervaltree`` (give its folder with ``--official-pythonpath`` when it is not installed), and minutes of spaCy
work per masker. It is not part of the test suite.

Notes on how the official script is called:

* its command line takes ``masked_output_file`` with ``nargs="+"`` and then opens the resulting list, so as
  published it stops with a TypeError whatever it is given; this script therefore imports the module and makes the
  calls its ``__main__`` block makes (``GoldCorpus``, ``get_masked_docs_from_file``, ``evaluate``) for one file;
* ``GoldCorpus`` takes the spaCy pipeline as an argument (default ``en_core_web_md``): the pipeline our run recorded
  under ``scorer.tokens.spacy_pipeline`` is passed, so both sides tag with the same pipeline (``--spacy-model`` to
  choose another);
* ``evaluate`` is asked for 3 decimals (what the script prints) and for 12 (to compare at full precision).

    python benchmarks/tab_official_check.py --official-repo PATH [--data-files echr_test.json] [--task tab_test]
        [--maskers identity empty regex-scrubber ...] [--masks-files masked.json ...] [--limit N]
        [--official-pythonpath DIR] [--work-dir DIR [--reuse]] [--run-args '--max-tokens 512']
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MASKERS = ("identity", "empty", "regex-scrubber", "regex-scrubber:,names=true", "spacy-ner", "presidio", "scrubadub",
           "datafog")
SCALARS = ("token_recall", "mention_recall", "recall_all_entities", "recall_direct_entities", "recall_quasi_entities",
           "token_precision", "mention_precision", "token_f1")
FULL_PRECISION = 12
TOLERANCE = 1e-9
MARK = "TAB-OFFICIAL-MEASURES "

# Runs in a fresh interpreter whose sys.path starts with the folder holding the official evaluation.py.
OFFICIAL_CHILD = r"""
import contextlib, io, json, sys
import evaluation
gold, pipeline, files = sys.argv[1], sys.argv[2], sys.argv[3:]
with contextlib.redirect_stdout(io.StringIO()):
    corpus = evaluation.GoldCorpus(gold, spacy_model=pipeline)
out = {}
for path in files:
    docs = evaluation.get_masked_docs_from_file(path)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            printed = evaluation.evaluate(corpus, docs, rounding=3)
            full = evaluation.evaluate(corpus, docs, rounding=%d)
        out[path] = {"printed": printed, "full": full}
    except Exception as exc:
        out[path] = {"error": f"{type(exc).__name__}: {exc}"}
print("%s" + json.dumps(out))
""" % (FULL_PRECISION, MARK)


def official_sources(repo: Path, dest: Path) -> tuple[Path, dict[str, Path]]:
    """The folder holding the official evaluation.py, and the data files the repository has (name -> path)."""
    if (repo / "evaluation.py").is_file():
        data = {n: repo / n for n in ("echr_test.json", "echr_dev.json") if (repo / n).is_file()}
        return repo, data
    git = ["git", "--git-dir", str(repo)]
    probe = subprocess.run([*git, "rev-parse", "--verify", "HEAD"], capture_output=True, text=True)
    if probe.returncode != 0:
        raise SystemExit(f"--official-repo {repo}: neither a checkout with evaluation.py nor a git repository")
    dest.mkdir(parents=True, exist_ok=True)
    data = {}
    for name in ("evaluation.py", "echr_test.json", "echr_dev.json"):
        shown = subprocess.run([*git, "show", f"HEAD:{name}"], capture_output=True)
        if shown.returncode == 0 and shown.stdout:
            (dest / name).write_bytes(shown.stdout)
            if name != "evaluation.py":
                data[name] = dest / name
        elif name == "evaluation.py":
            raise SystemExit(f"--official-repo {repo}: HEAD has no evaluation.py")
    return dest, data


def cli(args: list[str], log: Path) -> None:
    """Run ``privasis-bench ARGS`` from this checkout; stop with its output when it fails."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-m", "privasis_bench", *args], capture_output=True, text=True, env=env,
                          cwd=log.parent)
    log.write_text(done.stdout + done.stderr, encoding="utf-8")
    if done.returncode != 0:
        raise SystemExit(f"privasis-bench {' '.join(args)} exited {done.returncode}; see {log}:\n{done.stdout[-2000:]}"
                         f"{done.stderr[-2000:]}")


def ours(results_json: Path) -> dict:
    """The measures of one task's results.json, keyed as the official script keys them."""
    metrics = json.loads(results_json.read_text(encoding="utf-8"))["metrics"]
    return {"full": metrics, "printed": metrics.get("official_rounded") or {}}


def flatten(measures: dict) -> dict[str, float | None]:
    """``{measure: value}`` with ``token_recall_by_type`` spread as ``token_recall[TYPE]``."""
    flat: dict[str, float | None] = {k: measures.get(k) for k in SCALARS}
    for kind, value in sorted((measures.get("token_recall_by_type") or {}).items()):
        flat[f"token_recall[{kind}]"] = value
    return flat


def compare(official: dict, from_export: dict, from_run: dict) -> tuple[list[tuple], bool]:
    """Rows ``(measure, official, evaluate, run, max |difference|, verdict)`` and whether all agree."""
    rows, same = [], True
    o_full, o_print = flatten(official["full"]), flatten(official["printed"])
    e_full, e_print = flatten(from_export["full"]), flatten(from_export["printed"])
    r_full = flatten(from_run["full"])
    for key in sorted(set(o_full) | set(e_full) | set(r_full), key=lambda k: (k.startswith("token_recall["), k)):
        o, e, r = o_full.get(key), e_full.get(key), r_full.get(key)
        # A recall over nothing: we keep null, the official script returns 0 (our official_rounded keeps its 0).
        e_cmp = 0.0 if e is None and e_print.get(key) == 0 else e
        r_cmp = 0.0 if r is None and e_print.get(key) == 0 else r
        if None in (o, e_cmp, r_cmp):
            diff, ok = None, o is None and e_cmp is None and r_cmp is None
        else:
            diff = max(abs(o - e_cmp), abs(o - r_cmp))
            ok = diff <= TOLERANCE and o_print.get(key) == e_print.get(key)
        same &= ok
        rows.append((key, o, e, r, diff, "=" if ok else "DIFFERS"))
    return rows, same


def show(value: float | None) -> str:
    """Three decimals, or '-' for a missing value."""
    return "-" if value is None else f"{value:.3f}"


def slug(spec: str) -> str:
    """A folder name for a model spec."""
    return re.sub(r"[^A-Za-z0-9]+", "-", spec).strip("-") or "masker"


def main(argv: list[str] | None = None) -> int:
    """Run every masker, score its exported masks both ways, print the tables; 1 when anything differs."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--official-repo", type=Path, required=True,
                   help="TAB's repository: a checkout, or a bare git mirror (files are read from HEAD)")
    p.add_argument("--data-files", type=Path, help="the TAB data file (default: the repository's file for --task)")
    p.add_argument("--task", default="tab_test", help="tab_test (default) or tab_dev")
    p.add_argument("--maskers", nargs="*", default=list(MASKERS), help="model specs (default: %(default)s)")
    p.add_argument("--masks-files", nargs="*", type=Path, default=[],
                   help="masked-output files to score both ways as well (no run: the 'run' column repeats evaluate)")
    p.add_argument("--limit", type=int, help="score only the first N documents")
    p.add_argument("--spacy-model", help="pipeline for the official script (default: the one our run recorded)")
    p.add_argument("--official-pythonpath", action="append", default=[],
                   help="extra folder for the official script's imports (e.g. where intervaltree is installed)")
    p.add_argument("--work-dir", type=Path, help="keep runs and masks here (default: a temporary folder)")
    p.add_argument("--reuse", action="store_true",
                   help="keep a masker's run, export and evaluate already in --work-dir instead of redoing them")
    p.add_argument("--run-args", default="", help="extra options for every run, e.g. '--max-tokens 512'")
    args = p.parse_args(argv)

    work = args.work_dir or Path(tempfile.mkdtemp(prefix="tab-official-"))
    work.mkdir(parents=True, exist_ok=True)
    code_dir, repo_data = official_sources(args.official_repo.resolve(), work / "official")
    wanted = {"tab_test": "echr_test.json", "tab_dev": "echr_dev.json"}.get(args.task, "")
    gold = args.data_files or repo_data.get(wanted)
    if gold is None or not Path(gold).is_file():
        raise SystemExit(f"no data file: {args.official_repo} has no {wanted or 'data file'} at HEAD (a mirror may "
                         "leave large files out); give --data-files")
    gold = Path(gold).resolve()
    limit = ["--limit", str(args.limit)] if args.limit else []

    t0 = time.perf_counter()
    masks: dict[str, Path] = {}
    mine: dict[str, tuple[dict, dict]] = {}
    pipeline = args.spacy_model
    for spec in args.maskers:
        d = work / slug(spec)
        d.mkdir(exist_ok=True)
        if not (args.reuse and (d / "evaluate" / args.task / "results.json").is_file()):
            cli(["run", "-m", spec, "-t", args.task, "--data-files", str(gold), "-o", str(d / "run"), *limit,
                 *shlex.split(args.run_args)], d / "run.log")
            cli(["export-tab-masks", str(d / "run"), "-t", args.task, "-o", str(d / "masked.json")],
                d / "export.log")
            cli(["evaluate", "-t", args.task, "--data-files", str(gold), "-p", str(d / "masked.json"), "-o",
                 str(d / "evaluate"), *limit], d / "evaluate.log")
        run_results = d / "run" / args.task / "results.json"
        mine[spec] = (ours(d / "evaluate" / args.task / "results.json"), ours(run_results))
        masks[spec] = d / "masked.json"
        recorded = json.loads(run_results.read_text())["scorer"]["tokens"]["spacy_pipeline"]
        pipeline = pipeline or recorded
        print(f"{spec}: run, export, evaluate done ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    for given in args.masks_files:
        name, d = f"file {given.name}", work / slug(f"file-{given.name}")
        d.mkdir(exist_ok=True)
        cli(["evaluate", "-t", args.task, "--data-files", str(gold), "-p", str(given.resolve()), "-o",
             str(d / "evaluate"), *limit], d / "evaluate.log")
        scored = ours(d / "evaluate" / args.task / "results.json")
        mine[name], masks[name] = (scored, scored), given.resolve()
        pipeline = pipeline or json.loads((d / "evaluate" / args.task / "results.json").read_text())[
            "scorer"]["tokens"]["spacy_pipeline"]
        print(f"{name}: evaluate done ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(code_dir), *args.official_pythonpath]))
    done = subprocess.run([sys.executable, "-c", OFFICIAL_CHILD, str(gold), pipeline, *map(str, masks.values())],
                          capture_output=True, text=True, env=env, cwd=work)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith(MARK)), None)
    if done.returncode != 0 or line is None:
        raise SystemExit(f"the official script failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    official = json.loads(line[len(MARK):])

    docs = len(json.loads(next(iter(masks.values())).read_text(encoding="utf-8"))) if masks else 0
    print(f"TAB official evaluation.py vs privasis-bench: {args.task}, {gold.name}, {docs} document(s), "
          f"spaCy pipeline {pipeline} on both sides, {time.perf_counter() - t0:.0f} s")
    all_same = True
    for spec in masks:
        got = official[str(masks[spec])]
        print(f"\n## {spec}")
        if "error" in got:
            print(f"official script failed: {got['error']}")
            all_same = False
            continue
        rows, same = compare(got, *mine[spec])
        all_same &= same
        print(f"{'measure':<26} {'official':>9} {'evaluate':>9} {'run':>9} {'max |diff|':>11}  verdict")
        for key, o, e, r, diff, verdict in rows:
            print(f"{key:<26} {show(o):>9} {show(e):>9} {show(r):>9} "
                  f"{'-' if diff is None else f'{diff:.1e}':>11}  {verdict}")
    print(f"\n{'ALL EQUAL' if all_same else 'DIFFERENCES FOUND'}: {len(masks)} masker(s) and file(s)")
    return 0 if all_same else 1


if __name__ == "__main__":
    sys.exit(main())
