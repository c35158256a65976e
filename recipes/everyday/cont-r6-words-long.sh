#!/bin/bash
# As cont-r6-words.sh (Ding sentences with their recovered readings six times an epoch, the common headwords
# once), started from the shipped everyday checkpoint and run longer. Extra flags join the run's own, in a
# run named $RUN (cont-r6-words-distilled.sh). Rerun to resume.
cd "$(dirname "$0")/../.."
export MULTI30K_DIR=${MULTI30K_DIR:-../shared/data/multi30k}  # the corpus, as the tests find it
RUN=${RUN:-cont-r6-words-long}
exec python train.py --init-from ${INIT_FROM:-checkpoints/de-en-everyday} --corpus multi30k+ding --ding-repeat 6 --ding-words \
  --output runs/everyday/$RUN/checkpoint --work-dir runs/everyday/$RUN/work \
  --lr 3e-4 --warmup 200 --dropout 0.15 --batch-tokens 6144 --epochs 40 --time-limit ${TIME_LIMIT:-110} --threads 1 \
  --eval-every 400 --save-every 100 --num-beams 5 --length-penalties 1.4 --skip-test --snapshot-steps none "$@"
