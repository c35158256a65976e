"""The page scripts' contract (ui/static/*.js): one list of what each view loads (ui.assets.VIEW_FILES), one
global they share (window.AttentionLens), every name on it declared in ui/static/types.d.ts, and every file
type-checked. `npm run check` type-checks them and `npm test` tests their pure logic (tests/js/); this file
checks what needs no node."""

import re

import pytest

from lens.standalone import VIEWER_SCRIPTS, VIEWER_STYLES
from ui import assets

STATIC = assets.STATIC
FILES = sorted(p.name for p in STATIC.glob("*.js"))
SOURCES = {name: (STATIC / name).read_text(encoding="utf-8") for name in FILES}
NAMESPACE = "const AL = (window.AttentionLens = window.AttentionLens || /** @type {AttentionLens} */ ({}));"
# What a script may read of `window` besides the namespace: the browser's own properties.
BROWSER = {"innerWidth", "innerHeight", "devicePixelRatio", "scrollY", "scrollTo", "addEventListener", "gradio_config"}


def code(source: str) -> str:
    """A script without its comments (a `//` that follows no space, as in a URL, is code)."""
    return re.sub(r"(^|\s)//.*$", r"\1", re.sub(r"/\*.*?\*/", "", source, flags=re.S), flags=re.M)


def listed() -> list[str]:
    """Every script some view loads: the shared viewer, the page's own, then each view's."""
    return (assets.SCRIPTS + assets.PAGE_SCRIPTS + assets.IN_PAGE_SCRIPTS + assets.SITE_SCRIPTS
            + [s for scripts, _ in assets.VIEW_FILES.values() for s in scripts])


def test_every_script_is_listed_once_and_every_listed_file_exists():
    names = listed()
    assert sorted(names) == FILES, "ui/static/*.js and ui.assets' lists differ"
    assert len(names) == len(set(names)), f"a script is listed twice: {names}"
    styles = assets.STYLES + [s for _, styles in assets.VIEW_FILES.values() for s in styles]
    assert all((STATIC / s).is_file() for s in styles), styles


def test_the_shared_viewer_is_the_one_lens_standalone_inlines():
    assert assets.SCRIPTS == list(VIEWER_SCRIPTS) and assets.STYLES == list(VIEWER_STYLES)
    assert assets.SCRIPTS[0] == "core.js", "core.js makes the namespace and the public API: it loads first"


@pytest.mark.parametrize("view", sorted(assets.VIEW_FILES))
def test_each_view_head_loads_its_list_in_order(view):
    head = assets.view_head(view)
    scripts = re.findall(r'<script src="/gradio_api/file=(?:[^"]*/)?ui/static/([^"?]+)\?v=[0-9a-f]+"></script>', head)
    styles = re.findall(r'<link rel="stylesheet" href="/gradio_api/file=(?:[^"]*/)?ui/static/([^"?]+)\?v=[0-9a-f]+">', head)
    own_scripts, own_styles = assets.VIEW_FILES[view]
    assert scripts == assets.SCRIPTS + assets.IN_PAGE_SCRIPTS + assets.PAGE_SCRIPTS + own_scripts
    assert styles == assets.STYLES + assets.PAGE_STYLES + own_styles
    assert head.startswith(assets.HEAD)


@pytest.mark.parametrize("name", FILES)
def test_each_script_is_checked_and_touches_one_global(name):
    source = SOURCES[name]
    assert source.startswith("// @ts-check\n"), f"{name} must start with // @ts-check"
    body = re.sub(r"/\*.*?\*/", "", source.split("\n", 1)[1], count=1, flags=re.S).strip()
    assert body.startswith("(function () {") and body.endswith("})();"), f"{name}: all of it inside one function"
    assert source.count(NAMESPACE) == 1, f"{name} must take the namespace with: {NAMESPACE}"
    touched = set(re.findall(r"\bwindow\.([A-Za-z_$][\w$]*)", code(source)))
    allowed = BROWSER | {"AttentionLens"} | ({"attentionLens"} if name == "core.js" else set())
    assert touched <= allowed, f"{name} touches window.{sorted(touched - allowed)}"
    assert not re.search(r"^(?:var|let|const|function|class)\s", source, re.M), f"{name} declares a global"


def interface_members() -> set[str]:
    """The names declared on the AttentionLens interface of ui/static/types.d.ts."""
    text = (STATIC / "types.d.ts").read_text(encoding="utf-8")
    body = re.search(r"^interface AttentionLens \{\n(.*?)^\}", text, re.S | re.M)[1]
    return set(re.findall(r"^  ([A-Za-z_$][\w$]*)\??[(:<]", body, re.M))


def test_every_name_on_the_namespace_is_declared_and_defined():
    defined = {m for source in SOURCES.values() for m in re.findall(r"\bAL\.([A-Za-z_$][\w$]*)\s*=[^=]", code(source))}
    declared = interface_members()
    assert declared - defined == set(), f"declared in types.d.ts but no script defines them: {declared - defined}"
    assert defined - declared == set(), f"put on AttentionLens but not declared in types.d.ts: {defined - declared}"


def test_the_public_api_is_published_from_core_only():
    writes = {name for name, source in SOURCES.items() if re.search(r"window\.attentionLens\s*=", code(source))}
    assert writes == {"core.js"}
    assert "AL.publish({ state: () => AL.state() });" in SOURCES["walk.js"]
