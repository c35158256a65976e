#!/bin/bash
# The shipped everyday model trained on with the Ding sentences six times an epoch (the mixing ratio
# beyond 3x) and a fresh, decaying learning rate; rerun to resume.
cd "$(dirname "$0")/../.."
export MULTI30K_DIR=${MULTI30K_DIR:-../shared/data/multi30k}  # the corpus, as the tests find it
exec python train.py --init-from ${INIT_FROM:-checkpoints/de-en-everyday} --corpus multi30k+ding --ding-repeat 6 \
  --output runs/everyday/cont-r6/checkpoint --work-dir runs/everyday/cont-r6/work \
  --lr 3e-4 --warmup 200 --dropout 0.15 --batch-tokens 6144 --epochs 40 --time-limit ${TIME_LIMIT:-110} --threads 1 \
  --eval-every 400 --save-every 100 --num-beams 5 --length-penalties 1.4 --skip-test --snapshot-steps none
