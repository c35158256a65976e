#!/bin/bash
# From scratch on Multi30k + Ding (each Ding pair three times an epoch), with a new tokenizer learned
# from both corpora, so that "Ich" is one piece; rerun to resume.
cd "$(dirname "$0")/../.."
export MULTI30K_DIR=${MULTI30K_DIR:-../shared/data/multi30k}  # the corpus, as the tests find it
exec python train.py --corpus multi30k+ding --ding-repeat 3 \
  --output runs/everyday/scratch-r3/checkpoint --work-dir runs/everyday/scratch-r3/work \
  --lr 1e-3 --warmup 400 --dropout 0.15 --batch-tokens 6144 --epochs 40 --time-limit 150 --threads 1 \
  --eval-every 400 --save-every 100 --num-beams 5 --length-penalties 0.6,1.0,1.4 --skip-test \
  --snapshot-steps 0,40,120,350,1000
