"""Chinese text in the one form the Chinese model reads: Simplified characters, Chinese punctuation.

The corpus (corpora/tatoeba_zh.py) is written in this form and typed text is put into it before it is
translated, so "我們說過。" and "我们说过." reach the model as the same pieces. Conversion from Traditional
characters follows OpenCC's t2s table (the dictionary files of opencc-python-reimplemented), matched longest first
as OpenCC matches it; ui/static/router.js does the same with the same table.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from pathlib import Path

# One Han character (CJK ideographs, their extensions and the compatibility block; 〇 too).
# The pattern holds the characters themselves, not escapes, so that every regex engine reads it alike: Python's,
# the tokenizers library's (Oniguruma, which takes "\\U00020000" for the letters U, 0, 2) and the page's.
HAN = re.compile("[\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
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
def t2s_table() -> dict[str, str]:
    """OpenCC's t2s table: each Traditional phrase (TSPhrases) and character (TSCharacters) and its first Simplified
    form; where both have a key, the phrase's. The page's router reads the same table (ui/export_site.py ships it)."""
    import opencc  # opencc-python-reimplemented: its dictionary files, read once; German never needs them

    folder = Path(opencc.__file__).parent / "dictionary"
    table: dict[str, str] = {}
    for name in ("TSCharacters.txt", "TSPhrases.txt"):  # phrases last: they win
        for line in (folder / name).read_text(encoding="utf-8").splitlines():
            key, _, values = line.partition("\t")
            if key and values:
                table[key] = values.split(" ")[0]
    return table


@lru_cache(maxsize=1)
def _longest_key() -> int:
    return max(map(len, t2s_table()))


def to_simplified(text: str) -> str:
    """Traditional characters written as Simplified ones: the longest key of t2s_table at each place, left to right
    (OpenCC's maximum forward matching); text already Simplified is unchanged."""
    if not HAN.search(text):
        return text
    table, longest = t2s_table(), _longest_key()
    out, i = [], 0
    while i < len(text):
        for length in range(min(longest, len(text) - i), 0, -1):
            if (found := table.get(text[i : i + length])) is not None:
                out.append(found)
                i += length
                break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


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


# Kana and Hangul: text with them is Japanese or Korean, not Chinese, though Japanese has Han characters too.
KANA_HANGUL = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
HAN_SHARE = 0.3  # of the letters: "我喜欢Python" is Chinese, "Ich trinke 绿茶" is not


def reads_chinese(text: str) -> bool:
    """Whether `text` is Chinese: Han characters, at least HAN_SHARE of its letters, and no kana or Hangul."""
    han = han_count(text)
    if not han or KANA_HANGUL.search(text):
        return False
    return han >= HAN_SHARE * sum(c.isalpha() for c in text)
