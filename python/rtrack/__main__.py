"""python -m rtrack ARGS: the rtrack binary this package runs, with ARGS."""

import os
import sys

from ._binary import RtrackError, find_binary


def main():
    try:
        path = find_binary()
    except RtrackError as e:
        sys.stderr.write(f"rtrack: {e}\n")
        return 127
    os.execv(path, ["rtrack", *sys.argv[1:]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
