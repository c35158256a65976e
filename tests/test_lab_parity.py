"""The page's trainer (ui/static/trainer.js, backprop.js's backward pass written by hand) against its PyTorch
twin (lab/, autograd), switch by switch: the same initial weights, the same losses for 20 steps (to 1e-4 relative)
and the same gradients, node running the page's module."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from lab.settings import SWITCHES, LabSettings
from lab.train import Stepper

ROOT = Path(__file__).resolve().parents[1]
STEPS = 20
pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node runs the page's modules")

PROBE = """
import { startRun, trainStep } from "./ui/static/trainer.js";
const run = startRun(JSON.parse(process.argv[1])), first = run.P.all.map((p) => Array.from(p.v));
const losses = [], norms = [];
let grads = null;
for (let i = 0; i < STEPS; i++) {
  const r = trainStep(run);
  losses.push(r.loss); norms.push(r.norm);
  if (i === 0) grads = run.P.all.map((p) => Array.from(p.g));
}
console.log(JSON.stringify({ first, losses, norms, grads }));
""".replace("STEPS", str(STEPS))


def page_run(settings: dict[str, object]) -> dict[str, list]:
    done = subprocess.run(
        ["node", "--input-type=module", "-e", PROBE, json.dumps(settings)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def twin_run(s: LabSettings) -> dict[str, list]:
    stepper = Stepper.start(s)
    first = [p.detach().flatten().tolist() for p in stepper.model.order]
    losses, norms, grads = [], [], None
    for i in range(STEPS):
        loss, norm, _ = stepper()
        losses.append(loss)
        norms.append(norm)
        if i == 0:
            grads = [
                (p.grad if p.grad is not None else torch.zeros_like(p)).flatten().tolist() for p in stepper.model.order
            ]
    return {"first": first, "losses": losses, "norms": norms, "grads": grads}


def as64(values: list[float]) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


# Every switch's other values, each on its own; small sizes, so that 20 steps of both take a second.
SMALL = {"n_layers": 2, "n_heads": 2, "d_model": 16, "steps": 20, "warmup": 5}
CASES = (
    [{}]
    + [{name: value} for name, values in SWITCHES.items() for value in values[1:]]
    + [{"n_heads": 4, "split": "view"}]
)


@pytest.mark.parametrize("switch", CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "paper")
def test_the_page_trains_as_pytorch_does(switch):
    settings = {**SMALL, **switch}
    page, twin = page_run(settings), twin_run(LabSettings.from_dict(settings))
    assert len(page["first"]) == len(twin["first"])
    for a, b in zip(page["first"], twin["first"], strict=True):
        assert torch.allclose(as64(a), as64(b), rtol=0, atol=1e-12), "the same initial weights"
    for a, b in zip(page["grads"], twin["grads"], strict=True):
        assert torch.allclose(as64(a), as64(b), rtol=1e-6, atol=1e-9), "the same gradients"
    losses = as64(page["losses"]), as64(twin["losses"])
    assert torch.allclose(*losses, rtol=1e-4, atol=0), (page["losses"][-3:], twin["losses"][-3:])
    assert page["losses"][-1] < page["losses"][0] or switch.get("positions") == "none", "it learns"
