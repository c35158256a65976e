"""Running a compiled package (model/ahead_of_time.py) through its C interface, without the interpreter lock.

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
import os
import sys
import zipfile
from pathlib import Path

import torch
from torch import Tensor

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
        self._run.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t,
                              ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p]
        self._delete = library.AOTInductorModelContainerDelete
        self._delete.argtypes = [ctypes.c_void_p]
        self._handle = ctypes.c_void_p()
        check(create(ctypes.byref(self._handle), instances, b"cpu", None), "create the package's model")
        outputs = ctypes.c_size_t()
        check(library.AOTInductorModelContainerGetNumOutputs(self._handle, ctypes.byref(outputs)), "count its outputs")
        self.outputs = outputs.value
        self._library = library  # kept loaded while the handle lives
        self.released = release_weight_pages(self._library_path)

    def __call__(self, tensors: list[Tensor]) -> list[Tensor]:
        handles = [_pointer(c, None) for c in torch._C._aoti.unsafe_alloc_void_ptrs_from_tensors(tensors)]
        inputs = (ctypes.c_void_p * len(handles))(*handles)
        outputs = (ctypes.c_void_p * self.outputs)()
        check(self._run(self._handle, inputs, len(handles), outputs, self.outputs, None, None), "run the step")
        return torch._C._aoti.alloc_tensors_by_stealing_from_void_ptrs([_capsule(p, None, None) for p in outputs])

    def __del__(self):
        if getattr(self, "_handle", None) and self._handle.value and not sys.is_finalizing():  # at exit: left to the OS
            self._delete(self._handle)


def release_weight_pages(library: Path) -> int:
    """Bytes of the library's read-only data given back to the kernel. Creating the model copies the weights out
    of the library into memory of its own, but the pages it read them from stayed resident: as many bytes again
    (51 MB for the two packages of checkpoints/de-en). Pages of a file that were only read are dropped
    (MADV_DONTNEED) and would be read back from the file if touched again. A mapping with any page written
    (the relocated pointers the loader made read-only after) is left alone: dropped, it would come back
    unrelocated. Linux only; 0 elsewhere."""
    if not sys.platform.startswith("linux"):
        return 0
    libc, released = ctypes.CDLL(None, use_errno=True), 0
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    for start, end in _clean_read_only_mappings(str(library.resolve())):
        if libc.madvise(start, end - start, 4) == 0:  # 4: MADV_DONTNEED
            released += end - start
    return released


def _clean_read_only_mappings(path: str) -> list[tuple[int, int]]:
    """(start, end) of this process's read-only, non-executable mappings of `path` with no page written."""
    found, current = [], None
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            fields = line.split()
            if fields and "-" in fields[0] and len(fields) >= 5:  # a mapping's header line
                current = None
                if fields[1] == "r--p" and len(fields) > 5 and fields[5] == path:
                    current = tuple(int(x, 16) for x in fields[0].split("-"))
            elif current is not None and fields[0] == "Anonymous:" and int(fields[1]) == 0:
                found.append(current)  # its resident pages are all the file's own
    return found


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
