"""Chinese text in the one form the Chinese model reads: Simplified characters, Chinese punctuation.

The corpus (corpora/tatoeba_zh.py) is written in this form and typed text is put into it before it is
translated, so "我們說過。" and "我们说过." reach the model as the same pieces. Conversion from Traditional
characters is OpenCC's t2s table (opencc-python-reimplemented, pure Python).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# One Han character (CJK ideographs, their extensions and the compatibility block; 〇 too).
HAN = re.compile(r"[\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
# ASCII punctuation written between or after Han characters, and its Chinese form.
_FULL = {",": "，", "?": "？", "!": "！", ":": "：", ";": "；", "(": "（", ")": "）"}
_DOTS_AFTER_HAN = re.compile(r"(?<=[\u3007\u3400-\u9fff\uf900-\ufaff])\s*\.{2,}")
_HALF_AFTER_HAN = re.compile(r"(?<=[\u3007\u3400-\u9fff\uf900-\ufaff])\s*([,?!:;.])")
_SPACE_BETWEEN_HAN = re.compile(
    r"(?<=[\u3007\u3400-\u9fff\uf900-\ufaff，。？！：；、])\s+(?=[\u3007\u3400-\u9fff\uf900-\ufaff])"
)
# Full-width ASCII letters and digits (Ａ, １) become the ASCII ones; full-width punctuation stays.
_FULLWIDTH_ALNUM = {
    c: chr(c - 0xFEE0) for r in ((0xFF10, 0xFF19), (0xFF21, 0xFF3A), (0xFF41, 0xFF5A)) for c in range(r[0], r[1] + 1)
}


def han_count(text: str) -> int:
    """How many Han characters `text` holds."""
    return len(HAN.findall(text))


@lru_cache(maxsize=1)
def _t2s():
    from opencc import OpenCC  # imported on first use: German never needs it

    return OpenCC("t2s")


def to_simplified(text: str) -> str:
    """Traditional characters written as Simplified ones (text already Simplified is unchanged)."""
    return _t2s().convert(text) if HAN.search(text) else text


def normalise_chinese(text: str) -> str:
    """NFC, Simplified characters, Chinese punctuation after Han characters, no spaces between them."""
    text = unicodedata.normalize("NFC", text).replace("\ufeff", "").strip()
    text = to_simplified(text).translate(_FULLWIDTH_ALNUM)
    text = _DOTS_AFTER_HAN.sub("……", text)
    text = _HALF_AFTER_HAN.sub(lambda m: "。" if m.group(1) == "." else _FULL[m.group(1)], text)
    text = _SPACE_BETWEEN_HAN.sub("", text)
    return text


def normalise_english(text: str) -> str:
    """NFC, one space between words, the BOM and the line ends gone."""
    return " ".join(unicodedata.normalize("NFC", text).replace("\ufeff", "").split())
