#!/bin/bash
# Make a fine-tuned run of recipes/everyday/default-ft.sh the default checkpoint: every file the app reads beside
# the weights, written for it, in runs/everyday/promoted/de-en, and, with --install, moved to checkpoints/de-en
# (the captions model it started from stays loadable there as snapshots/step-NNNNN). The test sets are scored
# here, once. Usage: recipes/everyday/promote_default.sh RUN_CHECKPOINT [--install]
# BASE is the checkpoint the run started from (its history comes first on the time-travel slider; a base that was
# fine-tuned itself must have been extended by training/lineage.py), INSTALL_TO where --install puts the result,
# DROP the steps whose snapshots are left out (checkpoints/ stays within 160 MiB).
set -euo pipefail
cd "$(dirname "$0")/../.."
export MULTI30K_DIR=${MULTI30K_DIR:-../shared/data/multi30k}
RUN=${1:?usage: promote_default.sh RUN_CHECKPOINT [--install]}
BASE=${BASE:-checkpoints/de-en}
INSTALL_TO=${INSTALL_TO:-checkpoints/de-en}
OUT=runs/everyday/promoted/de-en
[ -f "$RUN/model.safetensors" ] || { echo "$RUN is not a checkpoint folder (no model.safetensors)" >&2; exit 2; }
[ -f "$RUN/evidence.json.gz" ] || { echo "$RUN has no evidence index: python -m training.evidence --checkpoint $RUN ..." >&2; exit 2; }
rm -rf "$OUT" && mkdir -p "$(dirname "$OUT")" && cp -r "$RUN" "$OUT"
cp "$INSTALL_TO/levers.json" "$OUT/"                  # the lever sweep that chose the captions recipe
python -m training.lineage --base "$BASE" --run "$OUT" --base-phase captions --phase "captions + everyday" \
  ${FINAL_PHASE:+--final-phase "$FINAL_PHASE"} --drop "${DROP:-}"  # FINAL_PHASE names a soup's last point
python -m training.domain --checkpoint "$OUT"            # the domain guess: from the corpora, not the weights
python -m training.shortlist --checkpoint "$OUT" --corpus multi30k+ding  # the captions and the Ding sentences
python recipes/repetition.py "$OUT" --values 0,3 # the rule ships as decoding.json (no_repeat_ngram)
echo '{"no_repeat_ngram": 3}' > "$OUT/decoding.json"
python recipes/alarm.py --checkpoint "$OUT" --write --test  # chosen on half of each dev set; test2016's rate once
python recipes/everyday/score_test.py "$OUT"              # once
python recipes/head_importance.py --checkpoint "$OUT" --threads 2  # last: it writes the card from results.json
if [ "${2:-}" = "--install" ]; then
  rm -rf "$INSTALL_TO.old" && mv "$INSTALL_TO" "$INSTALL_TO.old" && mv "$OUT" "$INSTALL_TO" && rm -rf "$INSTALL_TO.old"
  echo "installed $INSTALL_TO"
fi
