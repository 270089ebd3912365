"""The `sizing` command's entry point: loading the command's modules takes a second or two,
and a Ctrl-C then ends it as one later does (one line, exit 130) instead of Python's
traceback of whichever import it interrupted."""

from __future__ import annotations

import sys

INTERRUPTED_EXIT = 130  # 128 + SIGINT, as a shell reports a Ctrl-C


def main() -> int:
    try:
        from pipelines import cli
    except KeyboardInterrupt:
        print("sizing: interrupted while starting", file=sys.stderr)
        return INTERRUPTED_EXIT
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
