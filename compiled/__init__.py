"""The whole search in C++ (native/), built with the system's compiler and called through ctypes (native_search.py)."""
