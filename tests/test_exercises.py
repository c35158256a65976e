"""The exercises: every check passes the solutions and catches every planted bug; the notebooks run unwritten;
the checks speak English or Chinese (exercises/words.py), both catalogues with the same keys."""

from __future__ import annotations

import json
import os
import re
import string
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from exercises import words
from exercises.bugs import BUGS

ROOT = Path(__file__).resolve().parents[1]
CHINESE = re.compile(r"[\u4e00-\u9fff]")  # a CJK ideograph
# the slow ones run the shipped model over a sentence many times (about 10 s apiece): CI runs them, the fast half does not;
# the words' own tests are fast
slow = pytest.mark.slow


@pytest.fixture
def environment(monkeypatch):
    """No language chosen and none in the environment; the test sets what it needs."""
    for name in words.ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    words.set_language(None)
    yield monkeypatch
    words.set_language(None)


def _run(*args: str, lang: str = "en") -> subprocess.CompletedProcess:
    env = {**os.environ, "EXERCISES_LANG": lang}
    return subprocess.run(
        [sys.executable, "-m", "exercises", *args], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env
    )


def _placeholders(text: str) -> list[str]:
    return sorted(field for _, field, _, _ in string.Formatter().parse(text) if field is not None)


def test_the_two_catalogues_have_the_same_keys_and_placeholders():
    en, zh = (json.loads((words.MESSAGES / f"{lang}.json").read_text(encoding="utf-8")) for lang in words.LANGUAGES)
    assert sorted(en) == sorted(zh)
    for key in en:
        assert _placeholders(en[key]) == _placeholders(zh[key]), key


def test_say_picks_the_language_from_the_environment(environment):
    assert words.language() == "en" and words.say("check.shapes").startswith("shapes")
    for settings, want in [
        ({"LANG": "zh_CN.UTF-8"}, "zh-CN"),
        ({"LANGUAGE": "zh"}, "zh-CN"),
        ({"LANG": "zh_CN.UTF-8", "LC_ALL": "C.UTF-8"}, "en"),  # the first one set decides
        ({"LC_MESSAGES": "zh_TW.UTF-8", "LANG": "en_GB.UTF-8"}, "zh-CN"),
        ({"EXERCISES_LANG": "en", "LC_ALL": "zh_CN.UTF-8"}, "en"),
        ({"EXERCISES_LANG": "zh-CN", "LC_ALL": "en_US.UTF-8"}, "zh-CN"),
        ({"LANG": "fr_FR.UTF-8"}, "en"),
    ]:
        for name in words.ENVIRONMENT:
            environment.delenv(name, raising=False)
        for name, value in settings.items():
            environment.setenv(name, value)
        assert words.language() == want, settings
        assert words.say("check.shapes").startswith({"en": "shapes", "zh-CN": "形状"}[want]), settings


def test_set_language_wins_over_the_environment(environment):
    environment.setenv("EXERCISES_LANG", "zh-CN")
    words.set_language("en")
    assert words.say("report.not_written", exercise="attention") == (
        "attention: not written yet (it still raises NotImplementedError)"
    )
    words.set_language("zh_CN")
    assert words.say("report.failed", exercise="attention", failed=2) == "attention：3 项检查中有 2 项没有通过"
    words.set_language(None)  # back to the environment
    assert words.language() == "zh-CN"
    with pytest.raises(ValueError):
        words.set_language("fr")


def test_a_key_chinese_lacks_is_said_in_english_and_one_english_lacks_is_named(environment):
    catalogues = {"en": {"only.en": "in English, {n}"}, "zh-CN": {}}
    environment.setattr(words, "catalogue", catalogues.__getitem__)
    words.set_language("zh-CN")
    assert words.say("only.en", n=1) == "in English, 1"
    with pytest.raises(KeyError, match="no.such.key"):
        words.say("no.such.key")


def test_every_bug_is_named_in_chinese_too():
    for bugs in BUGS.values():
        for bug in bugs:
            assert CHINESE.search(bug.named_by_zh), bug


