"""The page's words: ui/static/messages/en.json, one flat catalogue of every text the page shows, read through
ui/static/i18n.js (`t("result.empty")`, `plural("result.sentences", n)`, `parts(...)`). Checked here without a
browser or node: the catalogue is JSON with dotted keys and no empty text, and each lookup in the modules fills
its message's placeholders; and the notebook's bundle (ui.standalone) carries the catalogue. tests/js/messages.test.js
checks the same lookups with TypeScript's parser, every key's use, and i18n.js itself."""

import json
import re
import shutil
import subprocess

import pytest

from ui.standalone import VIEWER, VIEWER_ENTRY, bundle

CATALOGUE = VIEWER / "messages" / "en.json"
SOURCES = {p.name: p.read_text(encoding="utf-8") for p in sorted(VIEWER.glob("*.js"))}
KEY = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)+$")
PLACEHOLDER = re.compile(r"\{(\w+)\}")
FORMS = ("zero", "one", "two", "few", "many", "other")  # Intl.PluralRules' categories
CALL = re.compile(r'(?:(?<![\w$.])|(?<=\.\.\.))(t|plural|parts)\(\s*"([^"]*)"')
CLOSING = {"(": ")", "[": "]", "{": "}"}


def code(source: str) -> str:
    """A module without its comments (a `//` that follows no space, as in a URL, is code)."""
    return re.sub(r"(^|\s)//.*$", r"\1", re.sub(r"/\*.*?\*/", "", source, flags=re.S), flags=re.M)


def catalogue() -> dict[str, str]:
    pairs = json.loads(CATALOGUE.read_text(encoding="utf-8"), object_pairs_hook=list)
    keys = [key for key, _ in pairs]
    assert len(keys) == len(set(keys)), f"keys given twice: {sorted({k for k in keys if keys.count(k) > 1})}"
    return dict(pairs)


def after_string(text: str, i: int) -> int:
    """The index after the string literal that opens at text[i] (a quote or a backtick, `${...}` skipped)."""
    quote, i = text[i], i + 1
    while text[i] != quote:
        if text[i] == "\\":
            i += 2
        elif quote == "`" and text.startswith("${", i):
            i = group(text, i + 1)[1]
        else:
            i += 1
    return i + 1


def group(text: str, i: int) -> tuple[list[str], int]:
    """The bracketed group that opens at text[i], split at its own commas, and the index after it."""
    pieces, start, closing = [], i + 1, [CLOSING[text[i]]]
    i += 1
    while closing:
        c = text[i]
        if c in "\"'`":
            i = after_string(text, i)
            continue
        if c in CLOSING:
            closing.append(CLOSING[c])
        elif c in ")]}":
            closing.pop()
            if not closing:
                pieces.append(text[start:i])
        elif c == "," and len(closing) == 1:
            pieces.append(text[start:i])
            start = i + 1
        i += 1
    return pieces, i


def names(text: str, brace: int) -> list[str] | None:
    """The names an object literal opening at text[brace] gives (None: it spreads another object)."""
    found = []
    for piece in group(text, brace)[0]:
        piece = piece.strip()
        if not piece:
            continue
        if piece.startswith("..."):
            return None
        found.append(re.match(r'"?(\w+)"?', piece).group(1))
    return found


def lookups():
    """Every lookup of the modules: (module, function, key, the names its values give, or None: not readable)."""
    for name, source in SOURCES.items():
        text = code(source)
        for m in CALL.finditer(text):
            arguments = [a.strip() for a in group(text, m.start() + len(m.group(1)))[0]]
            at = 2 if m.group(1) == "plural" else 1  # plural(key, count, values)
            values = arguments[at] if len(arguments) > at else ""
            if not values:
                given = []
            elif values.startswith("{"):
                given = names(values, 0)
            elif re.fullmatch(r"\w+", values):  # a const holding an object literal, declared before the call
                declared = [d for d in re.finditer(rf"(?<![\w$.]){values}\s*=\s*\{{", text) if d.start() < m.start()]
                given = names(text, declared[-1].end() - 1) if declared else None
            else:
                given = None
            yield name, m.group(1), m.group(2), given


def messages_of(messages: dict[str, str], function: str, key: str) -> list[str]:
    if function != "plural":
        return [messages[key]] if key in messages else []
    return [messages[f"{key}.{form}"] for form in FORMS if f"{key}.{form}" in messages]


