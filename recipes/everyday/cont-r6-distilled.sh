#!/bin/bash
# As cont-r6-recovered.sh (no headwords), with the captions' English replaced by the captions model's beam
# translations (sequence-level distillation: recipes/distill.py checkpoints/de-en --out
# runs/distill/multi30k-train.de-en.txt). Rerun to resume.
cd "$(dirname "$0")"
RUN=cont-r6-distilled TIME_LIMIT=${TIME_LIMIT:-95} exec ./cont-r6-recovered.sh \
  --distilled-targets runs/distill/multi30k-train.de-en.txt
