"""docs/architecture.md names every module of the project, and names none that no longer exists: its Layout lists,
under each folder, the modules (`name.py`, `name.js`) that folder holds."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
FOLDERS = (
    "model",
    "model/checkpoint",
    "tokenizer",
    "generation",
    "compiled",
    "translation",
    "lens",
    "training_data",
    "training",
    "corpora",
    "ui",
    "ui/static",
    "bench",
    "load",
    "recipes",
    "recipes/everyday",
    "tools",
    "exercises",
    "lab",
)
TOP = ("app.py", "train.py", "data.py")


def layout() -> dict[str, set[str]]:
    """The Layout block: each folder (a line `folder/` at the margin) and the modules indented under it."""
    block = re.search(r"## Layout\n.*?```\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)[1]
    listed: dict[str, set[str]] = {"": set()}
    folder = ""
    for line in block.splitlines():
        head = re.match(r"^([\w/.-]+/)\s", line + " ")
        if head:
            folder = head[1].rstrip("/")
            listed.setdefault(folder, set())
            continue
        name = re.match(r"^(?:  )?([\w]+\.(?:py|js))\s", line + " ")
        if name:
            listed[folder if line.startswith("  ") else ""].add(name[1])
    return listed


def modules(folder: str) -> set[str]:
    pattern = "*.js" if folder == "ui/static" else "*.py"
    return {p.name for p in (ROOT / folder).glob(pattern) if p.name != "__init__.py"}


def test_every_module_is_named_in_its_folder_and_every_named_module_exists():
    listed = layout()
    for folder in FOLDERS:
        assert modules(folder) == listed.get(folder, set()), (
            f"docs/architecture.md's {folder}/: missing {sorted(modules(folder) - listed.get(folder, set()))}, "
            f"gone {sorted(listed.get(folder, set()) - modules(folder))}"
        )
    assert set(TOP) <= listed[""]


def test_the_layout_reader_sees_a_missing_module():
    listed = layout()
    assert "attention.py" in listed["model"] and "store.js" in listed["ui/static"]
    assert modules("model") - {"attention.py"} != listed["model"]


def test_every_package_has_a_folder_line():
    listed = layout()
    packages = {
        str(p.parent.relative_to(ROOT))
        for p in ROOT.glob("*/**/__init__.py")
        if p.parts[len(ROOT.parts)] not in ("tests", ".venv", "node_modules", "runs", "build")
    }
    assert packages <= set(listed), sorted(packages - set(listed))
