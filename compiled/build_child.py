"""The child process that builds the compiled packages: `python -c "from compiled.build_child import main; ..."`
MODEL_DIR [--encoder PATH] [--step PATH] --precision P --threads N (compiled/ahead_of_time.py starts it)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import torch

from model.transformer import Transformer

from .ahead_of_time import build


def die_with_parent() -> None:
    """On Linux, have the kernel end this process when the one that started it ends (an app stopped while
    it builds leaves no compiler running); elsewhere nothing."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the parent had already gone
            sys.exit(1)


def main(argv: list[str] | None = None) -> None:
    die_with_parent()
    parser = argparse.ArgumentParser(description="Build the compiled packages of a saved model.")
    parser.add_argument("model_dir", help="a folder save_pretrained wrote")
    parser.add_argument("--encoder", type=Path, help="the encoder's .pt2 file to write")
    parser.add_argument("--step", type=Path, help="the decoder step's .pt2 file to write")
    parser.add_argument("--precision", choices=("fp32", "int8"), default="fp32", help="the step's matrices")
    parser.add_argument("--threads", type=int, default=1, help="the thread count the packages are tuned for")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    model = Transformer.from_pretrained(args.model_dir).eval()
    for name in ("encoder", "step"):
        package = getattr(args, name)
        if package is not None:
            package.parent.mkdir(parents=True, exist_ok=True)
            build(model, name, args.precision, package)
