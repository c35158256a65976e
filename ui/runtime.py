"""What every view shares on the server: the GPU decorator, checked options, errors in words."""

from __future__ import annotations

import functools

import gradio as gr

from lens.explain import DecodingOptions

try:  # On a ZeroGPU Space, spaces.GPU attaches a GPU for the duration of the call.
    import spaces

    gpu = spaces.GPU
except ImportError:  # Anywhere else the decorator does nothing.

    def gpu(fn):
        return fn


DECODING_METHODS = ("beam search", "greedy")


def friendly_errors(fn):
    """A bad argument becomes its own message; any other failure a short one. The server keeps serving."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except (ValueError, TypeError) as err:
            raise gr.Error(str(err)[:300]) from err
        except Exception as err:
            raise gr.Error(f"Sorry, that did not work ({type(err).__name__}: {str(err)[:200]})") from err

    return wrapper


def decoding_options(decoding: str, num_beams, length_penalty, max_length, max_len: int) -> DecodingOptions:
    """Widget or API values -> checked options; a ValueError names the argument that is wrong."""
    if decoding not in DECODING_METHODS:
        raise ValueError(f"decoding must be one of {', '.join(DECODING_METHODS)}, got {decoding!r}")
    options = DecodingOptions.checked(num_beams, length_penalty, max_length, max_len)
    if decoding == "greedy":
        options.num_beams = 1
    return options


def method_name(options: DecodingOptions) -> str:
    return "greedy" if options.num_beams == 1 else f"beam search ({options.num_beams} beams)"
