#!/usr/bin/env python3
"""The source layout is a map of the architecture (issue 11, docs/extending.md).

Checks, on the source tree:
- no module (a .c or .h under src/) is longer than 800 lines;
- src/sim (the engine and the simulated world) includes no policy, scenario,
  experiment or CLI header, and no JSON (cJSON, the JSON readers, the policy
  parameter views);
- every placement and dispatch policy includes only the public headers
  (clustersim/*.h), headers of its own folder other than the framework's, and
  system headers; the framework files are named below, and so is the one
  exception, with its reason.

Usage: check_layout.py SOURCE_ROOT
"""
import glob
import os
import re
import sys

MAX_LINES = 800

# The framework's side of each policy kind: it may see the engine and JSON.
FRAMEWORK = {
    "src/policies/placement/placement.c", "src/policies/placement/placement.h",
    "src/policies/placement/placement_registry.c",
    "src/policies/dispatch/dispatch.h", "src/policies/dispatch/registry.c",
    "src/policies/registry.c", "src/policies/registry_internal.h",
}
# Library modules a policy may use besides the public interface, and why.
ALLOWED = {
    # iGniter reads its own coefficient format (a profile file of its own,
    # found in the data directories) and can derive it from the GPU model.
    "src/policies/placement/igniter.c": {"common/data_files.h"},
    "src/policies/placement/igniter.h": {"profiles/igniter_coef.h"},
    # The derivation drives the GPU model (gpu/gpu_exec.h) on the profiles'
    # internals, and fails in the placement framework's error domain, which
    # `clustersim derive` and the policy report alike.
    "src/policies/placement/igniter_derive.c": {"profiles/share_rule.h", "gpu/gpu_exec.h",
                                                "placement.h"},
    "src/policies/placement/igniter_derive.h": {"cjson/cJSON.h", "profiles/igniter_coef.h",
                                                "profiles/interference.h", "profiles/profile.h"},
}
SIM_FORBIDDEN = re.compile(r'^(policies/|scenario/|experiment/|cli/|common/json_input\.h|'
                           r'common/params|cjson/)')


def includes(path):
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = re.match(r'\s*#\s*include\s*([<"])([^">]+)[">]', line)
            if m:
                yield n, m.group(1), m.group(2)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    bad = []
    files = sorted(glob.glob(os.path.join(root, "src", "**", "*.[ch]"), recursive=True))
    for path in files:
        rel = os.path.relpath(path, root)
        with open(path) as f:
            lines = sum(1 for _ in f)
        if lines > MAX_LINES:
            bad.append(f"{rel}: {lines} lines (at most {MAX_LINES}: split it by concept)")
        folder = os.path.dirname(rel)
        for n, kind, inc in includes(path):
            if rel.startswith("src/sim/") and SIM_FORBIDDEN.match(inc):
                bad.append(f"{rel}:{n}: the engine includes {inc}")
            policy = (rel.startswith("src/policies/placement/") or
                      rel.startswith("src/policies/dispatch/")) and rel not in FRAMEWORK
            if not policy or kind == "<" and not inc.startswith("cjson/"):
                continue
            own = kind == '"' and "/" not in inc and \
                os.path.join(folder, inc) not in FRAMEWORK and \
                os.path.exists(os.path.join(root, folder, inc))
            if inc.startswith("clustersim/") or own or inc in ALLOWED.get(rel, ()):
                continue
            bad.append(f"{rel}:{n}: a policy includes {inc} (only clustersim/*.h and its own "
                       f"folder's headers)")
    for b in bad:
        print(b)
    print(f"{len(files)} source files checked, {len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
