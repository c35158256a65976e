"""The words the checks say, in English or in Simplified Chinese (zh-CN).

The texts sit in exercises/messages/en.json and zh-CN.json: key -> text with {name} placeholders.
`say(key, **values)` gives one in the current language. That is the one `set_language` chose, else the
environment's: the first of EXERCISES_LANG, LC_ALL, LC_MESSAGES, LANG, LANGUAGE that is set. A value
that starts with "zh" means Chinese, any other English. A key the Chinese lacks is said in English.

    say("report.not_written", exercise="attention")
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

MESSAGES = Path(__file__).with_name("messages")
LANGUAGES = ("en", "zh-CN")  # the first has every message
ENVIRONMENT = ("EXERCISES_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE")

_chosen: str | None = None  # set by set_language; None reads the environment


@cache
def catalogue(language: str) -> dict[str, str]:
    """The messages of one language (one of LANGUAGES): key -> text."""
    return json.loads((MESSAGES / f"{language}.json").read_text(encoding="utf-8"))


def _language_of(value: str) -> str:
    return "zh-CN" if value.strip().lower().startswith("zh") else "en"


def set_language(language: str | None) -> None:
    """Speak "en" or "zh-CN" ("zh", "zh_CN.UTF-8" also do) from now on; None goes back to the environment."""
    global _chosen
    if language is not None and not language.strip().lower().startswith(("en", "zh")):
        raise ValueError(f"the language must be one of {', '.join(LANGUAGES)}, got {language!r}")
    _chosen = None if language is None else _language_of(language)


def language() -> str:
    """The current language: the one set_language chose, else the environment's, else English."""
    if _chosen is not None:
        return _chosen
    value = next((os.environ[name] for name in ENVIRONMENT if os.environ.get(name)), "en")
    return _language_of(value)


def say(key: str, **values) -> str:
    """The text of `key` in the current language, its {name} placeholders filled from `values`."""
    text = catalogue(language()).get(key) or catalogue("en").get(key)
    if text is None:
        raise KeyError(f"no message {key!r} in {MESSAGES / 'en.json'}")
    return text.format(**values)
