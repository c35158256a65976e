"""The device and precision of a run: bf16 autocast only where the hardware does it fast."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import torch

BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")  # native bf16 arithmetic; without them it is emulated


def cpu_flags() -> set[str]:
    """The CPU's feature flags from /proc/cpuinfo (empty where there is no such file)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def choose_precision(setting: str, device: torch.device) -> tuple[bool, str]:
    """(use bf16 autocast?, why). 'auto' picks bf16 on CUDA with bf16 and on CPUs with native bf16."""
    if setting == "fp32":
        return False, "fp32, as asked (--precision fp32)"
    if setting == "bf16":
        return True, "bf16 autocast, as asked (--precision bf16)"
    if device.type == "cuda":
        if torch.cuda.is_bf16_supported():
            return True, f"bf16 autocast: {torch.cuda.get_device_name(device)} computes bf16 natively"
        return False, f"fp32: {torch.cuda.get_device_name(device)} has no fast bf16"
    native = [flag for flag in BF16_CPU_FLAGS if flag in cpu_flags()]
    if native:
        return True, f"bf16 autocast: the CPU has {', '.join(native)}"
    return False, (
        f"fp32: the CPU lacks {' and '.join(BF16_CPU_FLAGS)}, so bf16 would be emulated "
        "(measured 4.8x slower a step on such a CPU)"
    )


def describe_hardware(device: torch.device, world: int, precision: str) -> str:
    if device.type == "cuda":
        return f"{world} x {torch.cuda.get_device_name(device)}, {precision}"
    return f"{world} process(es) on {os.cpu_count()} CPU core(s) ({platform.machine()}, no GPU), {precision}"
