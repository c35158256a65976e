"""The training package's shape: one source for every default (the CLI and bench/train.py read the
settings), --help that documents every flag, and imports that flow one way with no circle."""

import ast
import dataclasses
import importlib.util
import subprocess
import sys
from pathlib import Path

from model import TransformerConfig
from training.settings import TASKS, TrainSettings, auto_snapshot_steps, build_parser

ROOT = Path(__file__).resolve().parent.parent
LOCAL = (
    "training",
    "training_data",
    "corpora",
    "model",
    "generation",
    "compiled",
    "translation",
    "lens",
    "ui",
    "tokenizer",
    "data",
    "app",
    "train",
    "bench",
    "load",
    "exercises",
    "tests",
)
MODEL_API = (
    "CheckpointError",
    "ConfigError",
    "KINDS",
)  # what ui/ and app.py may take from model/ (and Translator from translation/)
PACKAGES = (
    "training",
    "training_data",
    "corpora",
    "model",
    "model/checkpoint",
    "generation",
    "compiled",
    "translation",
    "lens",
    "tokenizer",
    "ui",
    "bench",
    "load",
    "recipes",
    "recipes/everyday",
    "tools",
    "exercises",
)


def test_help_lists_every_flag_with_its_description_and_default():
    result = subprocess.run(
        [sys.executable, "train.py", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())  # argparse wraps lines
    fields = [f for f in dataclasses.fields(TrainSettings) if f.metadata.get("cli", True)]
    assert len(fields) >= 35
    for f in fields:
        flag = "--" + f.name.replace("_", "-")
        assert flag in text, flag
        first_words = " ".join(f.metadata["help"].split()[:3])
        assert first_words in text, (flag, first_words)
        assert any(part in text for part in ("(default:", "(required)")), flag
    help_texts = [a.help for a in build_parser()._actions if a.dest != "help"]
    assert all("(default:" in h or "(required)" in h for h in help_texts), help_texts


def test_task_defaults_come_from_one_place():
    translate = TrainSettings(output="o", task="translate").validate()
    assert translate.model_config(translate.vocab_size) == TransformerConfig()  # the demo model's sizes
    copy = TrainSettings(output="o", task="copy", max_steps=5).validate()
    assert (copy.d_model, copy.vocab_size, copy.epochs) == (64, 24, None)
    spec = importlib.util.spec_from_file_location("bench_train", ROOT / "bench" / "train.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.CONFIG == TransformerConfig() and bench.SETTINGS.batch_tokens == translate.batch_tokens
    assert set(TASKS) == {"translate", "copy"}


def test_auto_snapshot_steps_are_log_spaced_from_step_zero():
    steps = auto_snapshot_steps(4500)
    assert steps[0] == 0 and steps[-1] == 4500 and len(steps) == 8
    ratios = [b / a for a, b in zip(steps[1:], steps[2:])]
    assert max(ratios) / min(ratios) < 1.3  # evenly spaced on a log scale
    assert auto_snapshot_steps(4) == [0, 1, 2, 3, 4]


def local_imports(path: Path, with_names: bool = False) -> set:
    """The project modules a file imports (relative imports resolved against its package); with_names:
    (module, name) pairs of `from module import name`, and (module, None) for `import module`."""
    tree = ast.parse(path.read_text())
    package = path.parent.relative_to(ROOT).parts
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1])
                names = [f"{base}.{node.module}" if node.module else base]
            else:
                names = [node.module]
        else:
            continue
        if package == ("bench",):  # bench scripts import their siblings by bare name (bench/ is on sys.path)
            names = [f"bench.{n}" if (ROOT / "bench" / f"{n.split('.')[0]}.py").is_file() else n for n in names]
        names = [n for n in names if n.split(".")[0] in LOCAL]
        if with_names:
            imported = [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else [None]
            found |= {(n, name) for n in names for name in imported}
        else:
            found |= set(names)
    return found


def import_graph() -> dict[str, set[str]]:
    files = [p for p in ROOT.glob("*.py")] + [p for d in PACKAGES for p in (ROOT / d).glob("*.py")]
    graph = {}
    for path in files:
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1]) if parts[-1] == "__init__" else ".".join(parts)
        graph[name] = local_imports(path)
    modules = set(graph)

    def resolve(n: str) -> str:
        return n if n in modules else n.rsplit(".", 1)[0]  # "from model import X" -> model

    return {m: {resolve(d) for d in deps if resolve(d) in modules and resolve(d) != m} for m, deps in graph.items()}


