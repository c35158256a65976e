"""The page in Chinese (ui/static/locale.js, messages/zh-CN.json, ui/locales.py), in Chromium with a Chinese browser
against app.py on the shipped checkpoints: the page's own words are Chinese on the first screen, at every stop of
the walk and in every view; the switch keeps the page's state and its link opens the page in Chinese; Chinese
typed in is told, in Chinese, that it is not German; the glossary lists the terms and explains them in place."""

import re

from tests.test_ui_page import (  # noqa: F401  (fixtures)
    browser,
    pytestmark,  # noqa: F401  (the same skips)
    server,
)

SENTENCE = "Zwei Hunde spielen im Schnee."
MOST = 12  # English words of the page's own text one screen may show
# What the page keeps in Latin letters on purpose: names (of the project, its tools, a paper's author), terms the
# Chinese material keeps in English (softmax, logits, Logit Lens, LayerNorm, Post-LN, ALTI+), units and file formats.
KEPT = {
    "attention", "lens", "transformer", "softmax", "logit", "logits", "layernorm", "alti", "bleu", "cpu", "gpu",
    "api", "mcp", "gradio", "hugging", "face", "multi30k", "d_model", "d_ff", "d_k", "relu", "bpe", "ffn", "ms",
    "mb", "png", "svg", "json", "ferrando", "webassembly", "simd", "english", "post-ln", "pre-ln",
}  # fmt: skip
# The English words of the page's own text shown in `scope` (a selector; the viewport when null): text outside
# lang="de"/"en", translate="no", code and the language switch, on an element a visitor can see.
ENGLISH_WORDS = """([scope, kept]) => {
  const root = scope ? document.querySelector(scope) : document.body, out = [], keep = new Set(kept);
  if (!root) return out;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest("[lang^='de'], [lang='en'], [lang^='en-'], [translate='no'], code, kbd, pre, script, style, "
      + "noscript, textarea, [hidden], .al-closed, [aria-hidden='true']")) continue;
    const box = el.getBoundingClientRect();
    if (!box.width || !box.height || getComputedStyle(el).visibility === "hidden") continue;
    if (!scope && (box.bottom < 0 || box.top > innerHeight)) continue;
    for (const m of n.data.matchAll(/[A-Za-z][\\w'’+-]*[A-Za-z0-9]|[A-Za-z]{2}/g))
      if (!keep.has(m[0].toLowerCase().replace(/\\+$/, ""))) out.push(m[0]);
  }
  return out;
}"""


def chinese_page(browser, url: str, width: int = 1366, height: int = 768):
    context = browser.new_context(viewport={"width": width, "height": height}, locale="zh-CN")
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_function("() => window.attentionLens && window.attentionLens.state().views.translate", timeout=60_000)
    page.wait_for_timeout(300)  # Gradio's labels follow the locale
    return page, errors


def english(page, scope: str | None = None) -> list[str]:
    return page.evaluate(ENGLISH_WORDS, [scope, sorted(KEPT)])


def test_the_first_screen_and_every_stop_of_the_walk_speak_chinese(browser, server):
    for width, height in ((1366, 768), (390, 844)):
        page, errors = chinese_page(browser, server + "?lang=zh-CN", width, height)
        assert page.evaluate("document.documentElement.lang") == "zh-CN"
        assert page.inner_text("#translate").strip() == "翻译", "Gradio's own label follows the locale"
        first = english(page)
        assert len(first) <= MOST, (width, first)
        stops = page.evaluate("window.attentionLens.walk().length")
        for i in range(stops) if width > 800 else (0, 2, 6, 9):  # on a phone: a guess, a panel, the step view
            page.evaluate(f"window.attentionLens.walkTo({i})")
            page.wait_for_function("() => document.querySelector('.al-tour')")
            page.wait_for_timeout(200)  # the stop's view draws
            shown, card = english(page), english(page, ".al-tour")
            assert len(shown) <= MOST and len(card) <= 2, (width, i, shown, card)
            assert re.search(r"[\u4e00-\u9fff]", page.inner_text(".al-tour")), f"stop {i} is not in Chinese"
        assert errors == []
        page.context.close()


def test_every_view_opened_speaks_chinese(browser, server):
    page, errors = chinese_page(browser, server + "?lang=zh-CN")
    for name, section, button in (
        ("step", "#view-step", "#step-go"),
        ("headlab", "#view-headlab", "#headlab-apply"),
        ("history", "#view-history", "#history-go"),
        ("copylab", "#view-copylab", None),
    ):
        page.evaluate(f"window.attentionLens.openView({name!r})")
        page.wait_for_selector(f"{section}:not(.al-closed)")
        if button:
            page.click(button)
            page.wait_for_function(f"() => window.attentionLens.state().views[{name!r}]", timeout=60_000)
            page.wait_for_timeout(300)
        words = english(page, section)
        assert len(words) <= MOST, (name, words)
        assert re.search(r"[\u4e00-\u9fff]", page.inner_text(section)), name
    assert errors == []
    page.context.close()


