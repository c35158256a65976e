#!/bin/bash
# One default model for both kinds of German: the captions model (checkpoints/de-en) fine-tuned on its own beam
# translations of the captions (self-distillation: recipes/distill.py checkpoints/de-en
# --out runs/distill/multi30k-train.de-en.txt, so the captions keep what it writes), the Ding sentences
# $DING times an epoch with the headwords, and the game dialogue. Its vocabulary stays the captions model's.
# Snapshots along the way for time travel. One core; rerun to resume. Two runs side by side on 24 GiB need
# MALLOC_MMAP_THRESHOLD_=65536 (docs/everyday.md): without it one was killed for memory at 12.5 GB.
cd "$(dirname "$0")/../.."
export MULTI30K_DIR=${MULTI30K_DIR:-../shared/data/multi30k}  # the corpus, as the tests find it
RUN=${RUN:-default-ft}
exec python train.py --init-from ${INIT_FROM:-checkpoints/de-en} --corpus multi30k+ding --ding-repeat ${DING:-3} --ding-words \
  --distilled-targets runs/distill/multi30k-train.de-en.txt --more-corpora ${MORE:-games:1} \
  --output runs/everyday/$RUN/checkpoint --work-dir runs/everyday/$RUN/work \
  --lr ${LR:-5e-4} --warmup 200 --dropout 0.3 --batch-tokens 6144 --epochs 40 --time-limit ${TIME_LIMIT:-100} --threads 1 \
  --eval-every 300 --save-every 100 --num-beams 5 --length-penalties 1.0,1.4 --skip-test --snapshot-steps 300,900 "$@"