def test_imports_flow_one_way_without_a_circle():
    graph = import_graph()
    assert "training.loop" in graph and "training" not in {d for d in graph.get("train", ())}
    for name, deps in graph.items():
        if name.split(".")[0] in ("model", "tokenizer", "data", "lens", "training_data", "corpora"):
            assert not any(under(d, "training", "train") for d in deps), (name, deps)
    state = {}

    def visit(node, trail):
        if state.get(node) == "done":
            return
        assert state.get(node) != "open", f"import circle: {' -> '.join(trail + [node])}"
        state[node] = "open"
        for dep in sorted(graph.get(node, ())):
            visit(dep, trail + [node])
        state[node] = "done"

    for node in sorted(graph):
        visit(node, [])
    assert len(state) == len(graph)


def under(module: str, *packages: str) -> bool:
    """Whether `module` is one of `packages` or inside one."""
    return any(module == p or module.startswith(p + ".") for p in packages)


def project_files() -> list[Path]:
    return list(ROOT.glob("*.py")) + [p for d in PACKAGES for p in (ROOT / d).glob("*.py")]


def test_the_whole_tree_has_no_import_circle_and_keeps_its_layers():
    """ui/ and app.py reach the model only through Translator (and its errors); lens/ (the methods) reads what the
    checkpoint knows of its training data (training_data/) but no training code, corpus builder or page;
    training_data/ sits below lens/ and training/; corpora/ (the data side) imports none of them; model/ and
    tokenizer/ import no layer above them; nothing outside tests/ imports tests; bench/ and load/ may import
    anything, and nothing imports them but themselves and the tests; nor exercises/, the learner's own."""
    graph = import_graph()
    assert {"ui.api", "load.abuse", "lens.cost", "app", "training_data.alarm", "corpora.parallel_text"} <= set(graph)
    for path in project_files():
        parts = path.relative_to(ROOT).with_suffix("").parts
        top = parts[0] if len(parts) > 1 else parts[0]
        for module, name in local_imports(path, with_names=True):
            where = f"{path.relative_to(ROOT)} imports {module}{'.' + name if name else ''}"
            if top in ("ui", "app"):
                assert not under(module, "model") or (module == "model" and name in MODEL_API), where
                assert not under(module, "generation", "compiled", "corpora"), where
                assert not under(module, "translation") or (module == "translation" and name == "Translator"), where
                assert not under(module, "training", "data") or module == "training.lab", where
            if top == "lens":
                assert not under(module, "training", "corpora", "data", "ui", "bench", "train"), where
            if top == "training_data":
                assert not under(module, "lens", "training", "corpora", "ui", "bench", "train", "app"), where
            if top == "corpora":
                # (back-translation runs a Translator: the model below is the data side's to use)
                assert not under(module, "lens", "training", "training_data", "ui", "bench", "train", "app"), where
            if top == "training":
                assert not under(module, "lens", "ui"), where
            if top in ("model", "tokenizer"):
                assert not under(module, "lens", "ui", "training", "training_data", "corpora", "data"), where
                assert not under(module, "bench", "train", "app"), where
                # the paper on the ground floor: nothing of searching, compiling or the translator below it
                assert not under(module, "generation", "compiled", "translation"), where
            if top == "generation":
                assert not under(module, "compiled", "translation", "lens", "ui"), where
            if top == "compiled":
                assert not under(module, "translation", "lens", "ui"), where
            if top == "translation":
                assert not under(module, "lens", "ui", "training", "training_data"), where
            if top != "tests":
                assert not under(module, "tests"), where
            assert not under(module, "bench") or top == "bench", where
            assert not under(module, "load") or top == "load", where
            assert not under(module, "exercises") or top in ("exercises", "tests"), where


def test_pip_install_ships_every_package():
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    found = {
        str(p.parent.relative_to(ROOT)).replace("/", ".")
        for p in ROOT.glob("*/**/__init__.py")
        if p.parts[len(ROOT.parts)] not in ("tests", ".venv", "node_modules", "runs", "build")
    }
    assert found == listed, f"pyproject.toml's packages and the folders with an __init__.py differ: {found ^ listed}"


if __name__ == "__main__":  # print the graph of the training side
    for module, deps in sorted(import_graph().items()):
        if module.startswith("training") or module in ("train", "translation.snapshots", "data"):
            print(f"{module:24s} -> {', '.join(sorted(deps)) or '-'}")
