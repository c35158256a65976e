#!/bin/bash
# The everyday model trained further on Multi30k, Ding (three times an epoch, its headwords once) and the
# parallel text of Debian packages (python -m training.parallel_text: game dialogue twice an epoch, software
# catalogues and LibreOffice once). One core; rerun to resume. Extra flags join the run's own, in a run
# named $RUN. Writes runs/everyday/$RUN/checkpoint.
cd "$(dirname "$0")/../.."
export MULTI30K_DIR=${MULTI30K_DIR:-../shared/data/multi30k}  # the corpus, as the tests find it
RUN=${RUN:-more-text}
exec python train.py --init-from ${INIT_FROM:-checkpoints/de-en-everyday} --corpus multi30k+ding --ding-repeat 3 \
  --ding-words --more-corpora ${MORE:-games:2,software:1,libreoffice:1} \
  --output runs/everyday/$RUN/checkpoint --work-dir runs/everyday/$RUN/work \
  --lr 3e-4 --warmup 200 --dropout 0.15 --batch-tokens 6144 --epochs 40 --time-limit ${TIME_LIMIT:-110} --threads 1 \
  --eval-every 400 --save-every 100 --num-beams 5 --length-penalties 1.4 --skip-test --snapshot-steps none "$@"
