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

import contextlib
import ctypes
import functools
import logging
import os
import re
import sys
import threading
import time
import zipfile
from pathlib import Path

import torch
from torch import Tensor

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
        self._run.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t,
                              ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p]
        self._delete = library.AOTInductorModelContainerDelete
        self._delete.argtypes = [ctypes.c_void_p]
        self._handle = ctypes.c_void_p()
        with _giving_back_pages(self._library_path):  # while the weights are copied out, not only after
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
        extract.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.POINTER(_ConstantEntry)),
                            ctypes.POINTER(ctypes.c_size_t), ctypes.c_bool]
        check(extract(self._handle, ctypes.byref(entries), ctypes.byref(count), False), "list its constants")
        sizes = self._constant_sizes()
        torch_lib = ctypes.CDLL(str(Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"))
        page, released = os.sysconf("SC_PAGE_SIZE"), 0
        for entry in entries[: count.value]:
            name = entry.name.decode()
            if name not in names:
                continue
            data = ctypes.c_void_p()
            check(torch_lib.aoti_torch_get_data_ptr(ctypes.c_void_p(entry.handle), ctypes.byref(data)), "find a constant")
            start = -(-data.value // page) * page  # the pages wholly inside the constant
            end = (data.value + sizes[name]) // page * page
            if end > start and _madvise(start, end - start) == 0:
                released += end - start
        return released

    def _constant_sizes(self) -> dict[str, int]:
        """Every constant's original name (its module path, as the constants map names it) and bytes."""
        lib, count = self._library, ctypes.c_size_t()
        check(lib.AOTInductorModelContainerGetNumConstants(self._handle, ctypes.byref(count)), "count its constants")
        sizes = {}
        for i in range(count.value):
            name, size = ctypes.c_char_p(), ctypes.c_size_t()
            check(lib.AOTInductorModelContainerGetConstantOriginalFQN(self._handle, ctypes.c_size_t(i),
                                                                      ctypes.byref(name)), "name a constant")
            check(lib.AOTInductorModelContainerGetConstantDataSize(self._handle, ctypes.c_size_t(i), ctypes.byref(size)),
                  "size a constant")
            sizes[name.value.decode()] = size.value
        return sizes

    def __del__(self):
        if getattr(self, "_handle", None) and self._handle.value and not sys.is_finalizing():  # at exit: left to the OS
            self._delete(self._handle)


def release_weight_pages(library: Path, mappings: list[tuple[int, int]] | None = None) -> int:
    """Bytes of the library's read-only data given back to the kernel. Creating the model copies the weights out
    of the library into memory of its own, but the pages it read them from stayed resident: as many bytes again
    (51 MB for the two packages of checkpoints/de-en). Pages of a file that were only read are dropped
    (MADV_DONTNEED) and would be read back from the file if touched again. A mapping with any page written
    (the relocated pointers the loader made read-only after) is left alone: dropped, it would come back
    unrelocated. `mappings`: those found already (_clean_read_only_mappings). Linux only; 0 elsewhere."""
    if not sys.platform.startswith("linux"):
        return 0
    released = 0
    for start, end in _clean_read_only_mappings(str(library.resolve())) if mappings is None else mappings:
        if _madvise(start, end - start) == 0:
            released += end - start
    return released


@functools.cache
def _libc_madvise():
    madvise = ctypes.CDLL(None, use_errno=True).madvise
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return madvise


def _madvise(start: int, length: int) -> int:
    """MADV_DONTNEED (4): the pages leave this process's memory; 0 where it worked."""
    return _libc_madvise()(start, length, 4)


@contextlib.contextmanager
def _giving_back_pages(library: Path):
    """Give the library's read-only pages back over and over in a thread while the body runs: the model's
    creation copies the weights out of the library with the interpreter lock released (ctypes), and the pages
    already copied leave memory behind it instead of all at the end, so the process holds the library's
    weights and their copy at once less (bench/compiled.py's peak RSS). A page dropped before it was copied is
    read back from the file when the copy reaches it."""
    if not sys.platform.startswith("linux"):
        yield
        return
    mappings, done = _clean_read_only_mappings(str(library.resolve())), threading.Event()

    def release():
        while not done.is_set():
            release_weight_pages(library, mappings)
            time.sleep(0.0002)

    thread = threading.Thread(target=release, name="give-back-library-pages", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


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


class _ConstantEntry(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("handle", ctypes.c_void_p)]  # AOTInductorConstantMapEntry


def unused_constants(package: Path) -> set[str]:
    """The constants a package holds that its generated code never reads. Freezing packs each matrix into the
    layout of its GEMM kernel as a new constant and keeps the original beside it: in the step's package of
    checkpoints/de-en, 19.2 MB of 38.7. Read from the package's own wrapper source, where every constant is
    bound once (`auto& NAME = constants_->at(i);`) and an unused one appears nowhere else."""
    with zipfile.ZipFile(package) as archive:
        wrappers = [name for name in archive.namelist() if name.endswith(".wrapper.cpp")]
        if len(wrappers) != 1:
            return set()
        source = archive.read(wrappers[0]).decode()
    names = dict(re.findall(r'constants_info_\[(\d+)\]\.original_fqn = "([^"]+)";', source))  # as the map names them
    code = re.sub(r'"[^"\n]*"', '""', source)  # names inside strings are not reads
    unused = set()
    for variable, index in re.findall(r"auto& (\w+) = constants_->at\((\d+)\);", code):
        if index in names and len(re.findall(rf"\b{variable}\b", code)) == 1:
            unused.add(names[index])
    return unused


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
