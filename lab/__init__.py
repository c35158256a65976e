"""The lab: the paper's Transformer built differently on purpose, trained beside the paper's own.

Each experiment (experiments.py) trains two tiny encoder-decoders on the same toy task (tasks.py) from the same
initial weights: A as the paper has it, B with one thing changed (settings.py's switches). The model (model.py)
is written with PyTorch's autograd; the page trains the same model with a backward pass written by hand
(ui/static/trainer.js), and tests/test_lab_parity.py holds the two to the same losses and gradients.

    python -m lab list
    python -m lab run scale --seeds 0 1 2
"""
