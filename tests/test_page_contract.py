"""The page's contract (ui/static/*.js): ES modules that import what they use, in no circle; nothing on `window`
but the one door, `window.attentionLens` (door.js); no view state on DOM elements; every module reachable from an
entry (the app's page.js, the static site's site.js, a notebook's result.js) and type-checked. `npm run check`
type-checks them and `npm test` tests their pure logic (tests/js/); this file checks what needs no node."""

import re

import pytest

from ui import assets
from ui.export_site import SITE_ENTRY, SITE_SCRIPTS
from ui.standalone import VIEWER_ENTRY, VIEWER_STYLES, bundle, imports, page_modules

STATIC = assets.STATIC
FILES = sorted(p.name for p in STATIC.glob("*.js"))
SOURCES = {name: (STATIC / name).read_text(encoding="utf-8") for name in FILES}
# What a module may read of `window`: the browser's own properties, and the door (written by door.js only).
BROWSER = {"innerWidth", "innerHeight", "devicePixelRatio", "scrollY", "scrollTo", "addEventListener", "gradio_config"}
MOUNTS = re.compile(r'^  (\w+): \(\) => import\("\./([\w.]+)"\)\.then\(\(m\) => m\.(\w+)\)', re.M)


def code(source: str) -> str:
    """A module without its comments (a `//` that follows no space, as in a URL, is code)."""
    return re.sub(r"(^|\s)//.*$", r"\1", re.sub(r"/\*.*?\*/", "", source, flags=re.S), flags=re.M)


def test_every_module_is_reached_from_an_entry():
    reached = set(page_modules(assets.PAGE_ENTRY, dynamic=True)) | set(SITE_SCRIPTS)
    assert {n for n in reached if n.endswith(".js")} == set(FILES), f"no entry imports {sorted(set(FILES) - reached)}"
    assert all((STATIC / n).is_file() for n in reached)
    assert SITE_SCRIPTS == page_modules(SITE_ENTRY, dynamic=True)
    assert all((STATIC / s).is_file() for styles in assets.VIEW_STYLES.values() for s in styles)
    assert all((STATIC / s).is_file() for s in VIEWER_STYLES)


@pytest.mark.parametrize("name", FILES)
def test_each_module_is_checked_imports_what_exists_and_leaves_window_alone(name):
    source = SOURCES[name]
    assert source.startswith("// @ts-check\n"), f"{name} must start with // @ts-check"
    assert "(function () {" not in source.split("\n", 3)[-1][:400], f"{name}: a module, not a script in a function"
    for needed in imports(name, dynamic=True):
        assert needed in SOURCES or (STATIC / needed).is_file(), f"{name} imports ./{needed}, which is not in ui/static"
    touched = set(re.findall(r"\bwindow\.([A-Za-z_$][\w$]*)", code(source)))
    allowed = BROWSER | {"attentionLens"} if name == "door.js" else BROWSER
    assert touched <= allowed, f"{name} touches window.{sorted(touched - allowed)}"
    assert not re.search(r"\.__\w+\s*=", code(source)), f"{name} keeps state on a DOM element (use store.js)"
    assert "AttentionLens." not in code(source), f"{name} uses the old namespace"


def test_no_module_imports_in_a_circle():
    for name in FILES:
        page_modules(name, dynamic=True)  # raises ValueError naming the circle


def test_the_door_is_written_by_door_js_only():
    writes = {name for name, source in SOURCES.items() if re.search(r"window\.attentionLens\s*=", code(source))}
    assert writes == {"door.js"}
    published = {
        n
        for source in SOURCES.values()
        for call in re.findall(r"publish\(\{([^}]*)\}\)", code(source))
        for n in re.findall(r"(\w+)(?=\s*[:,]|\s*$)", call)
    }
    assert {"state", "openView", "walk", "walkTo", "translate", "view", "busy", "markStale"} <= published


