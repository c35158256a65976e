#!/bin/bash
# The shipped everyday recipe (backtranslated.sh with backtranslated:2,games:2) with a domain tag: the German of
# every caption starts with <CAP> (train.py --caption-tag), the everyday text with none. At translation time the
# tag goes in front of a sentence that reads like a caption (lens/domain.py); recipes/tag_scores.py
# scores the run with and without it. One core; rerun to resume.
cd "$(dirname "$0")"
RUN=${RUN:-caption-tag} MORE=${MORE:-backtranslated:2,games:2} TIME_LIMIT=${TIME_LIMIT:-80} exec ./backtranslated.sh \
  --caption-tag "<CAP>" "$@"
