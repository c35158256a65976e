"""The decoder step compiled ahead of time into a package (one file), in a process of its own.

`torch.export` traces StepGraph with symbolic sizes (model/step_graph.py), and AOTInductor compiles
the traced graph into a shared library packaged as `.pt2`: the weights frozen into it as constants,
Inductor's own C++ GEMM kernels autotuned for these few-row products (max_autotune), no Python and no
guards between the 19 matrix products. The package is loaded with `torch._inductor.aoti_load_package`
and called like a function.

Building runs in a child process (`main()`: MODEL_DIR PACKAGE): the serving
process never holds the compiler's memory or the interpreter while it works, and a crash of the
compiler takes only the child down. The package's name is a fingerprint of everything it is built from
(the weights, the config, the precision, the thread count, torch's version and this code), so a package
in the cache is reused only for the very model it was built for.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
from torch import nn

FORMAT = 1  # raised when the package's inputs or outputs change meaning
BUILD_TIMEOUT_S = 1800
CHILD = "import sys; from model.ahead_of_time import main; main(sys.argv[1:])"  # not -m: model/ imports this module
SETTINGS = dict(freezing=True, max_autotune=True, max_autotune_gemm_backends="CPP,ATEN",
                autotune_num_choices_displayed=0, max_autotune_report_choices_stats=False)  # a quiet log


def fingerprint(model: nn.Module, precision: str, threads: int) -> str:
    """A short hash of everything a package is built from."""
    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for code in ("ahead_of_time.py", "step_graph.py"):
        digest.update((here / code).read_bytes())
    digest.update(json.dumps([FORMAT, torch.__version__, precision, threads, model.config.to_dict()]).encode())
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().view(torch.uint8).numpy())
    return digest.hexdigest()[:20]


def build_in_child(model: nn.Module, precision: str, threads: int, package: Path, inductor_cache: Path) -> None:
    """Build `package` for `model` in a child process; RuntimeError with the child's last words if it fails."""
    with tempfile.TemporaryDirectory(prefix="attention-lens-step-") as folder:
        model.save_pretrained(folder)
        root = str(Path(__file__).resolve().parents[1])  # the folder holding the model package
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(inductor_cache),
                   PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
        command = [sys.executable, "-c", CHILD, folder, str(package), "--precision", precision,
                   "--threads", str(threads)]
        try:
            done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"building the compiled step took over {BUILD_TIMEOUT_S} s") from None
    if done.returncode != 0:
        raise RuntimeError(f"building the compiled step failed ({done.returncode}): {last_error(done.stderr)}")


def last_error(stderr: str) -> str:
    """The last exception line a child printed (`SomeError: what`), else its last line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"^[\w.]*(Error|Exception)\b", line)]
    return (errors or lines or ["no message"])[-1][:400]


def build(model: nn.Module, precision: str, package: Path) -> Path:
    """Export StepGraph and compile it with AOTInductor into `package` (written whole, then renamed)."""
    import torch._inductor

    from .step_graph import StepGraph, dynamic_shapes, example_inputs

    graph, inputs = StepGraph(model, precision).eval(), example_inputs(model)  # inputs made outside inference mode
    with torch.inference_mode():
        exported = torch.export.export(graph, inputs, dynamic_shapes=dynamic_shapes(model), strict=False)
    with tempfile.TemporaryDirectory(prefix=".building-", dir=package.parent) as folder:
        partial = Path(folder) / package.name  # the package's name is also its archive's folder inside
        torch._inductor.aoti_compile_and_package(exported, package_path=str(partial), inductor_configs=SETTINGS)
        os.replace(partial, package)  # a reader never sees half a package
    return package


def main(argv: list[str] | None = None) -> None:
    from .transformer import Transformer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_dir", help="a folder save_pretrained wrote")
    parser.add_argument("package", type=Path, help="the .pt2 file to write")
    parser.add_argument("--precision", choices=("fp32", "int8"), default="fp32")
    parser.add_argument("--threads", type=int, default=1, help="the thread count the package is tuned for")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    args.package.parent.mkdir(parents=True, exist_ok=True)
    build(Transformer.from_pretrained(args.model_dir).eval(), args.precision, args.package)


if __name__ == "__main__":
    main()
