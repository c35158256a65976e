#!/bin/bash
# An everyday specialist to mix with the shipped weights (recipes/soup.py): from the shipped everyday
# checkpoint, the Ding sentences with their recovered readings twelve times an epoch, the common headwords and
# the phrase pairs once, so that captions are about a tenth of what it reads. Rerun to resume.
cd "$(dirname "$0")/../.."
export MULTI30K_DIR=${MULTI30K_DIR:-../shared/data/multi30k}  # the corpus, as the tests find it
exec python train.py --init-from ${INIT_FROM:-checkpoints/de-en-everyday} --corpus multi30k+ding --ding-repeat 12 --ding-words --ding-phrases \
  --output runs/everyday/cont-r12-lexicon/checkpoint --work-dir runs/everyday/cont-r12-lexicon/work \
  --lr 3e-4 --warmup 200 --dropout 0.15 --batch-tokens 6144 --epochs 40 --time-limit ${TIME_LIMIT:-110} --threads 1 \
  --eval-every 400 --save-every 100 --num-beams 5 --length-penalties 1.4 --skip-test --snapshot-steps none
