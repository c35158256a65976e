"""More German-English text from Debian packages: software catalogues, LibreOffice, game dialogue.

    python -m corpora.parallel_text --output runs/corpora          # apt-get download, check, extract all
    python -m corpora.parallel_text --source games --debs DIR      # one source, from .debs already here

Each source is written to `<output>/<source>/` as `train.de` / `train.en` (one pair a line) and
SOURCE.json (packages, versions, sha256, licenses, and the pair count of every catalogue or help tree).
Nothing here is committed. A pair whose German or English also occurs in Multi30k val / test or in the
Ding dev / test splits is removed, so no dev or test sentence is trained on.

The sources:
- `software`: the German catalogues the installed packages already ship in /usr/share/locale/de (their
  files' sha256 recorded), plus those of PACKAGES["software"] (VLC, GIMP).
- `libreoffice`: the help pages aligned by paragraph id (libreoffice_help.py) and the UI catalogues.
- `games`: Wesnoth (the core and its 14 campaigns of Debian) and FreedroidRPG, whose catalogues hold
  the dialogue of their characters, the nearest to conversation of these sources.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import data
from model.checkpoint.files import write_text

from . import everyday_corpus
from .apt_packages import Package, PackageError, sha256_of, unpacked
from .catalogues import CatalogueError, Extraction, catalogue_pairs
from .libreoffice_help import HELP_ROOT, help_pairs

SYSTEM_LOCALE = Path("/usr/share/locale/de/LC_MESSAGES")
_LO = "4:7.4.7-1+deb12u14"
_WESNOTH = "1:1.16.9-1"
WESNOTH_CAMPAIGNS = {  # Debian's campaign packages of Wesnoth 1.16 and the sha256 of their .deb
    "httt": "05b16a3f8f8204278794aae14d8e6a7c95d2b2faef7337c4997c827a146d1bbd",
    "tsg": "38b5f564253b8e0d9c093b2b7c58aabfef24f688968d9cbaf42abfc1e76d8288",
    "sof": "b6f1ddffdbd1a977f3965dae944e4fb11c147627471f1cfc71c92d1e69efb555",
    "nr": "13edcf1bdd23708f531ba81c67100c5800363a119f10155c7f9e146fe7dced34",
    "did": "774619f5aaeb7eb4c848e1cc1758795a8c58e96bd270cceecc9d847dbcc769b3",
    "ei": "687abe111ee662b7324336ddadc209758f68d2eeb1ccbf630238f27a0e3c6404",
    "l": "5383c79046df6121929bc36a8ec3f970ab4cf9c1239ed9b31868201c27f4266d",
    "low": "2f304551b97b7fb76a2adb5ad8ffcac3e78476bc8ade17532c90714065c9bf9f",
    "dm": "1997ad4d91e8de36415db2a3445904288f588a76d75111222d2aace409ace5c6",
    "dw": "47982e08b2a5d5fd79f400a5453f32c6d7dd56f2ccc10412a9e47dec8a9b3ca4",
    "thot": "79d9ec6e43300ea9f41295ccf3fb451e8eeaefc17007123f65d77eb05cb88695",
    "sota": "fa44304ff53d259f3c5fe13c03cb8166e55e9c307807d1a5663048c396645ba6",
    "trow": "b5009e964ac7157a46d50de911e4f56f5bb4389d60b82a513b5f382671d180d7",
    "utbs": "81e05717bebbfb6348c0bed2cd6ce2560c4fd9205ed419c2e7bc039b4a70e228",
}
PACKAGES = {
    "software": [
        Package(
            "vlc-l10n",
            "3.0.23-0+deb12u1",
            "69ab8c034e2097e1050ff62e8048e0ad5e1f72991456a34d02bcecc8a8083136",
            "GPL-2.0-or-later",
        ),
        Package(
            "gimp-data",
            "2.10.34-1+deb12u10",
            "89007a69d4ef2b0440e5419e75d4112cfd1c49e97db38220d210b9f86322be7c",
            "GPL-3.0-or-later",
        ),
    ],
    "libreoffice": [
        Package(
            "libreoffice-help-de", _LO, "00490b63c509ac96f7f212d6a6e40452d3e0d1f97ccf4b824dd5ec4c01e8277f", "MPL-2.0"
        ),
        Package(
            "libreoffice-help-en-us", _LO, "8faa840285734d6cfe1ed25537b48f07e74bd6412e3917bf8e5f8a653f7b3712", "MPL-2.0"
        ),
        Package(
            "libreoffice-l10n-de", _LO, "aee22c8e3b3c0431f6e1b0bc66f757ba36c860e2651a05eb050fde4897f06548", "MPL-2.0"
        ),
    ],
    "games": [
        Package(
            "wesnoth-1.16-data",
            _WESNOTH,
            "1012b964bd412a6770685e3324ae3b61e176caff7846192d1ee63d55cd621e26",
            "GPL-2.0-or-later",
        ),
        *(
            Package(f"wesnoth-1.16-{name}", _WESNOTH, digest, "GPL-2.0-or-later")
            for name, digest in WESNOTH_CAMPAIGNS.items()
        ),
        Package(
            "freedroidrpg-data",
            "1.0-1",
            "16c3cfeb82b1ec20c98493bbe1de2e356bd1aec832845630a5a7f12e303baa2b",
            "GPL-2.0-or-later",
        ),
    ],
}
SOURCES = tuple(PACKAGES)


def german_catalogues(root: Path) -> list[Path]:
    """Every German .mo catalogue under an unpacked package (`.../de/LC_MESSAGES/*.mo`)."""
    return sorted(root.rglob("de/LC_MESSAGES/*.mo"))


def add(into: Extraction, found: Extraction, counts: dict, name: str) -> None:
    """Append one catalogue's (or help tree's) pairs, counting them under `name`."""
    counts[name] = len(found.pairs)
    into.pairs.extend(found.pairs)
    for reason, n in found.dropped.items():
        into.dropped[reason] = into.dropped.get(reason, 0) + n


def catalogues_of(paths: list[Path], into: Extraction, counts: dict, prefix: str = "") -> None:
    for path in paths:
        try:
            add(into, catalogue_pairs(path), counts, prefix + path.name)
        except (CatalogueError, OSError) as err:
            print(f"warning: skipped {err}", file=sys.stderr)
            counts[prefix + path.name] = f"unreadable: {err}"


def extract(source: str, roots: dict[str, Path], system_locale: Path = SYSTEM_LOCALE) -> tuple[Extraction, dict]:
    """The pairs of one source from its unpacked packages ({package name: root}), and the count a catalogue."""
    found, counts = Extraction(), {}
    if source == "software":
        system = sorted(system_locale.glob("*.mo")) if system_locale.is_dir() else []
        catalogues_of(system, found, counts, "system:")
    if source == "libreoffice":
        german = roots["libreoffice-help-de"] / HELP_ROOT / "de"
        english = roots["libreoffice-help-en-us"] / HELP_ROOT / "en-US"
        add(found, help_pairs(german, english), counts, "help pages")
    for name, root in roots.items():
        catalogues_of(german_catalogues(root), found, counts, f"{name}:")
    return found, counts


def held_out(data_dir: str | None, ding_dir: str | None) -> set[str]:
    """Normalised sentences of every dev and test split (Multi30k val / test, Ding dev / test)."""
    keys = everyday_corpus.multi30k_held_out(data_dir)
    ding = data.find_ding(ding_dir)
    for split in ("dev", "test"):
        corpus = data.load_split(ding, split)
        keys.update(everyday_corpus._key(s) for s in corpus.src + corpus.tgt)
    return keys


def deduplicated(pairs: list[tuple[str, str]], held: set[str]) -> tuple[list[tuple[str, str]], int]:
    """The pairs once each, without any whose German or English is held out; and how many were held out."""
    kept, seen, removed = [], set(), 0
    for pair in pairs:
        if everyday_corpus._key(pair[0]) in held or everyday_corpus._key(pair[1]) in held:
            removed += 1
        elif pair not in seen:
            seen.add(pair)
            kept.append(pair)
    return kept, removed


def write_source(folder: Path, pairs: list[tuple[str, str]], source: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    write_text(folder / "train.de", "".join(de + "\n" for de, _ in pairs))
    write_text(folder / "train.en", "".join(en + "\n" for _, en in pairs))
    write_text(folder / "SOURCE.json", json.dumps(source, indent=2, ensure_ascii=False) + "\n")


def build(
    source: str,
    output: Path,
    debs: Path | None = None,
    data_dir: str | None = None,
    ding_dir: str | None = None,
    any_version: bool = False,
    system_locale: Path = SYSTEM_LOCALE,
) -> dict:
    """Obtain, check, extract and write one source; returns what its SOURCE.json records."""
    held = held_out(data_dir, ding_dir)
    with tempfile.TemporaryDirectory(dir=output.parent if output.parent.exists() else None) as scratch:
        roots, packages = {}, []
        for package in PACKAGES[source]:
            roots[package.name], record = unpacked(package, Path(scratch), debs, any_version)
            packages.append(record)
        found, counts = extract(source, roots, system_locale)
        if source == "software":
            packages.append(
                {
                    "package": "installed system catalogues",
                    "folder": str(system_locale),
                    "sha256": {p.name: sha256_of(p) for p in sorted(system_locale.glob("*.mo"))},
                }
            )
    pairs, removed = deduplicated(found.pairs, held)
    if not pairs:
        raise PackageError(f"{source}: no pairs found in {', '.join(p.name for p in PACKAGES[source])}")
    record = {
        "corpus": source,
        "packages": packages,
        "pairs": len(pairs),
        "held_out_removed": removed,
        "dropped": dict(sorted(found.dropped.items())),
        "pairs_per_catalogue": counts,
    }
    write_source(output / source, pairs, record)
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=str(data.DEFAULT_DING_DIR.parent), help="folder of the corpora")
    parser.add_argument("--source", choices=SOURCES, action="append", help="one source (repeatable; default: all)")
    parser.add_argument("--debs", help="a folder of .debs already downloaded (default: apt-get download)")
    parser.add_argument("--data-dir", help="Multi30k folder (default: $MULTI30K_DIR)")
    parser.add_argument("--ding-dir", help="Ding folder (default: runs/corpora/ding)")
    parser.add_argument("--any-version", action="store_true", help="accept packages with other checksums")
    args = parser.parse_args(argv)
    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    try:
        for source in args.source or SOURCES:
            record = build(
                source, output, Path(args.debs) if args.debs else None, args.data_dir, args.ding_dir, args.any_version
            )
            print(f"{source}: {record['pairs']} pairs ({record['held_out_removed']} held out) -> {output / source}")
    except (PackageError, data.CorpusError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
