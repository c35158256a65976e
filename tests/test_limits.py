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


def test_the_examples_of_the_measured_tables_are_what_the_budgets_say():
    """docs/limits.md's worked examples, checked against the budgets on the shipped checkpoint's tokenizer (the texts
    load/abuse.py sends): a /patch of 70 CJK characters passes the work budget, of 80 or 100 is refused; a
    /contrast of 100 characters is refused at any step, of 60 at step 80 but not at step 40; one line of 100 CJK
    characters fits /explain, sixteen do not."""
    from lens import cost
    from lens.contrast import check_contrast_work
    from lens.patching import check_patch_work
    from load.abuse import cjk_pair, odd_text
    from translation import Translator

    translator = Translator.from_pretrained(Path(__file__).resolve().parent.parent / "checkpoints" / "de-en")
    config = translator.config
    pieces = lambda text: len(translator.encode_source(text)[0])  # noqa: E731
    check_patch_work(config, pieces(cjk_pair(1, 70)[0]), 1)
    for characters in (80, 100):
        with pytest.raises(ValueError, match="/patch would compute"):
            check_patch_work(config, pieces(cjk_pair(1, characters)[0]), 1)
    for step in (1, 40, 256):
        with pytest.raises(ValueError, match="/contrast would compute"):
            check_contrast_work(config, pieces(odd_text(1, 100)), step, 256)
    check_contrast_work(config, pieces(odd_text(1, 60)), 40, 256)
    with pytest.raises(ValueError, match="/contrast would compute"):
        check_contrast_work(config, pieces(odd_text(1, 60)), 80, 256)
    cost.check_before(cost.EXPLAIN, config, [pieces(odd_text(1))], 256)
    with pytest.raises(ValueError, match="would hold"):
        cost.check_before(cost.EXPLAIN, config, [pieces(line) for line in odd_text(16).splitlines()], 256)
