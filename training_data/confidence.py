"""How sure the model was of its translation, and whether a sentence looks unlike its training data.

The model learned from Multi30k image captions only. Its mean log-probability per target token
(teacher-forced over its own output) is high on captions and drops on other German; the threshold
below was chosen on the validation captions by recipes/confidence.py (see its report).
"""

from __future__ import annotations

import numpy as np

# Mean log-probability per token under which a sentence is flagged as unlike the captions: about
# the 5th percentile of the 1,014 val captions (beam 4): 5% of captions are flagged, and 37 of
# the 40 other-domain sentences of recipes/confidence.py (run it again for a new checkpoint).
UNFAMILIAR_BELOW = -0.52


def mean_log_prob(target_probs: np.ndarray) -> float:
    """Mean natural-log probability of the target tokens (0 = certain; -inf impossible)."""
    probs = np.asarray(target_probs, dtype=np.float64)
    if probs.size == 0:
        return 0.0
    return float(np.log(np.clip(probs, 1e-12, 1.0)).mean())


def looks_unfamiliar(target_probs: np.ndarray, threshold: float = UNFAMILIAR_BELOW) -> bool:
    """Whether the model's own confidence says the sentence is unlike its training captions."""
    return mean_log_prob(target_probs) < threshold
