#!/usr/bin/env python3
"""The source layout is a map of the architecture (docs/architecture.md).

Checks, on the source tree:
- every folder under src/ is a room of the floors below (a new folder must be
  placed on a floor first);
- every #include "..." of a file under src/ names a header of its own room,
  of a room on a lower floor, or a public header (clustersim/*.h);
- src/sim and src/gpu (the engine and its GPU model) read no JSON (cJSON,
  the JSON readers, the policy parameter views);
- every placement and dispatch policy includes only the public headers
  (clustersim/*.h), headers of its own folder other than the framework's, and
  system headers; the framework files are named below, and so are the
  exceptions, with their reasons;
- and with BUILD_ROOT, on the objects the build compiled from src/: every
  function or variable one room uses (nm: undefined in its object) and
  another room defines lies on a lower floor. A call needs no include of the
  other room's header to cross (a declaration in a header of its own, or in a
  public header, suffices), so only the symbols show every edge.
The 800-line limit on a module is a warning sign, not a target: a file near
it is split where a concept ends.

Usage: check_layout.py SOURCE_ROOT [BUILD_ROOT]
       check_layout.py --graph [-v] SOURCE_ROOT [BUILD_ROOT]   print the room graph
                                                  (-v: every include and use)
"""
import glob
import os
import re
import shutil
import subprocess
import sys

MAX_LINES = 800

# The floors, bottom up (docs/architecture.md draws them). A room uses rooms
# on lower floors only: nothing on its own floor but itself, nothing above.
FLOORS = [
    ["common"],                       # errors, JSON input, CSV, parameter views, files
    ["workloads", "profiles"],        # trace readers; profile data
    ["gpu", "llm"],                   # the GPU execution model; the LLM execution model
    ["sim", "calibrate"],             # the engine; the calibration of the GPU model
    ["policies/placement", "policies/dispatch", "policies/control"],
    ["policies"],                     # the registry, catalog and plug-ins over the kinds
    ["scenario"],                     # JSON scenarios compiled for the engine
    ["experiment"],                   # runs, searches, sweeps, provisioning
    ["replay"],                       # a run's decisions replayed on a backend
    ["figures"],                      # figures from outputs, for the CLI
    ["cli"],                          # the command line
]
FLOOR = {room: n for n, rooms in enumerate(FLOORS) for room in rooms}

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
NO_JSON = ("src/sim/", "src/gpu/")
JSON_INCLUDE = re.compile(r'^(common/json_input\.h|common/params|cjson/)')


def room_of(rel):
    """The room of a path under src/ (src/policies/placement/x.c: policies/placement)."""
    parts = rel.split("/")
    if parts[1] == "policies" and len(parts) > 3:
        return "policies/" + parts[2]
    return parts[1]


def includes(path):
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = re.match(r'\s*#\s*include\s*([<"])([^">]+)[">]', line)
            if m:
                yield n, m.group(1), m.group(2)


def include_target(root, rel, inc):
    """The file under src/ an #include "inc" of rel names, or None (public,
    generated or system headers)."""
    if inc.startswith("clustersim/"):
        return None
    local = os.path.join(os.path.dirname(rel), inc)
    if os.path.exists(os.path.join(root, local)):
        return os.path.normpath(local)
    under_src = os.path.join("src", inc)
    if os.path.exists(os.path.join(root, under_src)):
        return under_src
    return None


def edge_problem(src_room, dst_room):
    """Why src_room may not use dst_room, or None when it may."""
    if src_room == dst_room:
        return None
    if dst_room not in FLOOR:
        return f"{dst_room} is on no floor"
    if FLOOR[dst_room] < FLOOR[src_room]:
        return None
    side = "on its own floor" if FLOOR[dst_room] == FLOOR[src_room] else "above it"
    return f"{dst_room} is {side}"


