"""What every view shares on the server: the GPU decorator, checked input, errors in words.

`gpu(duration=...)` is the one way a view runs the model. On a ZeroGPU Space it is `spaces.GPU`:
the function runs in a worker that holds a GPU for at most `duration` seconds, its arguments and
result are pickled across, and any exception but gr.Error loses its message there. So the wrapper
sends a ValueError/TypeError back as a value and raises it again outside the GPU, where
friendly_errors (or the view) turns it into words; and it refuses a result that holds a torch
tensor (a CUDA tensor cannot leave the worker). Anywhere else `spaces.GPU` returns the function
unchanged, so the same code runs on CPU.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
from collections.abc import Callable
from typing import NamedTuple

import gradio as gr

from lens.explain import MAX_CHARACTERS, MAX_SENTENCES, DecodingOptions
from tokenizer.sentences import split_sentences
from ui.gpu_time import GpuTime
from ui.locales import Refused

try:  # app.py imports spaces before torch; here it is already loaded (or absent off Spaces)
    import spaces
except ImportError:
    spaces = None

DECODING_METHODS = ("beam search", "greedy")
MAX_GPU_SECONDS = 120  # ZeroGPU schedules short requests first; nothing here needs longer
GPU_FUNCTIONS: dict[str, int | GpuTime] = {}  # "module.qualname" -> its duration, every function gpu() wrapped
_ON_GPU = contextvars.ContextVar("on_gpu", default=False)


class Refusal(NamedTuple):
    """A ValueError/TypeError raised inside the GPU function, carried out as a value (picklable)."""

    kind: str
    message: str


def on_zero_gpu() -> bool:
    """True on a ZeroGPU Space (the `spaces` package says so)."""
    return spaces is not None and bool(getattr(spaces.config.Config, "zero_gpu", False))


def on_gpu() -> bool:
    """True while a gpu()-wrapped function runs (tests check that the model runs only then)."""
    return _ON_GPU.get()


def gpu(fn: Callable | None = None, *, duration: int | GpuTime = 60) -> Callable:
    """Run `fn` with a GPU attached for at most `duration` seconds (ZeroGPU), or plainly elsewhere.

    Use as `@gpu(duration=GpuTime(cap=20))` on exactly the function that runs the model: a GpuTime
    (ui/gpu_time.py) asks for seconds sized to each request, within its cap; a bare int asks for the same
    seconds every time. Validate and raise gr.Error before calling it; return numpy arrays and Python values only.
    """
    if fn is None:
        return functools.partial(gpu, duration=duration)
    cap = duration.cap if isinstance(duration, GpuTime) else duration
    if isinstance(cap, bool) or not isinstance(cap, int) or not 0 < cap <= MAX_GPU_SECONDS:
        raise ValueError(f"gpu(duration=...) must be whole seconds between 1 and {MAX_GPU_SECONDS}, got {cap!r}")

    def task(*args, **kwargs):  # what runs on the GPU (in a forked worker on ZeroGPU)
        token = _ON_GPU.set(True)
        try:
            result = fn(*args, **kwargs)
            check_host_only(result, fn.__qualname__)
        except (ValueError, TypeError) as err:
            return Refusal(type(err).__name__, str(err))
        finally:
            _ON_GPU.reset(token)
        return result

    functools.update_wrapper(task, fn)
    on_device = spaces.GPU(task, duration=duration) if spaces is not None else task

    @functools.wraps(fn)
    def call(*args, **kwargs):
        result = on_device(*args, **kwargs)
        if isinstance(result, Refusal):
            raise (TypeError if result.kind == "TypeError" else ValueError)(result.message)
        return result

    call.gpu_duration = duration
    GPU_FUNCTIONS[f"{fn.__module__}.{fn.__qualname__}"] = duration
    return call


def check_host_only(value, where: str) -> None:
    """Refuse (TypeError) a result holding a torch tensor: GPU functions return numpy or Python values."""
    if type(value).__module__.startswith("torch"):
        raise TypeError(f"{where} returned a {type(value).__name__}; return numpy arrays or Python values")
    if isinstance(value, dict):
        for item in value.values():
            check_host_only(item, where)
    elif isinstance(value, (list, tuple)):
        for item in value:
            check_host_only(item, where)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            check_host_only(getattr(value, field.name), where)


def checked_unicode(value: str, name: str) -> str:
    """Refuse (ValueError naming `name`) a string that is not valid Unicode: a lone surrogate such as
    "\\ud800" (JSON can carry one; the tokenizer cannot read it)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ValueError(
            f"{name} has a character that is not valid Unicode at position {err.start + 1} "
            f"(a lone surrogate, {value[err.start]!r}): send UTF-8 text"
        ) from None
    return value


BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
# The one list of what a typed field refuses (a prefix, a forced word, an alternative, time travel's sentence; the
# page's inpage.js typedRefusal holds the same ranges): control characters but tab and newline, the invisible format
# characters (soft hyphen, zero-width space and joiners, the bidirectional marks and isolates, the byte-order mark,
# tags, ...), line and paragraph separators, and noncharacters (U+FDD0..U+FDEF, U+xFFFE and U+xFFFF). Written out,
# not read from a Unicode database: Python and the browser know different Unicode versions.
REFUSED_RANGES = (
    (0x00, 0x08),
    (0x0B, 0x0C),
    (0x0E, 0x1F),
    (0x7F, 0x9F),
    (0xAD, 0xAD),
    (0x600, 0x605),
    (0x61C, 0x61C),
    (0x6DD, 0x6DD),
    (0x70F, 0x70F),
    (0x890, 0x891),
    (0x8E2, 0x8E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x2028, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFDD0, 0xFDEF),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)


def unsafe_character(ch: str) -> bool:
    """A character a typed field refuses: it would be echoed into the translation unseen, or turn it around."""
    code = ord(ch)
    return (code & 0xFFFE) == 0xFFFE or any(low <= code <= high for low, high in REFUSED_RANGES)


def checked_typed(value: str, name: str) -> str:
    """English a visitor or caller types into the translation (a prefix, a forced word, an alternative): valid
    Unicode, no control or text-direction character; a ValueError naming `name` and the character else."""
    checked_unicode(value, name)
    if (found := next((i for i, ch in enumerate(value) if unsafe_character(ch)), None)) is not None:
        raise ValueError(
            f"{name} has a control or text-direction character at position {found + 1} "
            f"(U+{ord(value[found]):04X}), which would be echoed into the translation: remove it"
        )
    return value


def checked_text(text, name: str = "text") -> str:
    """The user's text, refused before any work (ValueError/TypeError naming the argument, `name`) when it is not a
    string, empty, longer than MAX_CHARACTERS or has more than MAX_SENTENCES sentences. The main text's refusals
    are the page's own words (Refused); another argument's (/patch's `corrupted`) name it."""
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a string, got {type(text).__name__}")
    checked_unicode(text, name)
    count = len(split_sentences(text)) if text.strip() and len(text) <= MAX_CHARACTERS else 0
    if name != "text":
        if not text.strip():
            raise ValueError(f"{name} must be German text, got an empty string")
        if len(text) > MAX_CHARACTERS:
            raise ValueError(f"{name} is {len(text):,} characters long; at most {MAX_CHARACTERS:,}")
        if count > MAX_SENTENCES:
            raise ValueError(f"{name} has {count} sentences; at most {MAX_SENTENCES}")
        return text
    if not text.strip():
        raise Refused("app.refusal.empty")
    if len(text) > MAX_CHARACTERS:
        raise Refused("app.refusal.too_long", characters=f"{len(text):,}", most=f"{MAX_CHARACTERS:,}")
    if count > MAX_SENTENCES:
        raise Refused("app.refusal.too_many_sentences", sentences=count, most=MAX_SENTENCES)
    return text


def one_sentence(text, max_characters: int, what: str = "app.what.view") -> str:
    """The one German sentence a view or endpoint works on; a ValueError in words for anything else
    (not text, empty, not valid Unicode, too long, or more than one sentence). `what`: the message that names
    the view or argument ("app.what.step": "stepping through")."""
    words = {"what": what}
    if not isinstance(text, str) or not text.strip():
        raise Refused("app.refusal.one_empty", words)
    if len(text) > max_characters:
        raise Refused("app.refusal.one_too_long", words, characters=f"{len(text):,}", most=f"{max_characters:,}")
    sentences = split_sentences(checked_unicode(text, "text"))
    if len(sentences) != 1:
        raise Refused("app.refusal.one_only", words, sentences=len(sentences))
    return sentences[0]


def friendly_errors(fn):
    """A bad argument becomes its own message; any other failure a short one. The server keeps serving."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except (ValueError, TypeError) as err:  # the user's mistake: said to them, not logged as a crash
            raise gr.Error(str(err)[:300], print_exception=False) from err
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
