"""The encoder and the decoder step compiled ahead of time into packages (a file each), in a process of its own.

`torch.export` traces EncoderGraph and StepGraph with symbolic sizes (compiled/step_graph.py), and
AOTInductor compiles each traced graph into a shared library packaged as `.pt2`: the weights frozen
into it as constants, Inductor's own C++ GEMM kernels autotuned for these few-row products
(max_autotune), no Python and no guards between the matrix products. compiled/package_runner.py calls
a package's library.

Building runs in a child process (compiled/build_child.py): the serving
process never holds the compiler's memory or the interpreter while it works, and a crash of the
compiler takes only the child down. A package's name holds a fingerprint of everything it is built from
(the weights, the config, the precision, the thread count, torch's version and this code), so a
package in the cache is reused only for the very model it was built for.
"""

from __future__ import annotations

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

from .step_graph import (
    EncoderGraph,
    StepGraph,
    dynamic_shapes,
    encoder_dynamic_shapes,
    encoder_example_inputs,
    example_inputs,
)

FORMAT = 1  # raised when the package's inputs or outputs change meaning
BUILD_TIMEOUT_S = 1800
CHILD = "import sys; from compiled.build_child import main; main(sys.argv[1:])"  # the child's entry
SETTINGS = dict(
    freezing=True,
    max_autotune=True,
    max_autotune_gemm_backends="CPP,ATEN",
    autotune_num_choices_displayed=0,
    max_autotune_report_choices_stats=False,
)  # a quiet log


def weights_digest(model: nn.Module) -> bytes:
    """A hash of the model's config and every weight, the part of a package's name shared by both packages."""
    digest = hashlib.sha256(json.dumps(model.config.to_dict()).encode())
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().view(torch.uint8).numpy())
    return digest.digest()


def fingerprint(weights: bytes, precision: str, threads: int) -> str:
    """A short hash of everything a package is built from: the weights, the precision, the thread count,
    torch's version and the code that builds it."""
    digest = hashlib.sha256(weights)
    here = Path(__file__).resolve().parent
    for code in ("ahead_of_time.py", "step_graph.py"):
        digest.update((here / code).read_bytes())
    digest.update(json.dumps([FORMAT, torch.__version__, precision, threads]).encode())
    return digest.hexdigest()[:20]


def packages(folder: Path, model: nn.Module, precision: str, threads: int) -> dict[str, Path]:
    """Where the two packages of `model` lie in `folder`: the encoder's (fp32 whatever the step's precision,
    as in eager decoding) and the step's."""
    weights = weights_digest(model)
    return {
        "encoder": folder / f"encoder-{fingerprint(weights, 'fp32', threads)}.pt2",
        "step": folder / f"step-{fingerprint(weights, precision, threads)}.pt2",
    }


def build_in_child(
    model: nn.Module, precision: str, threads: int, wanted: dict[str, Path], inductor_cache: Path
) -> None:
    """Build the `wanted` packages ({"encoder" or "step": path}) for `model` in a child process;
    RuntimeError with the child's last words if it fails."""
    with tempfile.TemporaryDirectory(prefix="attention-lens-step-") as folder:
        model.save_pretrained(folder)
        root = str(Path(__file__).resolve().parents[1])  # the folder holding the model package
        env = dict(
            os.environ,
            TORCHINDUCTOR_CACHE_DIR=str(inductor_cache),
            PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p),
        )
        command = [sys.executable, "-c", CHILD, folder, "--precision", precision, "--threads", str(threads)]
        for name, path in wanted.items():
            command += [f"--{name}", str(path)]
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


def graph(name: str, model: nn.Module, precision: str) -> tuple[nn.Module, tuple, tuple]:
    """The module to export for package `name`, its example inputs and their symbolic sizes."""
    if name == "encoder":
        return EncoderGraph(model).eval(), encoder_example_inputs(model), encoder_dynamic_shapes(model)
    return StepGraph(model, precision).eval(), example_inputs(model), dynamic_shapes(model)


def build(model: nn.Module, name: str, precision: str, package: Path) -> Path:
    """Export graph `name` and compile it with AOTInductor into `package` (written whole, then renamed)."""
    import torch._inductor

    module, inputs, shapes = graph(name, model, precision)  # inputs made outside inference mode
    with torch.inference_mode():
        exported = torch.export.export(module, inputs, dynamic_shapes=shapes, strict=False)
    with tempfile.TemporaryDirectory(prefix=".building-", dir=package.parent) as folder:
        partial = Path(folder) / package.name  # the package's name is also its archive's folder inside
        torch._inductor.aoti_compile_and_package(exported, package_path=str(partial), inductor_configs=SETTINGS)
        os.replace(partial, package)  # a reader never sees half a package
    return package
