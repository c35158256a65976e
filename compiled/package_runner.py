"""Running a compiled package (compiled/ahead_of_time.py) through its C interface, without the interpreter lock.

A `.pt2` package holds one shared library whose C functions (`AOTInductorModelContainerCreateWithDevice`,
`...Run`, `...Delete`) are AOTInductor's runtime interface. torch's own loader
(`torch._C._aoti.AOTIModelPackageLoader.boxed_run`) keeps Python's interpreter lock while the step runs:
measured here, a Python thread running beside a busy step got 0 % of its speed. Called through
`ctypes`, which lets go of the lock during a foreign call, the same thread kept 100 %, so the app's
other calls (another visitor's /explain, the web server itself) go on while a sentence decodes.

The tensors cross as AOTInductor's tensor handles (new references made by
`torch._C._aoti.unsafe_alloc_void_ptrs_from_tensors`, which the run takes over; the outputs are taken
back by `alloc_tensors_by_stealing_from_void_ptrs`). The library is unpacked once beside its package.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
import zipfile
from pathlib import Path

import torch
from torch import Tensor

from .package_memory import (
    giving_back_pages,
    madvise_dontneed,
    release_weight_pages,
    unused_constants,
)

log = logging.getLogger(__name__)

_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_pointer.restype, _pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_capsule = ctypes.pythonapi.PyCapsule_New
_capsule.restype, _capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class PackageRunner:
    """`runner(tensors)` -> the package's outputs; up to `instances` calls at once from different threads."""

    def __init__(self, package: Path, instances: int):
        self._library_path = unpacked_library(package)
        library = ctypes.CDLL(str(self._library_path))
        create = library.AOTInductorModelContainerCreateWithDevice
        create.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_char_p, ctypes.c_char_p]
        self._run = library.AOTInductorModelContainerRun
        self._run.argtypes = [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.c_size_t,
            ctypes.c_void_p,
            ctypes.c_void_p,
        ]
        self._delete = library.AOTInductorModelContainerDelete
        self._delete.argtypes = [ctypes.c_void_p]
        self._handle = ctypes.c_void_p()
        with giving_back_pages(self._library_path):  # while the weights are copied out, not only after
            check(create(ctypes.byref(self._handle), instances, b"cpu", None), "create the package's model")
        outputs = ctypes.c_size_t()
        check(library.AOTInductorModelContainerGetNumOutputs(self._handle, ctypes.byref(outputs)), "count its outputs")
        self.outputs = outputs.value
        self._library = library  # kept loaded while the handle lives
        try:
            self.released_unused = self._release_unused_constants(unused_constants(package))
        except (OSError, AttributeError, RuntimeError, ValueError) as error:  # a saving missed, never a load broken
            self.released_unused = 0
            log.warning("the unused constants of %s stay in memory: %s", package.name, error)
        self.released = release_weight_pages(self._library_path)  # last: reading the constants' names touches them

    def __call__(self, tensors: list[Tensor]) -> list[Tensor]:
        handles = [_pointer(c, None) for c in torch._C._aoti.unsafe_alloc_void_ptrs_from_tensors(tensors)]
        inputs = (ctypes.c_void_p * len(handles))(*handles)
        outputs = (ctypes.c_void_p * self.outputs)()
        check(self._run(self._handle, inputs, len(handles), outputs, self.outputs, None, None), "run the step")
        return torch._C._aoti.alloc_tensors_by_stealing_from_void_ptrs([_capsule(p, None, None) for p in outputs])

    def _release_unused_constants(self, names: set[str]) -> int:
        """Bytes of the constants in `names` given back to the kernel (the pages wholly inside them): the graph
        never reads them, so their pages are never touched again. Linux only; 0 elsewhere."""
        if not names or not sys.platform.startswith("linux"):
            return 0
        entries, count = ctypes.POINTER(_ConstantEntry)(), ctypes.c_size_t()
        extract = self._library.AOTInductorModelContainerExtractConstantsMapEntries
        extract.argtypes = [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.POINTER(_ConstantEntry)),
            ctypes.POINTER(ctypes.c_size_t),
            ctypes.c_bool,
        ]
        check(extract(self._handle, ctypes.byref(entries), ctypes.byref(count), False), "list its constants")
        sizes = self._constant_sizes()
        torch_lib = ctypes.CDLL(str(Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"))
        page, released = os.sysconf("SC_PAGE_SIZE"), 0
        for entry in entries[: count.value]:
            name = entry.name.decode()
            if name not in names:
                continue
            data = ctypes.c_void_p()
            check(
                torch_lib.aoti_torch_get_data_ptr(ctypes.c_void_p(entry.handle), ctypes.byref(data)), "find a constant"
            )
            start = -(-data.value // page) * page  # the pages wholly inside the constant
            end = (data.value + sizes[name]) // page * page
            if end > start and madvise_dontneed(start, end - start) == 0:
                released += end - start
        return released

    def _constant_sizes(self) -> dict[str, int]:
        """Every constant's original name (its module path, as the constants map names it) and bytes."""
        lib, count = self._library, ctypes.c_size_t()
        check(lib.AOTInductorModelContainerGetNumConstants(self._handle, ctypes.byref(count)), "count its constants")
        sizes = {}
        for i in range(count.value):
            name, size = ctypes.c_char_p(), ctypes.c_size_t()
            check(
                lib.AOTInductorModelContainerGetConstantOriginalFQN(
                    self._handle, ctypes.c_size_t(i), ctypes.byref(name)
                ),
                "name a constant",
            )
            check(
                lib.AOTInductorModelContainerGetConstantDataSize(self._handle, ctypes.c_size_t(i), ctypes.byref(size)),
                "size a constant",
            )
            sizes[name.value.decode()] = size.value
        return sizes

    def __del__(self):
        if getattr(self, "_handle", None) and self._handle.value and not sys.is_finalizing():  # at exit: left to the OS
            self._delete(self._handle)


class _ConstantEntry(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("handle", ctypes.c_void_p)]  # AOTInductorConstantMapEntry


def check(error: int, what: str) -> None:
    if error != 0:
        raise RuntimeError(f"the compiled package failed to {what} (AOTInductor error {error})")


def unpacked_library(package: Path) -> Path:
    """The package's shared library, unpacked beside it once (written whole, then renamed)."""
    library = package.with_suffix(".so")
    if library.exists() and library.stat().st_mtime >= package.stat().st_mtime:
        return library
    with zipfile.ZipFile(package) as archive:
        names = [name for name in archive.namelist() if name.endswith(".so")]
        if len(names) != 1:
            raise RuntimeError(f"{package} holds {len(names)} shared libraries, not one")
        partial = library.with_name(f"{library.stem}.{os.getpid()}.partial")
        with archive.open(names[0]) as source, open(partial, "wb") as target:
            while block := source.read(1 << 20):
                target.write(block)
    os.replace(partial, library)
    return library
