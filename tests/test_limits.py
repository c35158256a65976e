"""docs/limits.md states every limit once: each number in its table is the number in the code it names."""

import importlib
import inspect
import re
from pathlib import Path

import pytest

TABLE = Path(__file__).resolve().parent.parent / "docs" / "limits.md"


def rows() -> list[tuple[str, str, str]]:
    found = []
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[2].startswith("`"):
            found.append(tuple(cells))
    return found


def resolve(reference: str):
    """`a.b.NAME.attr` -> the value; `a.b.function` (`param`) -> that parameter's default."""
    dotted = re.match(r"`([\w.]+)`", reference).group(1)
    param = re.search(r"\(`(\w+)`\)", reference)
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
            break
        except ModuleNotFoundError:
            continue
    for name in parts[cut:]:
        value = getattr(value, name)
    if param:
        return inspect.signature(value).parameters[param.group(1)].default
    return value


def test_the_table_has_every_row():
    assert len(rows()) >= 25


@pytest.mark.parametrize("what, limit, reference", rows())
def test_each_limit_is_the_number_in_the_code(what, limit, reference):
    value = resolve(reference)
    number = re.match(r"[\d,]+", limit)
    if number is None:  # a rule, not a number: the code it names exists
        assert value is not None
        return
    stated = int(number.group(0).replace(",", ""))
    if isinstance(value, str):  # "1mb"-style settings are not in this table
        pytest.fail(f"{reference} is text, not a number")
    assert stated == value, f"docs/limits.md says {limit} for {what!r}; {reference} is {value}"
