"""ZeroGPU durations sized to the request (ui/gpu_time.py): short and greedy asks for little, long and
beamed for more, never past the cap. (tests/test_spaces.py checks that spaces.GPU is handed the callable.)"""

import pytest

from lens.explain import DecodingOptions
from ui.gpu_time import START_SECONDS, GpuTime, beams_of, characters
from ui.runtime import MAX_GPU_SECONDS, gpu

SHORT = "Ein Hund rennt."
LONG = "Ein Mann in einem blauen Hemd steht auf einer Leiter und putzt die Fenster eines hohen Gebäudes. " * 3


def test_a_short_greedy_sentence_asks_for_much_less_than_the_cap():
    time = GpuTime(cap=30)
    short = time(SHORT, DecodingOptions(num_beams=1))
    assert START_SECONDS <= short < 10
    longer = time(LONG, DecodingOptions(num_beams=4))
    assert short < longer <= 30


def test_the_cap_bounds_every_request_and_a_malformed_one_asks_for_the_cap():
    time = GpuTime(cap=12, runs=lambda *_: 64)
    assert time(LONG * 10, DecodingOptions(num_beams=8)) == 12
    assert time(None, DecodingOptions()) == 12  # refused inside the call; the declared time is the most
    assert GpuTime(cap=20, runs=lambda _text, steps: steps)(SHORT, "not a number") == 20


def test_runs_and_beams_read_from_the_functions_own_arguments():
    options = DecodingOptions(num_beams=4)
    assert characters((["Eins.", "Zwei drei."],)) == 15 and characters((SHORT,)) == len(SHORT)
    assert beams_of((["x"], (options, None))) == 4  # a batcher's key: (options, prefix)
    assert beams_of((SHORT, 3, 1)) == 1
    by_steps = GpuTime(cap=60, runs=lambda _text, _method, steps, *_: 3 * steps, beams=lambda *_: 1)
    assert by_steps(LONG, "ig", 8, None) < by_steps(LONG, "ig", 32, None) <= 60


def test_gpu_refuses_a_cap_past_the_longest_call():
    with pytest.raises(ValueError, match="whole seconds"):
        gpu(duration=GpuTime(cap=MAX_GPU_SECONDS + 1))(len)
    assert gpu(duration=GpuTime(cap=5))(len)("abc") == 3