def test_the_switch_keeps_the_state_and_its_link_opens_in_chinese(browser, server):
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-US")
    page = context.new_page()
    page.goto(server + "?open=all")  # the map's chips shown (tests/test_walk.py)
    page.wait_for_function("() => window.attentionLens && window.attentionLens.state().views.translate")
    assert page.get_attribute("#page-header .al-lang", "data-lang") == "zh-CN"  # the switch opens the other one
    page.fill("#source textarea", SENTENCE)
    page.click("#translate")
    page.wait_for_function(f"() => window.attentionLens.state().views.translate === {SENTENCE!r}", timeout=60_000)
    page.locator("#result .al-kind .al-choice[data-value=encoder]").click()
    page.wait_for_function("() => location.hash.includes('kind=encoder')")
    page.click("#page-header .al-lang")
    page.wait_for_url(re.compile(r"lang=zh-CN"))
    page.wait_for_function(
        f"() => window.attentionLens && window.attentionLens.state().views.translate === {SENTENCE!r}"
    )
    state = page.evaluate("window.attentionLens.state()")
    assert (state["sentence"], state["kind"]) == (SENTENCE, "encoder")
    assert page.get_attribute("#page-header .al-lang", "data-lang") == "en"
    assert page.get_attribute("#page-header .al-lang", "title") == "切换为 English 页面"
    assert page.inner_text("#translate").strip() == "翻译"
    link = page.url
    context.close()
    other = browser.new_context(locale="en-US")  # a stranger's English browser opens the link in Chinese
    opened = other.new_page()
    opened.goto(link)
    opened.wait_for_function(
        f"() => window.attentionLens && window.attentionLens.state().views.translate === {SENTENCE!r}"
    )
    assert opened.evaluate("document.documentElement.lang") == "zh-CN"
    assert opened.evaluate("window.attentionLens.state().kind") == "encoder"
    opened.goto(server + "?lang=en")  # and ?lang= wins over the kept choice
    opened.wait_for_function("() => window.attentionLens && window.attentionLens.state().views.translate")
    assert opened.evaluate("document.documentElement.lang") == "en"
    other.close()


def test_japanese_typed_in_is_told_in_chinese_that_it_is_not_german_or_chinese(browser, server):
    page, errors = chinese_page(browser, server + "?lang=zh-CN")
    page.fill("#source textarea", "私はビールが欲しい。")
    page.click("#translate")
    notice = page.wait_for_selector("#result .al-not-german", timeout=60_000)
    text = notice.inner_text()
    assert "德语" in text and "不像" in text and "汉字" in text and "日常" not in text, text
    assert english(page, "#result .al-notes") == []
    assert errors == []
    page.context.close()


def test_the_glossary_lists_the_terms_and_explains_each_where_it_is_used(browser, server):
    page, errors = chinese_page(browser, server + "?lang=zh-CN")
    page.evaluate("window.attentionLens.walkTo(4)")  # the stop of Q, K and V
    term = page.wait_for_selector(".al-tour dfn.al-term")
    assert term.get_attribute("title").startswith(term.inner_text()[:2]) or "：" in term.get_attribute("title")
    page.keyboard.press("Escape")
    page.click("#result .al-spine-toggle")  # the whole model's list, whose last item is the glossary
    page.locator("#result .al-spine-whole .al-block").last.click()
    box = page.wait_for_selector("dialog.al-glossary[open]")
    names = box.eval_on_selector_all("dt", "(dts) => dts.map((d) => d.textContent)")
    for expected in (
        "查询、键、值（Q、K、V）",
        "交叉注意力 / 编码器－解码器注意力（cross-attention）",
        "层归一化（LayerNorm）",
        "束搜索（beam search）",
    ):
        assert expected in names, names
    assert len(names) >= 20
    page.click(".al-glossary-close")
    assert errors == []
    page.context.close()


def test_gradios_own_screen_reader_labels_speak_chinese_too(browser, server):
    page, errors = chinese_page(browser, server + "?lang=zh-CN&open=all")
    page.wait_for_selector("#view-copylab input[type=range]", state="attached", timeout=60_000)
    labels = page.evaluate(
        "() => [...document.querySelectorAll('[aria-label]')].map((e) => e.getAttribute('aria-label'))"
    )
    assert not [label for label in labels if re.search(r"number input for|range slider for|Reset to default", label)]
    assert any(label.endswith("的滑块") for label in labels), labels
    assert errors == []
    page.context.close()
