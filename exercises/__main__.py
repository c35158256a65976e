"""python -m exercises check [NAME] [--file PATH] [--sentence TEXT] | selftest"""

from __future__ import annotations

import argparse

from .against_model import SENTENCE
from .checks import EXERCISES, LEARNER_FILE, check
from .selftest import selftest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m exercises", description="Write the Transformer yourself.")
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("check", help="check your exercises (all, or NAME) three ways")
    one.add_argument("name", nargs="?", choices=EXERCISES, help="one exercise; all of them when left out")
    one.add_argument("--file", default=str(LEARNER_FILE), help="your file (default: exercises/exercises.py)")
    one.add_argument("--sentence", default=SENTENCE, help=f"the German sentence (default: {SENTENCE!r})")
    commands.add_parser("selftest", help="run every check on the solutions and on the planted bugs")
    args = parser.parse_args(argv)
    if args.command == "selftest":
        return 0 if selftest() else 1
    return 0 if check(args.name, args.file, args.sentence) else 1


if __name__ == "__main__":
    raise SystemExit(main())
