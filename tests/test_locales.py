"""The page's words on the Python side (ui/locales.py): the "app." messages the app's Python writes, in every
locale's catalogue (ui/static/messages/<locale>.json), each used, each lookup naming one that exists; and every
locale's catalogue as complete as English (tests/js/messages.test.js checks the same in node, with the modules)."""

import json
import re
from pathlib import Path

import pytest

from ui.header import header, language_switch
from ui.locales import I18N, LOCALES, MESSAGES, PREFIX, catalogue, html, label, message

ROOT = Path(__file__).resolve().parent.parent
PYTHON = {p: p.read_text(encoding="utf-8") for p in [ROOT / "app.py", *sorted((ROOT / "ui").glob("*.py"))]}
LOOKUP = re.compile(r"""f?["'](app(?:\.[\w{}]+)+)["']""")  # a key written out (label, html, message, Refused)
PLACEHOLDER = re.compile(r"\{(\w+)\}")
TAG = re.compile(r"</?([a-z]+)")
FORMS = ("zero", "one", "two", "few", "many", "other")
PLURAL_FORMS = {"en": {"one", "other"}, "zh-CN": {"other"}}  # Intl.PluralRules' categories of each locale


def python_lookups() -> list[tuple[str, str]]:
    """(file, key) of each lookup of an "app." message in the app's Python; {kind} stands for any word."""
    return [(p.name, m[1]) for p, text in PYTHON.items() for m in LOOKUP.finditer(text) if m[1] != "app.py"]


def test_every_locale_has_a_catalogue_and_the_page_knows_every_one():
    assert sorted(p.stem for p in MESSAGES.glob("*.json")) == sorted(LOCALES)
    assert set(I18N.translations_dict) == set(LOCALES)


@pytest.mark.parametrize("locale", [loc for loc in LOCALES if loc != "en"])
def test_a_locale_has_every_message_with_the_same_placeholders_and_tags(locale):
    en, own = catalogue("en"), catalogue(locale)
    wanted = set()
    for key in en:
        base, _, form = key.rpartition(".")
        plural = form in FORMS and f"{base}.other" in en
        if not plural or form in PLURAL_FORMS[locale]:
            wanted.add(key)
    assert sorted(wanted - set(own)) == [], f"{locale} lacks these"
    assert sorted(set(own) - wanted) == [], f"{locale} has keys English (or its plural forms) lacks"
    for key, text in own.items():
        source = en[key]
        assert text.strip(), key
        assert set(PLACEHOLDER.findall(text)) == set(PLACEHOLDER.findall(source)), f"{locale} {key}: placeholders"
        assert sorted(TAG.findall(text)) == sorted(TAG.findall(source)), f"{locale} {key}: tags"


def test_every_app_message_is_used_by_the_apps_python_and_every_lookup_exists():
    found = python_lookups()
    assert len(found) > 40, "no lookup found: is the pattern still right?"
    patterns = [re.compile("^" + re.sub(r"\\\{\w+\\\}", r"\\w+", re.escape(key)) + "$") for _, key in found]
    app_keys = [k for k in catalogue("en") if k.startswith(PREFIX)]
    assert [k for k in app_keys if not any(p.match(k) for p in patterns)] == [], "unused app. messages"
    assert [f"{f}: {k}" for f, k in found if "{" not in k and k not in catalogue("en")] == []
    assert not any(k.startswith(PREFIX) for k in catalogue("en") if not re.fullmatch(r"app(\.\w+)+", k))


def test_message_fills_placeholders_and_falls_back_to_english_and_names_what_is_wrong():
    assert message("app.translate.button") == "Translate"
    assert message("app.translate.button", "zh-CN") == "翻译"
    assert "20 seconds" in message("app.copylab.intro", seconds=20)
    with pytest.raises(KeyError, match="needs a value for {seconds}"):
        message("app.copylab.intro")
    with pytest.raises(KeyError, match='no message "app.nothing"'):
        message("app.nothing")
    with pytest.raises(ValueError, match="locale must be one of en, zh-CN"):
        message("app.translate.button", "fr")
    with pytest.raises(KeyError, match='no message "app.nothing"'):
        label("app.nothing")


def test_html_marks_the_element_for_the_page_to_rewrite_in_the_visitors_language():
    marked = html("app.copylab.intro", "section", "class='x'", seconds=20)
    assert marked.startswith("<section class='x' data-i18n=\"app.copylab.intro\" data-i18n-values='")
    values = re.search(r"data-i18n-values='([^']*)'", marked)[1].replace("&quot;", '"')
    assert json.loads(values) == {"seconds": 20}
    assert marked.endswith(message("app.copylab.intro", seconds=20) + "</section>")


def test_the_header_says_what_the_model_learned_and_offers_both_languages():
    page = header("paired", "/models/")
    assert 'data-i18n="app.provenance.paired"' in page and message("app.provenance.paired") in page
    assert "data-in-browser='/models/'" in page and "al-tour-start" in page
    assert "al-static-link" not in page  # no static site named: no link
    linked = header("paired", None, "https://huggingface.co/spaces/user/lens-static")
    assert "href='https://huggingface.co/spaces/user/lens-static' class='al-static-link'" in linked
    assert 'data-i18n="app.header.static"' in linked
    switch = language_switch()
    assert "lang='zh-CN'" in switch and ">中文<" in switch and "lang='en'" in switch and ">English<" in switch
    assert "translate='no'" in switch
