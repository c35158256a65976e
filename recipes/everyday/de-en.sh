#!/bin/bash
# checkpoints/de-en, the default model, from the captions-only model: three fine-tunings on both kinds of German,
# the mean of the last one's weights and the captions model's, and every file the app reads beside them.
#
#   recipes/everyday/de-en.sh                  # every step below, in order
#   recipes/everyday/de-en.sh promote          # only these steps (their inputs must be there)
#   recipes/everyday/de-en.sh install          # the promoted folder made checkpoints/de-en
#
# CAPTIONS is the captions-only model with its history (README.md: recipes/levers.py, then
# recipes/unpack_levers.py --output runs/captions/de-en); the shipped default averaged its fp16 copy,
# checkpoints/de-en/snapshots/step-03500. EVERYDAY is the everyday model, the teacher of the Ding sentences.
# Each run lives in runs/everyday/NAME (git-ignored) and resumes when rerun; each step's minutes are the time the
# shipped run trained. The test sets are read for the shipped weights alone (`soup`, `promote`). The figures of
# every run, and the runs that were not kept, are in docs/everyday.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
export MULTI30K_DIR=${MULTI30K_DIR:-../shared/data/multi30k}
R=runs/everyday
CAPTIONS=${CAPTIONS:-runs/captions/de-en}
EVERYDAY=${EVERYDAY:-checkpoints/de-en-everyday}
DISTILLED=runs/distill/multi30k-train.de-en.txt  # the captions model's beam-5 translations of its training captions
DING_TAUGHT=runs/distill/ding-train.everyday.txt  # the everyday model's of the Ding training sentences
# What every fine-tuning reads: the captions in the captions model's own English (self-distillation), the Ding
# sentences 3x an epoch with the headwords, the game dialogue once; the captions model's dropout; snapshots for
# time travel; the weights chosen on the two dev sets (the mean of val and everyday dev BLEU).
FINE_TUNE=(--corpus multi30k+ding --ding-repeat 3 --ding-words --distilled-targets "$DISTILLED" --more-corpora games:1
  --warmup 200 --dropout 0.3 --batch-tokens 6144 --epochs 40 --eval-every 300 --save-every 100 --num-beams 5
  --length-penalties 1.0,1.4 --skip-test --snapshot-steps 300,900)

train() {  # train NAME FLAGS...: one run of train.py in runs/everyday/NAME
  local name=$1
  shift
  python train.py --output "$R/$name/checkpoint" --work-dir "$R/$name/work" "$@"
}

corpora() {  # Ding's sentences and headwords, the game dialogue (apt, minutes)
  python -m corpora.everyday_corpus
  python -m corpora.parallel_text --source games
}

fine_tune() {  # from the captions model, learning rate 5e-4: 74 minutes, 1,848 steps (kept: step 1,800)
  [ -f "$CAPTIONS/model.safetensors" ] || { echo "no captions model in $CAPTIONS (README.md: recipes/levers.py)" >&2; exit 2; }
  python recipes/distill.py "$CAPTIONS" --out "$DISTILLED"
  train default-ft-r3 --init-from "$CAPTIONS" "${FINE_TUNE[@]}" --lr 5e-4 --threads 1 --time-limit 74
}

again() {  # from those weights with a fresh schedule at 3e-4: 80 minutes, about 1,400 steps (kept: step 1,200)
  train default-ft2 --init-from "$R/default-ft-r3/checkpoint" "${FINE_TUNE[@]}" --lr 3e-4 --threads 1 --time-limit 80
}

teachers() {  # the Ding sentences' English replaced by the everyday model's translations, so each kind of German
  # is learned from the model that writes it best: 35 minutes on 2 cores, 667 steps, its last saves averaged
  python recipes/distill.py "$EVERYDAY" --corpus ding --out "$DING_TAUGHT" --threads 2
  train default-ft3-teachers --init-from "$R/default-ft2/checkpoint" "${FINE_TUNE[@]}" --lr 3e-4 \
    --distilled-ding "$DING_TAUGHT" --threads 2 --eval-every 400 --time-limit 35
}

soup() {  # the mean of the run's weights and the captions model's (share 0.5, chosen on the dev sets)
  python recipes/soup.py "$CAPTIONS" "$R/default-ft3-teachers/checkpoint" --weights 0.5,0.5 --length-penalty 1.0 \
    --out "$R/wise-ft3" --test
  cp "$R/default-ft3-teachers/checkpoint/evidence.json.gz" "$R/wise-ft3/"
}

lineage() {  # time travel run by run: the captions model's snapshots, then each fine-tuning's
  rm -rf "$R/ft-r3-lineage" "$R/ft2-lineage"
  cp -r "$R/default-ft-r3/checkpoint" "$R/ft-r3-lineage"
  python -m training.lineage --base "$CAPTIONS" --run "$R/ft-r3-lineage"
  cp -r "$R/default-ft2/checkpoint" "$R/ft2-lineage"
  python -m training.lineage --base "$R/ft-r3-lineage" --run "$R/ft2-lineage"
}

promote() {  # every file the app reads beside the weights, written for them in runs/everyday/promoted/de-en
  local out=$R/promoted/de-en
  rm -rf "$out" && mkdir -p "$(dirname "$out")" && cp -r "$R/wise-ft3" "$out"
  cp checkpoints/de-en/levers.json "$out/"  # the lever sweep that chose the captions recipe
  python -m training.lineage --base "$R/ft2-lineage" --run "$out" --base-phase captions --phase "captions + everyday" \
    --final-phase "captions + everyday, averaged with step 3,500" --drop 250,3800,5600,6200,7000  # within 160 MiB
  python -m training.domain --checkpoint "$out"  # the domain guess: from the corpora, not the weights
  python -m training.language --checkpoint "$out"  # the not-German check
  python -m training.shortlist --checkpoint "$out" --corpus multi30k+ding  # the captions and the Ding sentences
  python recipes/repetition.py "$out" --values 0,3  # the rule ships as decoding.json (no_repeat_ngram)
  echo '{"no_repeat_ngram": 3}' >"$out/decoding.json"
  python recipes/alarm.py --checkpoint "$out" --write --test  # chosen on half of each dev set; test2016's rate once
  python recipes/everyday/score_test.py "$out"  # the test sets as it ships, once
  python recipes/head_importance.py --checkpoint "$out" --threads 2  # last: it writes the card from results.json
}

install() {  # the captions model stays loadable as snapshots/step-03500
  rm -rf checkpoints/de-en.old && mv checkpoints/de-en checkpoints/de-en.old
  mv "$R/promoted/de-en" checkpoints/de-en && rm -rf checkpoints/de-en.old
  echo "installed checkpoints/de-en"
}

STEPS=(corpora fine_tune again teachers soup lineage promote)
[ $# -gt 0 ] || set -- "${STEPS[@]}"
for step in "$@"; do
  case " ${STEPS[*]} install " in
    *" $step "*) echo "== $step" && "$step" ;;
    *) echo "no step '$step': one of ${STEPS[*]} install" >&2 && exit 2 ;;
  esac
done
