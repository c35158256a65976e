#!/bin/bash
# As cont-r6-recovered.sh (the shipped everyday model, the Ding sentences with their recovered readings six
# times an epoch, a fresh schedule), with the 44,193 common headwords of the dictionary once an epoch
# ("Bahnhof" -> "station"). Rerun to resume.
cd "$(dirname "$0")/../.."
export MULTI30K_DIR=${MULTI30K_DIR:-../shared/data/multi30k}  # the corpus, as the tests find it
exec python train.py --init-from ${INIT_FROM:-checkpoints/de-en-everyday} --corpus multi30k+ding --ding-repeat 6 --ding-words \
  --output runs/everyday/cont-r6-words/checkpoint --work-dir runs/everyday/cont-r6-words/work \
  --lr 3e-4 --warmup 200 --dropout 0.15 --batch-tokens 6144 --epochs 40 --time-limit ${TIME_LIMIT:-45} --threads 1 \
  --eval-every 400 --save-every 100 --num-beams 5 --length-penalties 1.4 --skip-test --snapshot-steps none