@slow
@pytest.mark.parametrize("lang", words.LANGUAGES)
def test_selftest_passes_the_solutions_and_catches_and_names_every_bug(lang):
    done = _run("selftest", "--lang", lang, lang="en")
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr
    exercises, contained = lines[:7], lines[7:]
    for line in exercises:
        assert ("reference ... pass" if lang == "en" else "参考答案 ... 通过") in line, line
        caught, planted = re.search(r"(\d+)/(\d+)$", line).groups()
        assert caught == planted and int(planted) >= 3, line
    # the learner's code misbehaving (a hang, an exit, a syntax error, a crash): each said in its own line
    assert len(contained) == 5 and not any("Traceback" in line for line in contained), contained
    said = {
        "en": ["stopped after", "exit code 0", "when it is loaded", "not valid Python", "SIGSEGV"],
        "zh-CN": ["秒内没有给出结果", "退出码 0", "被加载时", "不是合法的 Python", "SIGSEGV"],
    }[lang]
    assert all(word in line for word, line in zip(said, contained)), contained


@slow
def test_check_contains_what_the_learners_file_does(tmp_path):
    """A hang, an exit at import, os._exit, a binary file, a huge message, a child process: one bounded line each,
    exit 1, and nothing left running."""
    source = (Path(__file__).resolve().parents[1] / "exercises" / "solutions.py").read_text()
    cases = {
        "hang.py": source + "\ndef attention(*a, **k):\n    import time\n    time.sleep(600)\n",
        "osexit.py": source + "\ndef attention(*a, **k):\n    import os\n    os._exit(0)\n",
        "huge.py": source + "\ndef attention(*a, **k):\n    raise ValueError('x' * 10_000_000)\n",
        "spawns.py": source + "\ndef attention(*a, **k):\n    import subprocess, time\n"
        "    subprocess.Popen(['sleep', '424242'])\n    time.sleep(600)\n",
    }
    for name, code in cases.items():
        (tmp_path / name).write_text(code)
    (tmp_path / "binary.py").write_bytes(bytes(range(256)) * 10)
    for name in [*cases, "binary.py"]:
        done = _run("check", "attention", "--file", str(tmp_path / name), "--time-limit", "3", lang="en")
        assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr, (name, done.stdout, done.stderr)
        assert len(done.stdout) < 3000, (name, len(done.stdout))
    assert subprocess.run(["pgrep", "-f", "sleep 424242"], capture_output=True).returncode == 1  # no child left


@slow
def test_a_failure_report_speaks_the_learners_language(tmp_path):
    learner = tmp_path / "mine.py"
    learner.write_text("from exercises.bugs import greedy_argmin as greedy_step  # noqa: F401\n")
    english = _run("check", "greedy_step", "--file", str(learner), lang="en")
    chinese = _run("check", "greedy_step", "--file", str(learner), "--lang", "zh-CN", lang="en")
    chinese_by_environment = _run("check", "greedy_step", "--file", str(learner), lang="zh-CN")
    assert english.returncode == chinese.returncode == 1, english.stderr + chinese.stderr
    assert "greedy_step: 3 of 3 checks failed" in english.stdout and "most likely" in english.stdout
    assert not CHINESE.search(english.stdout), english.stdout
    assert "greedy_step：3 项检查中有 3 项没有通过" in chinese.stdout and "可能性最大" in chinese.stdout
    assert chinese_by_environment.stdout == chinese.stdout


@slow
@pytest.mark.parametrize(
    "notebook, lang, not_written",
    [("exercises.ipynb", "en", "not written yet"), ("exercises.zh-CN.ipynb", "zh-CN", "还没有写")],
)
def test_the_notebook_runs_from_a_fresh_kernel_with_nothing_written(notebook, lang, not_written, monkeypatch):
    monkeypatch.setenv("EXERCISES_LANG", "en")  # the English notebook speaks English; the Chinese one sets its own
    notebook = nbformat.read(ROOT / "exercises" / notebook, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    printed = "".join(
        output.get("text", "") for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
    )
    assert printed.count(not_written) == 7, printed
    assert bool(CHINESE.search(printed)) == (lang == "zh-CN"), printed
    assert not any(output.output_type == "error" for cell in notebook.cells for output in cell.get("outputs", []))


def test_check_names_the_file_and_the_function_to_write_first(capsys):
    from exercises.checks import LEARNER_FILE, check

    assert not check(None, LEARNER_FILE)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    from exercises.checks import EXERCISES

    first = next(n for n in EXERCISES if f"def {n}(" in LEARNER_FILE.read_text())
    assert "exercises.py" in last and first in last and "line" in last, last


def test_a_division_by_d_k_is_named_and_said_to_be_flatter():
    import math

    from exercises import shapes
    from exercises import solutions as ok

    def by_d_k(Q, K, V, mask=None):
        return ok.attention(Q / math.sqrt(Q.size(-1)), K, V, mask)

    said = shapes.attention(by_d_k)
    assert "flatter" in said and "instead of sqrt(d_k)" in said, said
