"""The extraction rules of the Debian parallel text (catalogues, LibreOffice help, games), on small synthetic files."""

import json
import struct
from pathlib import Path

import pytest

from corpora import parallel_text
from corpora.catalogues import CatalogueError, catalogue_pairs, clean, read_mo
from corpora.libreoffice_help import help_pairs
from training.settings import TrainSettings


def write_mo(path: Path, entries: dict, charset: str = "UTF-8") -> Path:
    """A GNU .mo file of {msgid or (msgctxt, msgid) or (msgctxt, msgid, msgid_plural): msgstr or [msgstr...]}."""
    items = [("", f"Content-Type: text/plain; charset={charset}\nPlural-Forms: nplurals=2; plural=(n != 1);\n")]
    for key, value in entries.items():
        if isinstance(key, tuple):
            context, *ids = key
            original = (f"{context}\x04" if context else "") + "\x00".join(ids)
        else:
            original = key
        items.append((original, "\x00".join(value) if isinstance(value, list) else value))
    items.sort()
    originals = [o.encode(charset) for o, _ in items]
    translations = [t.encode(charset) for _, t in items]
    n, header = len(items), 28
    offset = header + 16 * n
    tables, blob = [b"", b""], b""
    for i, strings in enumerate((originals, translations)):
        for s in strings:
            tables[i] += struct.pack("<2I", len(s), offset + len(blob))
            blob += s + b"\x00"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(struct.pack("<7I", 0x950412DE, 0, n, header, header + 8 * n, 0, 0) + tables[0] + tables[1] + blob)
    return path


def test_read_mo_keeps_context_plurals_and_charset(tmp_path):
    path = write_mo(
        tmp_path / "a.mo",
        {("menu", "_Open"): "_Öffnen", ("", "%d file", "%d files"): ["%d Datei", "%d Dateien"], "Grüße": "Größe"},
        charset="ISO-8859-1",
    )
    messages = {m.singular: m for m in read_mo(path)}
    assert messages["_Open"].context == "menu"
    assert messages["%d file"].plural == "%d files" and messages["%d file"].translations == ("%d Datei", "%d Dateien")
    assert messages["Grüße"].translations == ("Größe",)  # Latin-1 decoded by the header's charset


def test_not_a_catalogue_is_refused_by_name(tmp_path):
    bad = tmp_path / "bad.mo"
    bad.write_bytes(b"\x00" * 40)
    with pytest.raises(CatalogueError, match="bad.mo: not a .mo file"):
        read_mo(bad)


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("_Open the file", "Open the file"),
        ("&Save", "Save"),
        ("Sa~ve as", "Save as"),
        ("Drag & Drop", "Drag & Drop"),
        ("Cannot open %s: %s", "Cannot open"),
        ("Copied %1$d of %2$d files.", "Copied of files."),
        ("Hello %(name)s!", "Hello!"),
        ("Found {count} items", "Found items"),
        ("$unit.name attacks", "attacks"),
        ("Open %PRODUCTNAME now", "Open now"),
        ("It has a 70% chance", "It has a 70% chance"),
        ("Click <b>here</b> &amp; go", "Click here & go"),
        ("female^I am ready.", "I am ready."),
        ("„Ja“ – sagte er…", '"Ja" – sagte er...'),
    ],
)
def test_clean_strips_accelerators_placeholders_and_markup(raw, expected):
    assert clean(raw) == expected


def test_catalogue_pairs_apply_every_rule(tmp_path):
    path = write_mo(
        tmp_path / "de" / "LC_MESSAGES" / "demo.mo",
        {
            "_Open": "Ö_ffnen",
            ("", "One file was deleted.", "%d files were deleted."): [
                "Eine Datei wurde gelöscht.",
                "%d Dateien wurden gelöscht.",
            ],
            "%s:": "%s:",  # only a variable
            "/usr/share/doc": "/usr/share/doc/de",  # a path
            "GTK_THEME": "GTK_THEME_DE",  # a symbol
            "  -f, --force    never prompt\n": "  -f, --force    nie nachfragen\n",  # command-line help
            "Save": "Save",  # untranslated
            "First line.\nSecond line.": "Erste Zeile.\nZweite Zeile.",
            "Is it you?": "Bist du es?",
        },
    )
    found = catalogue_pairs(path)
    assert set(found.pairs) == {
        ("Öffnen", "Open"),
        ("Eine Datei wurde gelöscht.", "One file was deleted."),
        ("Dateien wurden gelöscht.", "files were deleted."),
        ("Erste Zeile.", "First line."),
        ("Zweite Zeile.", "Second line."),
        ("Bist du es?", "Is it you?"),
    }
    assert found.dropped["only a variable, a path or a symbol"] == 2 and found.dropped["empty after cleaning"] == 1
    assert found.dropped["command-line help"] == 1 and found.dropped["untranslated"] == 1


def _help_page(root: Path, lang_text: dict[str, str]) -> None:
    body = "".join(f'<p id="{ident}" class="paragraph">{text}</p>' for ident, text in lang_text.items())
    page = root / "text" / "shared" / "page.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(f"<html><body>{body}<p id='bm_x'>bookmark</p></body></html>", encoding="utf-8")


