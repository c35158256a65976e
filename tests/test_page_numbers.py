"""Numbers and sentences the page writes that must agree with the code they describe: the walk's copy-lab time is
each front door's own limit; the Code view's answer on the positional encoding says what model/layers.py does."""

import json
import re
from pathlib import Path

from training.lab import MAX_TIME_S

STATIC = Path(__file__).resolve().parents[1] / "ui" / "static"


def test_the_walk_promises_the_copy_labs_own_time_on_each_front_door():
    tour = (STATIC / "tour.js").read_text(encoding="utf-8")
    app, site = map(int, re.search(r"COPYLAB_SECONDS = (\d+), TIME_LIMIT_S = (\d+)", tour).groups())
    page_limit = int(re.search(r"export const TIME_LIMIT_S = (\d+)", (STATIC / "copytrain.js").read_text()).group(1))
    assert (app, site) == (MAX_TIME_S, page_limit)
    for locale in ("en", "zh-CN"):
        text = json.loads((STATIC / "messages" / f"{locale}.json").read_text(encoding="utf-8"))["tour.copylab.text"]
        assert "{seconds}" in text and "minute" not in text and "分钟" not in text


def test_the_code_views_positional_encoding_answer_says_it_broadcasts():
    layers = (Path(__file__).resolve().parents[1] / "model" / "layers.py").read_text(encoding="utf-8")
    assert "return x + self.pe[offset : offset + length]" in layers  # a (L, D) table added to (B, L, D)
    for locale, word in (("en", "broadcasting"), ("zh-CN", "广播")):
        answer = json.loads((STATIC / "messages" / f"{locale}.json").read_text(encoding="utf-8"))["code.a_pe"]
        assert word in answer and "{batch}" in answer and "unsqueeze(0)" in answer
        assert "not broadcast" not in answer and "而不是" not in answer
