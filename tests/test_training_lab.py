"""The copy-task lab: it trains within its caps and its time limit, its loss falls, and it reports
predictions and a cross-attention map as it goes; settings outside the caps are refused."""

import math

import numpy as np
import pytest

from training import lab, loop


def test_lab_trains_within_its_caps_and_its_loss_falls():
    reports = []
    settings = lab.CopyLabSettings(n_layers=1, n_heads=2, d_model=32, lr=5e-3, steps=80, seed=3)
    final = lab.train_copy(
        settings, on_progress=lambda p: reports.append((p.step, p.losses[-1][1])), time_limit_s=20, report_every=20
    )
    assert final.done and final.step <= 80 and final.elapsed_s < 25
    assert final.step == 80 or final.stopped_by_time
    losses = [loss for _, loss in final.losses]
    assert len(losses) == final.step
    first, last = np.mean(losses[:5]), np.mean(losses[-5:])
    print(f"lab: {final.step} steps in {final.elapsed_s:.1f} s, loss {first:.3f} -> {last:.3f}")
    assert last < first - 0.3
    assert [s for s, _ in reports][:2] == [20, 40] and len(reports) >= 2
    assert len(final.examples) == lab.SHOWN_EXAMPLES and all(len(e) == 3 for e in final.examples)
    L, H, T, S = final.cross_attention.shape
    assert (L, H) == (1, 2) and T == len(final.target_tokens) and S == len(final.source_tokens)
    np.testing.assert_allclose(final.cross_attention.sum(-1), 1.0, atol=1e-5)  # rows are distributions
    assert final.source_tokens[-1] == "</s>" and final.target_tokens[-1] == "</s>"
    assert lab.train_step is loop.train_step  # the same step code as train.py


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(n_layers=3), "n_layers must be between 1 and 2"),
        (dict(n_heads=8), "n_heads must be between 1 and 4"),
        (dict(d_model=128), "d_model must be between 16 and 64"),
        (dict(steps=601), "steps must be between 10 and 600"),
        (dict(lr=0.5), "lr must be between"),
        (dict(lr=math.nan), "lr must be between"),
        (dict(d_model=30, n_heads=4), "divisible"),
        (dict(steps=20.5), "steps must be a whole number"),
    ],
)
def test_lab_settings_outside_the_caps_are_refused(change, message):
    with pytest.raises(ValueError, match=message):
        lab.train_copy(lab.CopyLabSettings(**change), time_limit_s=1)


def test_lab_time_limit_is_capped():
    with pytest.raises(ValueError, match="time_limit_s"):
        lab.train_copy(lab.CopyLabSettings(), time_limit_s=lab.MAX_TIME_S + 1)