def test_page_js_mounts_every_view_the_python_side_names():
    mounts = {name: (module, function) for name, module, function in MOUNTS.findall(SOURCES[assets.PAGE_ENTRY])}
    for module, function in mounts.values():
        assert re.search(rf"^export function {function}\(", SOURCES[module], re.M), f"{module} has no {function}"
    named = set()
    for path in (STATIC.parent).glob("*.py"):
        named |= set(re.findall(r'(?:mount_js|lab_view)\("(\w+)"', path.read_text(encoding="utf-8")))
    named.add("result")  # viewer_component's default
    assert named == set(mounts), f"ui/*.py mounts {sorted(named)}, page.js offers {sorted(mounts)}"


def test_the_python_side_reaches_the_page_through_the_door_only():
    for path in [*STATIC.parent.glob("*.py"), STATIC.parent.parent / "app.py"]:
        text = path.read_text(encoding="utf-8")
        assert "AttentionLens" not in text, f"{path.name} names the old namespace"
        assert not re.findall(r"window\.(?!attentionLens\b)\w+", text), f"{path.name} reads window beside the door"


def test_mount_js_imports_the_entry_by_a_plain_url():
    js = assets.mount_js("step", "server")
    assert re.fullmatch(
        r'return import\("/gradio_api/file=(?:[^"]*/)?ui/static/page\.js"\)\.then\(\(page\) => '
        r'page\.mount\("step", element, props, watch, server\)\);',
        js,
    ), js


@pytest.mark.parametrize("view", sorted(assets.VIEW_STYLES))
def test_each_view_head_links_the_shared_styles_then_its_own(view):
    head = assets.view_head(view)
    styles = re.findall(
        r'<link rel="stylesheet" href="/gradio_api/file=(?:[^"]*/)?ui/static/([^"?]+)\?v=[0-9a-f]+">', head
    )
    assert styles == assets.STYLES + assets.VIEW_STYLES[view]
    assert "<script" not in head
    preloaded = re.findall(r'<link rel="modulepreload" href="/gradio_api/file=(?:[^"]*/)?ui/static/([^"?]+)">', head)
    assert preloaded == [n for n in page_modules(assets.PAGE_ENTRY) if n.endswith(".js")] and "page.js" in preloaded


def test_the_notebook_bundle_holds_the_viewer_once_in_order():
    order = page_modules(VIEWER_ENTRY)
    assert order[-1] == VIEWER_ENTRY and "walk.js" not in order  # the page's own behaviour stays on the page
    text = bundle(VIEWER_ENTRY)
    assert [m for m in re.findall(r'^modules\["([\w./-]+)"\] = ', text, re.M)] == order
    assert not re.search(r"^(?:import|export) ", text, re.M)


TWIN = re.compile(r"^// twin of: (?P<originals>[^(]+?) \((?P<test>[\w/.]+)\)$", re.M)


def test_every_twin_names_its_original_and_the_test_that_holds_them_equal():
    """A module that computes what Python code computes (the model, the search, the lens, the trainer, ...) says so in
    its second line, `// twin of: ORIGINAL[, ORIGINAL] (TEST)`: each original exists, and the test exists and is one
    that runs the page (a browser, node) beside Python."""
    root = STATIC.parent.parent
    twins = {name: TWIN.search(SOURCES[name]) for name in FILES}
    found = {name: m for name, m in twins.items() if m}
    assert len(found) >= 17, sorted(found)  # the model, the search, the lens's views, the router, the trainer, ...
    for name, m in found.items():
        assert SOURCES[name].splitlines()[1] == m.group(0), f"{name}: the twin line comes second"
        for original in m.group("originals").split(", "):
            assert (root / original).is_file(), f"{name}: {original} does not exist"
        test = (root / m.group("test")).read_text(encoding="utf-8")
        assert "chromium" in test.lower() or "node" in test or "page" in test, f"{name}: {m.group('test')} runs no page"
