#!/usr/bin/env python3
"""Docs describe only what the installed library exports.

Every C function named in README.md and docs/*.md (a `cs_name(` call) must be
exported by libclustersim, unless it appears in a section whose heading says
"(internal": those sections describe source-level modules for contributors.

Usage: check_doc_api.py LIBCLUSTERSIM_SO SOURCE_ROOT
"""
import glob
import os
import re
import subprocess
import sys


# Functions a plug-in defines and the library calls (clustersim/plugin.h):
# documented, never exported by the library.
PLUGIN_DEFINED = {"cs_plugin_init", "cs_plugin_abi_version"}


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    lib, root = sys.argv[1:]
    names = exported(lib)
    docs = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    bad = []
    checked = 0
    for path in docs:
        internal = False
        level = 0
        with open(path) as f:
            for n, line in enumerate(f, 1):
                m = re.match(r"^(#+)\s", line)
                if m:
                    depth = len(m.group(1))
                    if "(internal" in line:
                        internal, level = True, depth
                    elif internal and depth <= level:
                        internal = False
                    continue
                for fn in re.findall(r"\b(cs_[a-z0-9_]+)\(", line):
                    checked += 1
                    if not internal and fn not in names and fn not in PLUGIN_DEFINED:
                        bad.append(f"{os.path.relpath(path, root)}:{n}: {fn}() is not exported")
    for b in bad:
        print(b)
    print(f"{checked - len(bad)} passed, {len(bad)} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
