#!/bin/bash
# As cont-r6-words-long.sh, with the captions' English replaced by the captions model's beam translations
# (sequence-level distillation: recipes/distill.py checkpoints/de-en --out runs/distill/multi30k-train.de-en.txt).
# RUN=cont-r6-senses-distilled names the run made with the headword list that keeps one sense a word.
# Rerun to resume.
cd "$(dirname "$0")"
RUN=${RUN:-cont-r6-words-distilled} TIME_LIMIT=${TIME_LIMIT:-95} exec ./cont-r6-words-long.sh \
  --distilled-targets runs/distill/multi30k-train.de-en.txt
