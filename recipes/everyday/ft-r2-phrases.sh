#!/bin/bash
# Lever: fine-tune the shipped captions model on Multi30k + Ding sentences (2x) + Ding phrase pairs; val/dev only.
cd "$(dirname "$0")/../.."
export MULTI30K_DIR=${MULTI30K_DIR:-../shared/data/multi30k}  # the corpus, as the tests find it
exec python train.py --init-from checkpoints/de-en --corpus multi30k+ding --ding-repeat 2 --ding-phrases \
  --output runs/everyday/ft-r2-phrases/checkpoint --work-dir runs/everyday/ft-r2-phrases/work \
  --lr 5e-4 --warmup 200 --dropout 0.3 --batch-tokens 6144 --epochs 6 --time-limit 33 --threads 2 \
  --eval-every 150 --save-every 50 --num-beams 5 --length-penalties 0.6,1.0,1.4 --skip-test --snapshot-steps none
