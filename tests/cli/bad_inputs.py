#!/usr/bin/env python3
"""Runs the table of bad inputs, tests/cli/bad_inputs.tsv (docs/testing.md).

Each case runs `clustersim ARGS` in a temporary directory of its own and
passes when:
- the exit status is the expected one (2 for every bad input);
- stderr holds the expected message (a substring);
- stdout is empty;
- nothing was created: the directory holds exactly what the setup made;
- stderr shows no sanitizer report, GLib critical or warning;
- it took less than LIMIT_S seconds (a FIFO must not block); a case that
  failed only that is run again, three runs at most, so that a loaded
  machine does not fail it while a blocking one still fails.

Usage: bad_inputs.py CLUSTERSIM_BINARY SOURCE_ROOT [ID...]
With IDs, only those cases run (for debugging one).
"""
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time

LIMIT_S = 5.0
# Anything in these means the program misbehaved on its way to the message.
ALARMS = ("Sanitizer", "runtime error:", "CRITICAL", "-WARNING **", "Segmentation fault")


class TableError(Exception):
    pass


def expand(text, tmp, src, fixtures):
    return text.replace("{tmp}", tmp).replace("{src}", src).replace("{fx}", fixtures)


def unescape(text):
    return text.encode().decode("unicode_escape")


def json_path(path):
    """'clients[0].rate' -> ['clients', 0, 'rate']."""
    steps = []
    for m in re.finditer(r"([^.\[\]]+)|\[(\d+)\]", path):
        steps.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
    if not steps:
        raise TableError(f"bad JSON path {path!r}")
    return steps


def edit_json(file, path, raw):
    """Sets path to the JSON text raw (kept verbatim: 1e999 stays 1e999), or
    deletes it when raw is None."""
    with open(file) as f:
        doc = json.load(f)
    steps = json_path(path)
    node = doc
    for s in steps[:-1]:
        node = node[s]
    if raw is None:
        del node[steps[-1]]
        text = json.dumps(doc)
    else:
        marker = "@@RAW@@"
        if isinstance(node, list) and steps[-1] == len(node):
            node.append(marker)
        else:
            node[steps[-1]] = marker
        text = json.dumps(doc).replace(json.dumps(marker), raw)
    with open(file, "w") as f:
        f.write(text)


def setup(actions, tmp, fixtures):
    """Runs the setup column. Returns a reason to skip the case, or None."""
    for action in actions:
        word, _, rest = action.partition(" ")
        if word == "skip-if-root":
            if os.geteuid() == 0:
                return "root reads any file"
        elif word == "mkdir":
            os.makedirs(os.path.join(tmp, rest), exist_ok=True)
        elif word == "mkfifo":
            os.mkfifo(os.path.join(tmp, rest))
        elif word == "touch":
            open(os.path.join(tmp, rest), "w").close()
        elif word == "copy":
            # copy NAME [AS]: a fixture of tests/cli/bad_inputs/
            names = rest.split()
            shutil.copy(os.path.join(fixtures, names[0]), os.path.join(tmp, names[-1]))
        elif word == "write":
            # write FILE TEXT: TEXT with \n, \t, \x00 escapes
            name, _, text = rest.partition(" ")
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(unescape(text).encode("latin-1"))
        elif word == "set":
            # set FILE PATH=JSON: one field of a JSON file, JSON text verbatim
            name, _, assignment = rest.partition(" ")
            path, eq, raw = assignment.partition("=")
            if not eq:
                raise TableError(f"set needs PATH=JSON: {action!r}")
            edit_json(os.path.join(tmp, name), path, raw)
        elif word == "unset":
            name, _, path = rest.partition(" ")
            edit_json(os.path.join(tmp, name), path, None)
        elif word == "symlink":
            # symlink TARGET NAME: NAME -> TARGET (which need not exist)
            target, _, name = rest.partition(" ")
            os.symlink(target, os.path.join(tmp, name))
        elif word == "chmod":
            mode, _, name = rest.partition(" ")
            os.chmod(os.path.join(tmp, name), int(mode, 8))
        elif word == "sparse":
            # sparse FILE BYTES: a file of that size that takes no space
            name, _, size = rest.partition(" ")
            with open(os.path.join(tmp, name), "wb") as f:
                f.truncate(int(size))
        else:
            raise TableError(f"unknown setup action {action!r}")
    return None


def snapshot(root):
    """Every path under root with its kind and size, to see what a run made."""
    seen = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            seen[os.path.relpath(p, root)] = (stat.S_IFMT(st.st_mode),
                                              st.st_size if stat.S_ISREG(st.st_mode) else 0)
    return seen


