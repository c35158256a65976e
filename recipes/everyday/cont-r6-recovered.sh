#!/bin/bash
# As cont-r6.sh (the shipped everyday model, Ding sentences six times an epoch, a fresh schedule), with the
# Ding corpus that also holds one reading of the parts with choices ("prison/jail", "(gern)"): 18,162
# training pairs against 16,197; dev and test are the same. Extra flags join the run's own (a flag given
# again overrides it), in a run named $RUN (cont-r6-distilled.sh, cont-r12-distilled.sh). Rerun to resume.
cd "$(dirname "$0")/../.."
export MULTI30K_DIR=${MULTI30K_DIR:-../shared/data/multi30k}  # the corpus, as the tests find it
RUN=${RUN:-cont-r6-recovered}
exec python train.py --init-from ${INIT_FROM:-checkpoints/de-en-everyday} --corpus multi30k+ding --ding-repeat 6 \
  --ding-dir ${DING_DIR:-runs/corpora/ding} \
  --output runs/everyday/$RUN/checkpoint --work-dir runs/everyday/$RUN/work \
  --lr 3e-4 --warmup 200 --dropout 0.15 --batch-tokens 6144 --epochs 40 --time-limit ${TIME_LIMIT:-105} --threads 1 \
  --eval-every 400 --save-every 100 --num-beams 5 --length-penalties 1.4 --skip-test --snapshot-steps none "$@"
