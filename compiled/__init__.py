"""The decoding step compiled ahead of time (AOTInductor) and run from a cached package."""