def test_libreoffice_help_aligns_by_paragraph_id(tmp_path):
    mac = '<span class="switchinline"><span class="MAC">Command</span><span>{}</span></span>'
    _help_page(
        tmp_path / "de",
        {
            "par_id1": f"Drücken Sie {mac.format('Strg')}+C, um zu kopieren.",
            "hd_id2": "Kopieren",
            "par_id3": "Nur deutsch.",
        },
    )
    _help_page(
        tmp_path / "en-US",
        {"par_id1": f"Press {mac.format('Ctrl')}+C to copy.", "hd_id2": "Copying", "par_id4": "English only."},
    )
    found = help_pairs(tmp_path / "de", tmp_path / "en-US")
    assert found.pairs == [("Drücken Sie Strg+C, um zu kopieren.", "Press Ctrl+C to copy."), ("Kopieren", "Copying")]
    assert found.dropped == {"paragraph in German only": 1}


def test_held_out_sentences_never_reach_training(tmp_path):
    held = {"a man is riding a bike", "ein mann fährt fahrrad"}
    pairs = [
        ("Ein Mann fährt Fahrrad.", "A cyclist."),
        ("Hallo!", "A man is riding a bike!"),
        ("Hallo!", "Hello!"),
        ("Hallo!", "Hello!"),
    ]
    kept, removed = parallel_text.deduplicated(pairs, held)
    assert kept == [("Hallo!", "Hello!")] and removed == 2


def test_extract_counts_pairs_per_catalogue(tmp_path):
    system = tmp_path / "system"
    write_mo(system / "tool.mo", {"Is it you?": "Bist du es?"})
    package = tmp_path / "pkg"
    write_mo(package / "usr/share/locale/de/LC_MESSAGES/game.mo", {"Run!": "Lauf!", "They saw us.": "Sie sahen uns."})
    write_mo(package / "usr/share/locale/fr/LC_MESSAGES/game.mo", {"Run!": "Cours !"})  # not German: not read
    found, counts = parallel_text.extract("software", {"pkg": package}, system)
    assert counts == {"system:tool.mo": 1, "pkg:game.mo": 2}
    assert ("Lauf!", "Run!") in found.pairs and len(found.pairs) == 3


def test_build_writes_splits_and_source_from_local_debs(tmp_path, monkeypatch):
    """A source built end to end from a .deb made here (dpkg-deb -b), its sha256 checked and recorded."""
    import shutil
    import subprocess

    if not shutil.which("dpkg-deb"):
        pytest.skip("dpkg-deb is not installed")
    tree = tmp_path / "tree"
    write_mo(
        tree / "usr/share/locale/de/LC_MESSAGES/chat.mo",
        {"Where is the station?": "Wo ist der Bahnhof?", "Good morning!": "Guten Morgen!"},
    )
    (tree / "DEBIAN").mkdir()
    (tree / "DEBIAN/control").write_text(
        "Package: chat-data\nVersion: 1.0\nArchitecture: all\nMaintainer: x <x@y>\nDescription: test\n"
    )
    debs = tmp_path / "debs"
    debs.mkdir()
    subprocess.run(["dpkg-deb", "-b", str(tree), str(debs / "chat-data_1.0_all.deb")], check=True, capture_output=True)
    package = parallel_text.Package("chat-data", "1.0", None, "CC0-1.0")
    monkeypatch.setitem(parallel_text.PACKAGES, "games", [package])
    monkeypatch.setattr(parallel_text, "held_out", lambda *a: {"good morning"})
    record = parallel_text.build("games", tmp_path / "out", debs)
    folder = tmp_path / "out" / "games"
    assert (folder / "train.de").read_text(encoding="utf-8") == "Wo ist der Bahnhof?\n"
    assert (folder / "train.en").read_text(encoding="utf-8") == "Where is the station?\n"
    source = json.loads((folder / "SOURCE.json").read_text(encoding="utf-8"))
    assert source == record and source["held_out_removed"] == 1
    assert len(source["packages"][0]["deb_sha256"]) == 64 and source["packages"][0]["license"] == "CC0-1.0"
    assert source["pairs_per_catalogue"] == {"chat-data:chat.mo": 2}


def test_a_deb_of_another_version_is_refused(tmp_path):
    from corpora.apt_packages import PackageError, checked

    deb = tmp_path / "x_1_all.deb"
    deb.write_bytes(b"not the package")
    with pytest.raises(PackageError, match="--any-version"):
        checked(deb, parallel_text.Package("x", "1", "0" * 64, "MIT"))


@pytest.mark.parametrize(
    "value, message",
    [("games:2,chat:1", "unknown corpus 'chat'"), ("games:0", "at least 1"), ("games:x", "whole number")],
)
def test_more_corpora_flag_is_checked_by_name(value, message):
    settings = TrainSettings(output="x", corpus="multi30k+ding", more_corpora=value, epochs=1)
    with pytest.raises(ValueError, match=message):
        settings.validate()


def test_more_corpora_needs_ding():
    with pytest.raises(ValueError, match="needs --corpus multi30k\\+ding"):
        TrainSettings(output="x", more_corpora="games:1", epochs=1).validate()
    repeats = TrainSettings(output="x", corpus="multi30k+ding", more_corpora="games:2,software", epochs=1)
    assert repeats.more_corpora_repeats() == {"games": 2, "software": 1}
