#!/usr/bin/env python3
"""The shared library exports exactly the documented API, under a soname.

Checks, on the built libclustersim.so:
- every function declared with CS_API in the installed headers is exported;
- every exported function is declared with CS_API in an installed header
  (nothing internal leaks: symbol visibility is hidden by default);
- every CS_API declaration has a comment right above it (the header documents
  what it returns, when it fails, who owns what);
- the library has a SONAME of the form libclustersim.so.MAJOR.

Usage: check_exports.py LIBCLUSTERSIM_SO HEADER...
"""
import re
import subprocess
import sys


# libgcov's own helper, exported by a coverage build (-Db_coverage=true) along
# with its __gcov_* symbols; ignored only when those are present.
GCOV_RUNTIME = {"mangle_path"}


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    names = set()
    coverage = False
    for line in out.splitlines():
        parts = line.split()
        coverage |= len(parts) == 3 and parts[2].startswith("__gcov")
        # Functions only (T); data symbols would be listed as D/B/R and are an error too.
        if len(parts) == 3 and parts[1] in "TtDdBbRr" and not parts[2].startswith("_"):
            names.add((parts[2], parts[1]))
    if coverage:
        names = {(n, k) for n, k in names if n not in GCOV_RUNTIME}
    return names


def declared(headers):
    """name -> (header, line, documented) for every CS_API declaration."""
    out = {}
    for path in headers:
        with open(path) as f:
            lines = f.read().split("\n")
        for i, line in enumerate(lines):
            if not line.startswith("CS_API "):
                continue
            # The declaration may span lines: join until the closing ';'.
            decl = line
            j = i
            while ";" not in decl and j + 1 < len(lines):
                j += 1
                decl += " " + lines[j].strip()
            m = re.search(r"\b(cs_[a-z0-9_]+)\s*\(", decl)
            if not m:
                continue
            # Documented: a comment ends on a line above, before any blank line,
            # possibly with other CS_API declarations of the same group between.
            k = i - 1
            documented = False
            while k >= 0 and lines[k].strip():
                s = lines[k].strip()
                if s.endswith("*/"):
                    documented = True
                    break
                k -= 1
            out[m.group(1)] = (path, i + 1, documented)
    return out


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    lib, headers = sys.argv[1], sys.argv[2:]
    exp = exported(lib)
    exp_names = {n for n, _ in exp}
    decl = declared(headers)
    bad = []
    for name, kind in sorted(exp):
        if kind not in "Tt":
            bad.append(f"{name}: exported data symbol ({kind}); export functions only")
        elif name not in decl:
            bad.append(f"{name}: exported but not declared CS_API in an installed header")
    for name, (path, line, documented) in sorted(decl.items()):
        if name not in exp_names:
            bad.append(f"{path}:{line}: {name}() is declared CS_API but not exported")
        if not documented:
            bad.append(f"{path}:{line}: {name}() has no comment above its declaration")
    dyn = subprocess.run(["objdump", "-p", lib], capture_output=True, text=True,
                         check=True).stdout
    m = re.search(r"SONAME\s+(\S+)", dyn)
    if not m or not re.fullmatch(r"libclustersim\.so\.\d+", m.group(1)):
        bad.append(f"SONAME is {m.group(1) if m else 'missing'}, expected libclustersim.so.MAJOR")
    for b in bad:
        print(b)
    print(f"{len(decl)} declared, {len(exp_names)} exported, {len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
