"""python -m exercises check [NAME] [--file PATH] [--sentence TEXT] [--time-limit S] [--lang zh-CN] | selftest [--lang zh-CN]

--lang picks the language of the messages, en or zh-CN; without it the environment picks (exercises/words.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .against_model import SENTENCE
from .checks import EXERCISES, LEARNER_FILE, check
from .contained import TIME_LIMIT_S
from .selftest import selftest
from .words import LANGUAGES, say, set_language


def _language(argv: list[str] | None) -> None:
    """Read --lang before anything else, so that the help and the errors speak that language too."""
    first = argparse.ArgumentParser(add_help=False)
    first.add_argument("--lang")
    known, _ = first.parse_known_args(argv)
    set_language(known.lang if known.lang in LANGUAGES else None)  # a wrong one: the full parser says so


def _file(path: str) -> str:
    if not Path(path).is_file():
        raise argparse.ArgumentTypeError(say("main.no_file", path=path))
    return path


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 1 <= value <= 600:
        raise argparse.ArgumentTypeError(say("main.bad_time_limit", value=text))
    return value


def _parser() -> argparse.ArgumentParser:
    language = argparse.ArgumentParser(add_help=False)
    language.add_argument("--lang", choices=LANGUAGES, help=say("main.lang"))
    parser = argparse.ArgumentParser("python -m exercises", parents=[language], description=say("main.description"))
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("check", parents=[language], help=say("main.check"))
    one.add_argument("name", nargs="?", choices=EXERCISES, help=say("main.name"))
    one.add_argument("--file", type=_file, default=str(LEARNER_FILE), help=say("main.file"))
    one.add_argument("--sentence", default=SENTENCE, help=say("main.sentence", sentence=repr(SENTENCE)))
    one.add_argument(
        "--time-limit", type=_seconds, default=TIME_LIMIT_S, help=say("main.time_limit", seconds=TIME_LIMIT_S)
    )
    commands.add_parser("selftest", parents=[language], help=say("main.selftest"))
    return parser


def main(argv: list[str] | None = None) -> int:
    _language(argv)
    args = _parser().parse_args(argv)
    if args.command == "selftest":
        return 0 if selftest() else 1
    return 0 if check(args.name, args.file, args.sentence, args.time_limit) else 1


if __name__ == "__main__":
    raise SystemExit(main())
