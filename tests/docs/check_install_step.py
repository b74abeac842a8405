#!/usr/bin/env python3
"""README's install step, followed as written: on a build directory that
README's set-up command has configured already (`meson setup build`), the
documented command that sets the prefix must set it. `meson setup build
--prefix=...` on a configured directory says "Directory already configured",
exits 0 and keeps /usr/local: the documented step must not be that.

Runs only the meson part of the step (not ninja install) in a temporary
build directory and reads the prefix back with `meson introspect`.
Usage: check_install_step.py MESON SOURCE_ROOT"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile


def fail(msg):
    print("check_install_step: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    meson, root = sys.argv[1], sys.argv[2]
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    steps = [l for l in readme.splitlines() if re.match(r"\s*meson\b.*--prefix=", l)]
    if len(steps) != 1:
        fail("README.md: expected one meson command with --prefix=, found %d" % len(steps))
    # The meson command alone: what follows && builds and installs.
    words = shlex.split(steps[0].split("&&")[0], posix=True)
    with tempfile.TemporaryDirectory() as tmp:
        build = os.path.join(tmp, "build")
        prefix = os.path.join(tmp, "prefix")
        # README's own set-up command first, as a reader has run it.
        subprocess.run([meson, "setup", build, root], check=True, stdout=subprocess.DEVNULL)
        args = []
        for w in words[1:]:
            if w == "build":
                w = build
            w = re.sub(r"^--prefix=.*$", "--prefix=" + prefix, w)
            args.append(w)
        if words[0] != "meson":
            fail("README.md: the install step does not start with meson: " + steps[0])
        run = subprocess.run([meson] + args, cwd=root, capture_output=True, text=True)
        if run.returncode != 0:
            fail("the documented step %r failed: %s" % (steps[0], run.stderr))
        opts = json.loads(subprocess.run([meson, "introspect", build, "--buildoptions"],
                                         check=True, capture_output=True, text=True).stdout)
        got = [o["value"] for o in opts if o["name"] == "prefix"]
        if got != [prefix]:
            fail("README.md's install step %r left the prefix at %s, not the one it names"
                 % (steps[0].strip(), got))
    print("README's install step sets the prefix of a configured build: ok")


main()
