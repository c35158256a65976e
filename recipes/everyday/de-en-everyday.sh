#!/bin/bash
# checkpoints/de-en-everyday, end to end: the runs that led to it, in order, each started from the one before.
#
#   recipes/everyday/de-en-everyday.sh               # every step below, in order
#   recipes/everyday/de-en-everyday.sh tagged ship   # only these steps (their inputs must be there)
#   recipes/everyday/de-en-everyday.sh install       # the shipped folder made checkpoints/de-en-everyday
#
# Each run lives in runs/everyday/NAME (git-ignored) and resumes when rerun; each step's minutes are the
# time the shipped run trained, on one core (2 where marked) of a 2-core CPU. The test sets are read once,
# in `ship`. The figures of every run, and the runs that were not kept, are in docs/everyday.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
export MULTI30K_DIR=${MULTI30K_DIR:-../shared/data/multi30k}
R=runs/everyday
CAPTIONS=${CAPTIONS:-checkpoints/de-en/snapshots/step-03500}  # the captions-only model: the captions' teacher
DISTILLED=runs/distill/multi30k-train.de-en.txt                # its beam-5 translations of the training captions
# What every run after the first shares: a fresh schedule (peak 3e-4 after 200 steps), the length penalty 1.4,
# the weights chosen on the two dev sets (the mean of val and everyday dev BLEU).
FRESH=(--corpus multi30k+ding --lr 3e-4 --warmup 200 --dropout 0.15 --batch-tokens 6144 --epochs 40 --threads 1
  --eval-every 400 --save-every 100 --num-beams 5 --length-penalties 1.4 --skip-test --snapshot-steps none)

train() {  # train NAME FLAGS...: one run of train.py in runs/everyday/NAME
  local name=$1
  shift
  python train.py --output "$R/$name/checkpoint" --work-dir "$R/$name/work" "$@"
}

corpora() {  # Ding's sentences and headwords, the game dialogue, WordNet's English examples (apt, minutes)
  python -m corpora.everyday_corpus
  python -m corpora.parallel_text --source games
  python -m corpora.wordnet_examples
}

scratch() {  # from scratch, a BPE vocabulary learned from both corpora ("Ich" one piece), Ding 3x an epoch:
  # 5,844 steps (the shipped run took three sittings: 150 minutes, 150 stopped at step 3,650, and 125)
  train scratch-r3 --corpus multi30k+ding --ding-repeat 3 --lr 1e-3 --warmup 400 --dropout 0.15 --batch-tokens 6144 \
    --epochs 40 --threads 1 --eval-every 400 --save-every 100 --num-beams 5 --length-penalties 0.6,1.0,1.4 \
    --skip-test --snapshot-steps 0,40,120,350,1000 --max-steps 5844 --time-limit 425
}

fresh() {  # a fresh, decaying schedule from those weights, the same data: 100 minutes, 1,667 steps
  train cont-r3 --init-from "$R/scratch-r3/checkpoint" --ding-repeat 3 "${FRESH[@]}" --time-limit 100
}

recovered() {  # Ding 6x with its recovered readings (105 minutes), then the mean of its weights and the start's
  train cont-r6-recovered --init-from "$R/cont-r3/checkpoint" --ding-repeat 6 "${FRESH[@]}" --time-limit 105
  python recipes/soup.py "$R/cont-r3/checkpoint" "$R/cont-r6-recovered/checkpoint" --out "$R/soup"
}

distilled() {  # the captions' English replaced by the captions model's (sequence-level distillation); three runs
  # from the soup (the shipped ones side by side, one core each), and the mean of the three
  python recipes/distill.py "$CAPTIONS" --out "$DISTILLED"
  local start=(--init-from "$R/soup" "${FRESH[@]}" --distilled-targets "$DISTILLED")
  train cont-r6-senses-distilled "${start[@]}" --ding-repeat 6 --ding-words --time-limit 85  # headwords, one sense a word
  train cont-r6-distilled "${start[@]}" --ding-repeat 6 --time-limit 95
  train cont-r12-distilled "${start[@]}" --ding-repeat 12 --time-limit 95
  python recipes/soup.py "$R"/cont-r6-senses-distilled/checkpoint "$R"/cont-r6-distilled/checkpoint \
    "$R"/cont-r12-distilled/checkpoint --out "$R/soup-skk"
}

backtranslated() {  # a reverse model (English -> German, 55 minutes on 2 cores) writes German for WordNet's
  # English examples (tagged <BT>); then those pairs 2x and the game dialogue 2x an epoch beside the
  # distilled recipe with headwords: 80 minutes, 1,419 steps, its last saves averaged
  train reverse --reverse --init-from "$R/soup-skk" --corpus multi30k+ding --ding-repeat 3 --ding-phrases \
    --more-corpora games:1 --lr 5e-4 --warmup 300 --dropout 0.15 --batch-tokens 6144 --epochs 40 --threads 2 \
    --eval-every 400 --save-every 100 --num-beams 5 --length-penalties 1.0 --skip-test --snapshot-steps none \
    --time-limit 55
  python -m corpora.back_translation "$R/reverse/checkpoint"
  train backtranslated-2 --init-from "$R/soup-skk" --ding-repeat 6 --ding-words "${FRESH[@]}" \
    --distilled-targets "$DISTILLED" --more-corpora backtranslated:2,games:2 --time-limit 80
}

tagged() {  # the same recipe again with <CAP> in front of every caption's German: 80 minutes, 1,297 steps,
  # its best save (step 1,200); the shipped model is read without the tag
  train caption-tag --init-from "$R/backtranslated-2/checkpoint" --ding-repeat 6 --ding-words "${FRESH[@]}" \
    --distilled-targets "$DISTILLED" --more-corpora backtranslated:2,games:2 --caption-tag "<CAP>" --time-limit 80
  python recipes/tag_scores.py "$R/caption-tag/checkpoint"  # untagged, tagged, tagged where the domain guess says caption
}

ship() {  # every file beside the weights, and the test sets scored once
  local out=$R/ship-tag
  python recipes/soup.py "$R/caption-tag/checkpoint" --out "$out" --test  # the run's folder, with its card
  python -m training.evidence --checkpoint "$out" --corpus multi30k+ding --ding-words \
    --distilled-targets "$DISTILLED" --more-corpora backtranslated,games
  python recipes/alarm.py --checkpoint "$out" --write
  python recipes/repetition.py "$out" --values 0,3  # the rule ships as decoding.json (no_repeat_ngram)
  echo '{"no_repeat_ngram": 3}' >"$out/decoding.json"
  python recipes/everyday/score_test.py "$out"  # the test sets as it ships, its decoding rule included
}

install() {
  rm -rf checkpoints/de-en-everyday.old
  mv checkpoints/de-en-everyday checkpoints/de-en-everyday.old
  mv "$R/ship-tag" checkpoints/de-en-everyday && rm -rf checkpoints/de-en-everyday.old
  echo "installed checkpoints/de-en-everyday"
}

STEPS=(corpora scratch fresh recovered distilled backtranslated tagged ship)
[ $# -gt 0 ] || set -- "${STEPS[@]}"
for step in "$@"; do
  case " ${STEPS[*]} install " in
    *" $step "*) echo "== $step" && "$step" ;;
    *) echo "no step '$step': one of ${STEPS[*]} install" >&2 && exit 2 ;;
  esac
done