def test_the_catalogue_is_one_flat_object_of_dotted_keys_and_texts():
    messages = catalogue()
    for key, text in messages.items():
        assert KEY.match(key), f"{key}: keys are <module>.<what>, lowercase"
        assert isinstance(text, str) and text.strip(), f"{key} has no text"
        assert not re.search(r"[{}]", PLACEHOLDER.sub("", text)), f"{key}: a brace that is no {{placeholder}}"
        if key.endswith(".one"):
            assert key[: -len("one")] + "other" in messages, f"{key} has no .other form"


def test_each_lookup_fills_the_placeholders_of_its_message_and_only_those():
    messages, problems, seen = catalogue(), [], 0
    for module, function, key, given in lookups():
        texts = messages_of(messages, function, key)
        if not texts:
            problems.append(f"{module}: {function}('{key}') is not in {CATALOGUE.name}")
            continue
        needed = {p for text in texts for p in PLACEHOLDER.findall(text)} - ({"n"} if function == "plural" else set())
        if given is None:
            problems.append(
                f"{module}: {function}('{key}', ...) passes values that cannot be read: an object literal, each named"
            )
            continue
        if needed - set(given):
            problems.append(f"{module}: {function}('{key}') leaves {sorted(needed - set(given))} unfilled")
        if set(given) - needed:
            problems.append(
                f"{module}: {function}('{key}') passes {sorted(set(given) - needed)}, which its message does not use"
            )
        seen += 1
    assert not problems, "\n".join(problems)
    assert seen, "no lookup found: is the pattern still right?"


def test_the_notebook_bundle_carries_the_catalogue():
    text = bundle(VIEWER_ENTRY)
    assert not re.search(r"^(?:import|export) ", text, re.M), "an import or export statement left in the bundle"
    assert re.search(r'^modules\["messages/en\.json"\] = \{', text, re.M), "the catalogue is not in the bundle"
    assert 'const en = modules["messages/en.json"];' in text
    assert text.index('modules["messages/en.json"] =') < text.index('modules["i18n.js"] =')


# The page globals a module touches when it is imported, as stubs that find nothing (tests/js/load.js's).
STUBS = (
    "const nothing = { querySelector: () => null, querySelectorAll: () => [], addEventListener() {} };\n"
    "Object.assign(globalThis, { window: {}, location: { hash: '', pathname: '/', search: '' },\n"
    "  history: { replaceState() {} }, document: { ...nothing, readyState: 'complete',\n"
    "  body: { ...nothing, classList: { contains: () => false } } } });\n"
)
NODE = pytest.mark.skipif(shutil.which("node") is None, reason="node runs the bundle as a notebook's cell does")


def run_cell(tmp_path, code: str):
    """The notebook's bundle run by node as a cell runs it, then `code` (with `modules`); what it printed, as JSON."""
    script = tmp_path / "cell.cjs"
    script.write_text(STUBS + "const modules = (function () {\n" + bundle(VIEWER_ENTRY) + "\n})();\n" + code, "utf-8")
    run = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@NODE
def test_the_notebook_bundle_runs_and_speaks_from_the_catalogue(tmp_path):
    said = run_cell(
        tmp_path,
        "const i18n = modules['i18n.js'];\n"
        "console.log(JSON.stringify([i18n.t('viewer.more'), i18n.t('core.head', { n: 2 })]));\n",
    )
    messages = catalogue()
    assert said == [messages["viewer.more"], messages["core.head"].replace("{n}", "2")]


@NODE
def test_the_notebook_bundle_speaks_chinese_when_asked(tmp_path):
    said = run_cell(
        tmp_path,
        "modules['store.js'].set({ locale: 'zh-CN' });\n"
        "console.log(JSON.stringify(modules['i18n.js'].t('core.head', { n: 2 })));\n",
    )
    chinese = json.loads((VIEWER / "messages" / "zh-CN.json").read_text(encoding="utf-8"))["core.head"]
    assert said == chinese.replace("{n}", "2")


def test_show_takes_a_language_the_page_speaks():
    from ui.standalone import Shown, show

    with pytest.raises(ValueError, match="lang must be one of en, zh-CN or None"):
        show(None, "Ein Hund.", lang="fr")
    cell = Shown({"sentences": []}, lang="zh-CN").html()
    assert cell.rstrip().endswith('"zh-CN");\n})();</script>') or ', "zh-CN");' in cell
