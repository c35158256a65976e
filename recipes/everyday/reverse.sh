#!/bin/bash
# The reverse model for back-translation: English -> German (train.py --reverse), started from the everyday
# model's weights, whose BPE vocabulary was learned from both languages and whose tied table embeds both.
# Multi30k, the Ding sentences three times an epoch and its phrase pairs (the nearest to WordNet's example
# phrases that it will translate), and the game dialogue once. One core; rerun to resume. Writes
# runs/everyday/$RUN/checkpoint; then it back-translates runs/corpora/wordnet/train.en
# (python -m training.wordnet_examples).
cd "$(dirname "$0")/../.."
export MULTI30K_DIR=${MULTI30K_DIR:-../shared/data/multi30k}  # the corpus, as the tests find it
RUN=${RUN:-reverse}
exec python train.py --reverse --init-from ${INIT_FROM:-checkpoints/de-en-everyday} --corpus multi30k+ding --ding-repeat 3 \
  --ding-phrases --more-corpora ${MORE:-games:1} \
  --output runs/everyday/$RUN/checkpoint --work-dir runs/everyday/$RUN/work \
  --lr 5e-4 --warmup 300 --dropout 0.15 --batch-tokens 6144 --epochs 40 --time-limit ${TIME_LIMIT:-100} --threads 1 \
  --eval-every 400 --save-every 100 --num-beams 5 --length-penalties 1.0 --skip-test --snapshot-steps none "$@"
