"""One list of refused characters for every typed field (ui/runtime.unsafe_character, and inpage.js's typedRefusal
in the page): a prefix, a forced word, an alternative and time travel's sentence refuse control characters, invisible
format characters, line separators and noncharacters by name, and the page refuses exactly the same code points."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ui.api import checked_prefix
from ui.runtime import checked_typed, unsafe_character

ROOT = Path(__file__).resolve().parents[1]
ECHOED = ["\u2028", "\ufeff", "\u200b", "\ufffe", "\u202e", "\u2066", "\u0007", "\u0000"]


@pytest.mark.parametrize("character", ECHOED)
def test_a_typed_field_refuses_what_would_be_echoed(character):
    with pytest.raises(
        ValueError, match=rf"prefix has a control or text-direction character at position 3 \(U\+{ord(character):04X}\)"
    ):
        checked_prefix("A " + character + "man")
    with pytest.raises(ValueError, match="the typed word has"):
        checked_typed("dog" + character, "the typed word")
    assert checked_typed("A man\twith a\nhat", "prefix") == "A man\twith a\nhat"  # white space is no refusal


def test_time_travel_refuses_them_too():
    from lens.time_travel import SnapshotLibrary
    from ui.time_travel import traveller

    library = SnapshotLibrary(str(ROOT / "checkpoints" / "de-en"), max_loaded=1, device="cpu")
    run = traveller(library, lambda *a: {}, 256)
    answer = list(run("Ein Mann\u202e fährt."))[-1]
    assert "U+202E" in answer["error"] and "text has" in answer["error"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_page_refuses_exactly_the_same_code_points(tmp_path):
    script = """
import { typedRefusal } from "./ui/static/inpage.js";
const out = [];
for (let c = 0; c <= 0x10ffff; c++) {
  if (c >= 0xd800 && c <= 0xdfff) continue;
  if (typedRefusal(String.fromCodePoint(c), "x")) out.push(c);
}
console.log(JSON.stringify(out));"""
    done = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    page = json.loads(done.stdout)
    python = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and unsafe_character(chr(c))]
    assert page == python, sorted(set(page) ^ set(python))[:10]
