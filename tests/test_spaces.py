"""ZeroGPU by the book, with the real `spaces` package: imported before torch, the model run only
inside gpu()-wrapped functions (each with its own duration), those plain CPU functions off ZeroGPU,
and messages and results that survive ZeroGPU's pickled worker boundary."""

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

spaces = pytest.importorskip("spaces", reason="the `spaces` package (requirements-dev.txt) is not installed")

pytestmark = [pytest.mark.server]
ROOT = Path(__file__).resolve().parent.parent
SENTENCE = "Ein Mann fährt Fahrrad."

IMPORT_ORDER = """
import importlib.abc, json, sys
seen = {}
class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "torch" and "torch" not in seen:
            seen["torch"] = "spaces" in sys.modules
        return None
sys.meta_path.insert(0, Watch())
import app
import spaces, torch
print(json.dumps({"spaces_first": seen["torch"], "real": hasattr(spaces, "GPU") and hasattr(spaces, "aoti_compile"),
                  "cuda_initialized": torch.cuda.is_initialized(), "device": app.translator.device.type}))
"""


@pytest.mark.slow
def test_spaces_is_imported_before_anything_imports_torch(tiny_checkpoint):
    env = {**os.environ, "MODEL_ID": str(tiny_checkpoint), "GRADIO_ANALYTICS_ENABLED": "False"}
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_ORDER], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    assert facts["spaces_first"] and facts["real"], facts
    assert not facts["cuda_initialized"]  # CUDA is touched only inside a GPU function


@pytest.fixture(scope="module")
def app(tiny_checkpoint):
    """app.py imported in this process (with the real `spaces`), launched on a free port."""
    from ui.app_process import in_process_app

    with in_process_app(tiny_checkpoint) as module:
        yield module


@pytest.fixture()
def model_runs(app):
    """Every forward of any module of the app's model, recorded as 'inside a GPU function or not'."""
    from ui.runtime import on_gpu

    calls = []
    hooks = [m.register_forward_pre_hook(lambda *_: calls.append(on_gpu())) for m in app.translator.model.modules()]
    yield calls
    for hook in hooks:
        hook.remove()


def test_every_model_run_happens_inside_a_gpu_function(app, model_runs):
    from gradio_client import Client

    from translation import Translator

    reference = Translator.from_pretrained(os.environ["MODEL_ID"], device="cpu")
    app.translator.translate(SENTENCE, max_new_tokens=8)
    assert model_runs and not any(model_runs)  # the hook sees a run outside a GPU function
    model_runs.clear()

    client = Client(app.demo.local_url, verbose=False)
    english = client.predict(SENTENCE, "greedy", 1, 1.0, 20, api_name="/translate")
    assert english == reference.translate(SENTENCE, num_beams=1, max_new_tokens=20)
    explained = client.predict(SENTENCE, "beam search", 2, 1.0, 20, api_name="/explain")
    assert explained["translation"] == reference.translate(SENTENCE, num_beams=2, max_new_tokens=20)
    assert len(model_runs) > 0 and all(model_runs), "the model ran outside a @gpu function"

    model_runs.clear()
    page = next(fn for fn in app.demo.fns.values() if getattr(fn.fn, "__module__", "") == "ui.translate")
    payload = page.fn(SENTENCE, "greedy", 1, 1.0, 16)
    assert payload["sentences"] and len(model_runs) > 0 and all(model_runs)


def test_the_gpu_functions_are_exactly_the_model_runners_each_with_a_duration(app):
    from lens.explain import DecodingOptions
    from ui.gpu_time import GpuTime
    from ui.runtime import GPU_FUNCTIONS, MAX_GPU_SECONDS

    expected = {
        f"ui.api.inside_calls.<locals>.run_{name}"
        for name in ("trace", "ablate", "qkv", "logit_lens", "contributions", "contrast", "patch")
    }
    expected |= {f"ui.shared_calls._build.<locals>.{name}_sentences" for name in ("translate", "explain")}
    assert expected <= set(GPU_FUNCTIONS), GPU_FUNCTIONS
    # each asks for seconds sized to its request (ui/gpu_time.py), within a cap
    assert all(isinstance(time, GpuTime) and 0 < time.cap <= MAX_GPU_SECONDS for time in GPU_FUNCTIONS.values())
    greedy = DecodingOptions(num_beams=1)
    assert GPU_FUNCTIONS["ui.api.inside_calls.<locals>.run_qkv"](SENTENCE, "cross", 1, 1, 1, greedy) < 10
    handlers = [fn.fn for fn in app.demo.fns.values() if fn.fn is not None]
    assert not any(hasattr(h, "gpu_duration") for h in handlers), "validation must run outside the GPU function"


def test_off_zerogpu_the_decorator_leaves_functions_plain_cpu_callables():
    from ui.runtime import gpu

    def add(a, b):
        return a + b

    assert not spaces.config.Config.zero_gpu
    assert spaces.GPU(add, duration=5) is add and spaces.GPU(duration=5)(add) is add
    assert gpu(duration=5)(add)(2, 3) == 5
    with pytest.raises(ValueError, match="whole seconds"):
        gpu(duration=0)(add)


class FakeZeroGPU:
    """What ZeroGPU does to a call: arguments and result pickled across a process boundary, and any
    exception but gr.Error reduced to a 'ZeroGPU worker error' without its message."""

    durations: list = []

    @classmethod
    def GPU(cls, task, duration=None):
        import gradio as gr

        cls.durations.append(duration)

        def handler(*args, **kwargs):
            args, kwargs = pickle.loads(pickle.dumps((args, kwargs)))
            try:
                result = task(*args, **kwargs)
            except gr.Error:
                raise
            except Exception as err:
                raise gr.Error(f"ZeroGPU worker error: {type(err).__name__}") from None
            return pickle.loads(pickle.dumps(result))

        return handler


def test_messages_and_results_survive_the_zerogpu_worker_boundary(app, monkeypatch):
    import numpy as np
    import torch

    from lens.explain import DecodingOptions, explain_text
    from ui import runtime
    from ui.gpu_time import GpuTime

    monkeypatch.setattr(runtime, "spaces", FakeZeroGPU)
    sized = GpuTime(cap=7)
    explain = runtime.gpu(duration=sized)(lambda text, options: explain_text(app.translator, text, options))
    assert (
        FakeZeroGPU.durations[-1] is sized
    )  # spaces.GPU gets the callable, and calls it with each request's arguments
    result = explain(SENTENCE, DecodingOptions(num_beams=1, max_new_tokens=12))
    assert isinstance(result.sentences[0].explanation.cross, np.ndarray)

    def refuses(text):
        raise ValueError(f"text {text!r} is refused")

    with pytest.raises(ValueError, match="text 'x' is refused"):  # the message, not 'ZeroGPU worker error'
        runtime.gpu(duration=5)(refuses)("x")
    with pytest.raises(TypeError, match="returned a Tensor"):
        runtime.gpu(duration=5)(lambda: {"maps": [torch.zeros(2)]})()
