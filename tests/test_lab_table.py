"""The lab's table (ui/static/experiments.json), read by the page and by lab/: every experiment has a text in both
languages for itself and each of its pairs, settings inside the bounds, a direction the page can check, and a line of
code that is where it says it is. The page's bounds and switches are lab/settings.py's."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from lab.experiments import METRICS, experiments
from lab.settings import BOUNDS, SWITCHES

ROOT = Path(__file__).resolve().parents[1]
MESSAGES = ROOT / "ui" / "static" / "messages"


def test_at_least_the_ten_experiments_each_with_its_texts_pairs_and_code_line():
    table = experiments()
    assert {"layernorm", "causal-mask", "scale", "positions", "embedding-scale", "heads", "residual",
            "cross-attention-wiring", "label-smoothing", "learning-rate"} <= set(table)  # fmt: skip
    for locale in ("en", "zh-CN"):
        words = json.loads((MESSAGES / f"{locale}.json").read_text(encoding="utf-8"))
        for name, e in table.items():
            for key in ("title", "question", "predict", "explain"):
                assert words.get(f"lab.{name.replace('-', '_')}.{key}"), (locale, name, key)
            for pair in e.pair_ids():
                assert words.get(f"lab.{name.replace('-', '_')}.pair.{pair.replace('-', '_')}"), (locale, name, pair)
    for name, e in table.items():
        for pair in e.pair_ids():
            a, b = e.settings(pair)  # inside the bounds, or a ValueError
            assert a != b, f"{name}/{pair}: B changes something"
            expect = e.expected(pair)
            assert expect["metric"] in METRICS and expect["better"] in ("a", "b")
        lines = (ROOT / e.code["file"]).read_text(encoding="utf-8").splitlines()
        assert e.code["says"] in lines[e.code["line"] - 1], f"{name}: {e.code['file']} line {e.code['line']}"
        assert e.code["paper"] == lines[e.code["line"] - 1].strip(), f"{name}: the paper's line as the file has it"


def test_a_setting_out_of_bounds_is_refused_by_name_with_its_reason():
    e = experiments()["scale"]
    with pytest.raises(ValueError, match=r"steps must be from 10 to 1000 \(a thousand steps"):
        e.settings(steps=5)
    with pytest.raises(ValueError, match="unknown setting 'stpes'"):
        e.settings(stpes=50)
    with pytest.raises(ValueError, match="scale has no pair 'nope'"):
        e.settings("nope")


@pytest.mark.skipif(shutil.which("node") is None, reason="node reads the page's module")
def test_the_page_has_the_same_bounds_and_switches():
    code = 'import("./ui/static/trainer.js").then((m) => console.log(JSON.stringify([m.BOUNDS, m.SWITCHES])))'
    done = subprocess.run(["node", "-e", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    bounds, switches = json.loads(done.stdout)
    assert bounds == {k: list(v) for k, v in BOUNDS.items()}
    assert switches == {k: list(v) for k, v in SWITCHES.items()}
