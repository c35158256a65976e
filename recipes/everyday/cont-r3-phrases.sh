#!/bin/bash
# The shipped everyday model (scratch-r3, step 5,844) trained on further with a fresh, decaying
# learning rate: Multi30k + Ding sentences three times an epoch, plus the Ding phrase pairs; rerun to resume.
cd "$(dirname "$0")/../.."
export MULTI30K_DIR=${MULTI30K_DIR:-../shared/data/multi30k}  # the corpus, as the tests find it
exec python train.py --init-from runs/everyday/scratch-r3/checkpoint --corpus multi30k+ding --ding-repeat 3 --ding-phrases \
  --output runs/everyday/cont-r3-phrases/checkpoint --work-dir runs/everyday/cont-r3-phrases/work \
  --lr 3e-4 --warmup 200 --dropout 0.15 --batch-tokens 6144 --epochs 40 --time-limit ${TIME_LIMIT:-100} --threads 1 \
  --eval-every 400 --save-every 100 --num-beams 5 --length-penalties 1.4 --skip-test --snapshot-steps none
