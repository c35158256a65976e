#!/bin/bash
# The shipped everyday recipe (cont-r6-words-distilled.sh: Ding 6x with its recovered readings and headwords,
# the captions' English distilled) with the back-translated WordNet examples once an epoch
# (python -m training.back_translation runs/everyday/reverse/checkpoint, tagged <BT>) and the game dialogue
# twice. MORE=backtranslated:2,games:2 changes the mix. One core; rerun to resume.
cd "$(dirname "$0")"
RUN=${RUN:-backtranslated} TIME_LIMIT=${TIME_LIMIT:-100} exec ./cont-r6-words-long.sh \
  --distilled-targets runs/distill/multi30k-train.de-en.txt --more-corpora ${MORE:-backtranslated:1,games:2} "$@"