def read_table(path):
    cases = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) not in (4, 5):
                raise TableError(f"{path}:{lineno}: expected 4 or 5 tab-separated columns "
                                 f"(id, status, message, args[, setup]), got {len(cols)}")
            cid, status, message, args = cols[:4]
            if not re.fullmatch(r"[a-z0-9][a-z0-9-]*(/[a-z0-9-]+)*", cid):
                raise TableError(f"{path}:{lineno}: bad id {cid!r}")
            if not status.isdigit() or not message:
                raise TableError(f"{path}:{lineno}: expected an exit status and a message")
            actions = [a.strip() for a in cols[4].split(" && ")] if len(cols) == 5 else []
            cases.append({"id": cid, "status": int(status), "message": message, "args": args,
                          "setup": [a for a in actions if a], "line": lineno})
    ids = [c["id"] for c in cases]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise TableError(f"{path}: ids used twice: {', '.join(sorted(dup))}")
    return cases


SLOW = ("took ", "still running after ")


def only_slow(result):
    """True when a case's only failure is its time (run_case's list)."""
    if not isinstance(result, list) or not result or not result[0].startswith(SLOW):
        return False
    return all(r.startswith(SLOW) or r.startswith("stderr was:") for r in result)


def run_case(case, binary, src, fixtures):
    """Returns a list of failures (empty: passed), or a skip reason string."""
    tmp = tempfile.mkdtemp(prefix="cs-bad-")
    try:
        skip = setup(case["setup"], tmp, fixtures)
        if skip:
            return skip
        before = snapshot(tmp)
        args = [expand(a, tmp, src, fixtures) for a in shlex.split(case["args"])]
        t0 = time.monotonic()
        try:
            p = subprocess.run([binary] + args, cwd=tmp, stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=4 * LIMIT_S)
            rc, out, err = p.returncode, p.stdout, p.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            return [f"still running after {4 * LIMIT_S:.0f} s (blocked?)"]
        took = time.monotonic() - t0
        fails = []
        if rc != case["status"]:
            fails.append(f"exit status {rc}, expected {case['status']}")
        want = expand(case["message"], tmp, src, fixtures)
        if want not in err:
            fails.append(f"message not on stderr: {want!r}")
        if out:
            fails.append(f"stdout not empty: {out[:200]!r}")
        made = sorted(set(snapshot(tmp)) - set(before))
        if made:
            fails.append(f"created {', '.join(made[:5])}")
        alarms = [a for a in ALARMS if a in err]
        if alarms:
            fails.append(f"stderr shows {', '.join(alarms)}")
        if took > LIMIT_S:
            fails.append(f"took {took:.1f} s (limit {LIMIT_S:.0f} s)")
        if fails:
            fails.append(f"stderr was: {err.strip()[:600]!r}")
        return fails
    finally:
        # A case may have taken permissions away; give them back to remove it.
        for dirpath, dirnames, filenames in os.walk(tmp):
            for n in dirnames + filenames:
                p = os.path.join(dirpath, n)
                if not os.path.islink(p):
                    os.chmod(p, 0o700)
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary = os.path.abspath(sys.argv[1])
    src = os.path.abspath(sys.argv[2])
    only = set(sys.argv[3:])
    fixtures = os.path.join(src, "tests", "cli", "bad_inputs")
    try:
        cases = read_table(os.path.join(src, "tests", "cli", "bad_inputs.tsv"))
    except TableError as e:
        print(f"bad_inputs.py: {e}", file=sys.stderr)
        return 2
    unknown = only - {c["id"] for c in cases}
    if unknown:
        print(f"bad_inputs.py: no case {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    passed = failed = skipped = 0
    per_command = {}
    for case in cases:
        if only and case["id"] not in only:
            continue
        try:
            result = run_case(case, binary, src, fixtures)
            # A case that was only slow is run again, three runs at most: on
            # a loaded machine one run can take seconds, while a case that
            # waits on a FIFO blocks every time (docs/testing.md, "Under load").
            for _ in range(2):
                if not only_slow(result):
                    break
                print(f"# {case['id']}: {result[0]}; running it again")
                result = run_case(case, binary, src, fixtures)
        except TableError as e:
            result = [f"table line {case['line']}: {e}"]
        command = case["id"].split("/")[0]
        per_command[command] = per_command.get(command, 0) + 1
        if isinstance(result, str):
            print(f"skip - {case['id']}: {result}")
            skipped += 1
        elif result:
            print(f"FAIL - {case['id']} (line {case['line']})")
            for r in result:
                print(f"    {r}")
            failed += 1
        else:
            print(f"ok - {case['id']}")
            passed += 1
    print("cases per command: " + ", ".join(f"{k} {v}" for k, v in per_command.items()))
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
