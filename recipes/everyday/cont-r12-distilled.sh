#!/bin/bash
# As cont-r6-distilled.sh with the Ding sentences twelve times an epoch instead of six: whether the captions
# that distillation keeps leave room for more everyday text. Rerun to resume.
cd "$(dirname "$0")"
RUN=cont-r12-distilled TIME_LIMIT=${TIME_LIMIT:-95} exec ./cont-r6-recovered.sh \
  --distilled-targets runs/distill/multi30k-train.de-en.txt --ding-repeat 12
