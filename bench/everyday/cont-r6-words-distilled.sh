#!/bin/bash
# As cont-r6-words-long.sh, with the captions' English replaced by the captions model's beam translations
# (sequence-level distillation: bench/everyday/distill.py checkpoints/de-en --out runs/distill/multi30k-train.de-en.txt).
# Rerun to resume.
cd "$(dirname "$0")/../.."
export MULTI30K_DIR=${MULTI30K_DIR:-../shared/data/multi30k}  # the corpus, as the tests find it
exec python train.py --init-from ${INIT_FROM:-checkpoints/de-en-everyday} --corpus multi30k+ding --ding-repeat 6 --ding-words \
  --distilled-targets runs/distill/multi30k-train.de-en.txt \
  --output runs/everyday/cont-r6-words-distilled/checkpoint --work-dir runs/everyday/cont-r6-words-distilled/work \
  --lr 3e-4 --warmup 200 --dropout 0.15 --batch-tokens 6144 --epochs 40 --time-limit ${TIME_LIMIT:-95} --threads 1 \
  --eval-every 400 --save-every 100 --num-beams 5 --length-penalties 1.4 --skip-test --snapshot-steps none