def source_checks(root, files, bad, graph):
    for path in files:
        rel = os.path.relpath(path, root)
        room = room_of(rel)
        with open(path) as f:
            lines = sum(1 for _ in f)
        if lines > MAX_LINES:
            bad.append(f"{rel}: {lines} lines (at most {MAX_LINES}: split it by concept)")
        if room not in FLOOR:
            bad.append(f"{rel}: room {room} is on no floor (docs/architecture.md, FLOORS here)")
            continue
        folder = os.path.dirname(rel)
        for n, kind, inc in includes(path):
            if rel.startswith(NO_JSON) and JSON_INCLUDE.match(inc):
                bad.append(f"{rel}:{n}: the engine includes {inc}")
            if kind == '"':
                target = include_target(root, rel, inc)
                if target:
                    to = room_of(target)
                    if to != room:
                        graph.setdefault((room, to), []).append(f"{rel}:{n} #include \"{inc}\"")
                    why = edge_problem(room, to)
                    if why:
                        bad.append(f"{rel}:{n}: {room} includes {inc}: {why} "
                                   f"(docs/architecture.md)")
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


def object_sources(root, build):
    """(object, source under src/) for every object the build compiled from
    src/: meson names an object after its source's path below the target's
    folder, '/' written '_' (placement/milp.c: placement_milp.c.o)."""
    out = []
    for obj in glob.glob(os.path.join(build, "src", "**", "*.c.o"), recursive=True):
        rel = os.path.relpath(obj, build)
        target_dir = os.path.dirname(os.path.dirname(rel))  # src/<room>
        name = os.path.basename(obj)[:-len(".o")]
        for src in glob.glob(os.path.join(root, target_dir, "**", "*.c"), recursive=True):
            srel = os.path.relpath(src, root)
            if os.path.relpath(srel, target_dir).replace("/", "_") == name:
                out.append((obj, srel))
                break
        else:
            # A stale object of a removed or moved source: its symbols would
            # be charged to no file.
            out.append((obj, None))
    return out


def symbol_checks(root, build, bad, graph):
    nm = shutil.which("nm")
    if not nm:
        print("symbols not checked: no nm on PATH")
        return 0
    objs = object_sources(root, build)
    defined, used = {}, {}
    for obj, src in objs:
        if src is None:
            bad.append(f"{os.path.relpath(obj, build)}: an object of no source under src/ "
                       f"(a stale build: rebuild)")
            continue
        text = subprocess.run([nm, "-P", obj], capture_output=True, text=True,
                              check=True).stdout
        for line in text.splitlines():
            f = line.split()
            if len(f) < 2:
                continue
            if f[1] == "U":
                used.setdefault(src, set()).add(f[0])
            elif f[1] in "TDBRCVW":
                defined[f[0]] = src
    for src, syms in sorted(used.items()):
        by_file = {}
        for sym in sorted(syms):
            dst = defined.get(sym)
            if dst and room_of(dst) != room_of(src):
                by_file.setdefault(dst, []).append(sym)
        for dst, names in sorted(by_file.items()):
            a, b = room_of(src), room_of(dst)
            graph.setdefault((a, b), []).append(f"{src} uses {dst}: {', '.join(names)}")
            why = edge_problem(a, b) if a in FLOOR else f"{a} is on no floor"
            if why:
                bad.append(f"{src}: {a} uses {dst} ({', '.join(names)}): {why} "
                           f"(docs/architecture.md)")
    return len(objs)


def main():
    args = sys.argv[1:]
    show = bool(args) and args[0] == "--graph"
    if show:
        args = [a for a in args[1:] if a != "-v"]
    if len(args) not in (1, 2):
        print(__doc__, file=sys.stderr)
        return 2
    root = args[0]
    bad, graph = [], {}
    files = sorted(glob.glob(os.path.join(root, "src", "**", "*.[ch]"), recursive=True))
    source_checks(root, files, bad, graph)
    n_objs = symbol_checks(root, args[1], bad, graph) if len(args) == 2 else 0
    if show:
        for (a, b), why in sorted(graph.items(), key=lambda e: (-FLOOR.get(e[0][0], 99),
                                                                e[0][0], e[0][1])):
            print(f"{a} -> {b}: {len(why)}{'  UPWARD' if edge_problem(a, b) else ''}")
            for w in why if "-v" in sys.argv else ():
                print(f"    {w}")
        return 0
    for b in bad:
        print(b)
    objs = f", {n_objs} objects" if n_objs else ""
    print(f"{len(files)} source files{objs} checked, {len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
