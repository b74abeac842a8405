#!/usr/bin/env python3
"""Test of the checker itself: runs check.py on an altered golden and passes
only if check.py exits 1 AND the differences it names are exactly the
expected ones (the WHERE of its "  WHERE: GOLDEN -> NOW" lines: a summary key
such as models[resnet50].latency_ms.p99, or "FILE row N column COL" for a CSV
file). A checker that fails for another reason (crash, missing file, another
value) or stays silent about the altered value fails this test.

Usage: expect_moved.py --moved WHERE [--moved WHERE ...] -- CHECK_PY CHECK_ARGS...
"""
import re
import subprocess
import sys

LINE = re.compile(r"^  (\S.*?): .* -> .*$")


def main(argv):
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    cut = argv.index("--")
    opts, cmd = argv[:cut], argv[cut + 1:]
    expected = [opts[i + 1] for i in range(len(opts) - 1) if opts[i] == "--moved"]
    if not expected or not cmd:
        print(__doc__, file=sys.stderr)
        return 2
    run = subprocess.run([sys.executable] + cmd, capture_output=True, text=True)
    print(run.stdout, end="")
    print(run.stderr, end="", file=sys.stderr)
    named = [m.group(1) for m in map(LINE.match, run.stdout.splitlines()) if m]
    if run.returncode != 1:
        print(f"expect_moved: FAIL: the checker exited {run.returncode}, not 1")
        return 1
    if sorted(named) != sorted(expected):
        print(f"expect_moved: FAIL: the checker named {named}, expected exactly {expected}")
        return 1
    print(f"expect_moved: ok: the checker failed and named exactly {expected}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
