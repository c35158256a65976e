"""Giving back the memory a loaded package does not need (compiled/package_runner.py calls these).

Creating a package's model copies its weights out of the package's library into memory of its own;
the library pages they were read from, and the original matrices that freezing keeps beside their
packed copies, are never read again. Linux only: elsewhere nothing is given back.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import re
import sys
import threading
import time
import zipfile
from pathlib import Path


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
        if madvise_dontneed(start, end - start) == 0:
            released += end - start
    return released


@functools.cache
def _libc_madvise():
    madvise = ctypes.CDLL(None, use_errno=True).madvise
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return madvise


def madvise_dontneed(start: int, length: int) -> int:
    """MADV_DONTNEED (4): the pages leave this process's memory; 0 where it worked."""
    return _libc_madvise()(start, length, 4)


@contextlib.contextmanager
def giving_back_pages(library: Path):
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
