#!/usr/bin/env python3
"""Mutation testing for clustersim: does the test suite catch wrong code?

Applies each mutation of tools/mutation/mutations.toml (one small change to
one source file: a flipped comparison, an off-by-one, a dropped term) to a
scratch copy of the source tree, rebuilds, runs the whole test suite and
reports whether some test failed ("caught") or none did ("survived"). A
surviving mutant is either a gap in the tests or an equivalent mutant (no
observable behaviour can change), which the list must then say, with why.

The real tree is only read: the tracked files (git ls-files) are copied once
into a scratch directory that holds its own build directory, so rebuilds are
incremental; each mutated file is restored before the next mutation. An
interrupted run leaves at most the scratch directory behind (removed unless
--work was given).

Usage:
  tools/mutation/mutate.py                  every mutation
  tools/mutation/mutate.py --only ID,ID     a subset
  tools/mutation/mutate.py --list           list the mutations and exit
  tools/mutation/mutate.py --check          validate the list against the tree and exit

Exit status: 0 when every mutant is caught or documented as equivalent and
survives; 1 when a non-equivalent mutant survives, a mutant does not compile
(fix the list) or a mutant documented as equivalent is caught (fix the
note); 2 on a bad list, bad arguments or a failing unmutated suite.

Python 3.11+ standard library only (tomllib).
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_LIST = os.path.join(HERE, "mutations.toml")
ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
# meson's results that mean "this test did not object". INTERRUPT is what
# meson records for the tests still running when --maxfail stops the suite:
# they were cancelled, not failed.
PASSING = {"OK", "EXPECTEDFAIL", "SKIP", "INTERRUPT"}
KEYS = {"id", "file", "original", "replacement", "description", "equivalent"}


class ListError(Exception):
    """The mutation list is malformed or does not match the tree."""


@dataclass
class Mutation:
    id: str
    file: str
    original: str
    replacement: str
    description: str
    equivalent: str | None = None
    line: int = 0  # where the original starts, 1-based


@dataclass
class Outcome:
    status: str  # caught | survived | equivalent | compile error | equivalent but caught
    tests: list = field(default_factory=list)  # failing test names
    timeout: bool = False
    detail: str = ""
    seconds: float = 0.0


# ---- the list -------------------------------------------------------------------


def load_list(path):
    """Parses the TOML list; checks its shape (not yet the tree)."""
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ListError(f"{path}: {e}")
    extra = set(doc) - {"mutation"}
    if extra:
        raise ListError(f"{path}: unknown top-level key(s) {sorted(extra)}; expected [[mutation]] tables")
    out, seen, errors = [], set(), []
    for i, m in enumerate(doc.get("mutation", [])):
        where = f"{path}: mutation #{i + 1}" + (f" ({m['id']})" if isinstance(m.get("id"), str) else "")
        unknown = set(m) - KEYS
        missing = {"id", "file", "original", "replacement", "description"} - set(m)
        if unknown:
            errors.append(f"{where}: unknown key(s) {sorted(unknown)}")
        if missing:
            errors.append(f"{where}: missing key(s) {sorted(missing)}")
            continue
        if not all(isinstance(m[k], str) for k in m):
            errors.append(f"{where}: every value must be a string")
            continue
        if not ID_RE.match(m["id"]):
            errors.append(f"{where}: id must be lower-case letters, digits and '-'")
        if m["id"] in seen:
            errors.append(f"{where}: id {m['id']!r} is used twice")
        seen.add(m["id"])
        if not m["original"]:
            errors.append(f"{where}: empty original")
        if m["original"] == m["replacement"]:
            errors.append(f"{where}: the replacement equals the original")
        if "equivalent" in m and not m["equivalent"].strip():
            errors.append(f"{where}: 'equivalent' needs the reason")
        out.append(Mutation(**{k: m[k] for k in m}))
    if errors:
        raise ListError("\n".join(errors))
    return out


def tracked_files(repo):
    """The tracked files; outside a git checkout (the scratch tree of a
    mutation run, whose suite runs --check too; a release tarball) every file
    under src/, python/ and examples/, which is where mutations live."""
    r = subprocess.run(["git", "-C", repo, "ls-files", "-z"], capture_output=True)
    if r.returncode == 0:
        return [p for p in r.stdout.decode().split("\0") if p]
    out = []
    for top in ("src", "python", "examples"):
        for d, _, names in os.walk(os.path.join(repo, top)):
            out += [os.path.relpath(os.path.join(d, n), repo) for n in names]
    return out


def check_against_tree(mutations, repo, tracked):
    """Each original must occur exactly once in its (tracked) file: a stale
    entry would test nothing, an ambiguous one might mutate the wrong place."""
    tracked = set(tracked)
    errors = []
    for m in mutations:
        if m.file not in tracked:
            errors.append(f"{m.id}: {m.file} is not a tracked file")
            continue
        with open(os.path.join(repo, m.file), encoding="utf-8") as f:
            text = f.read()
        n = text.count(m.original)
        if n == 0:
            errors.append(f"{m.id}: stale: the original text no longer occurs in {m.file}:\n"
                          f"    {m.original!r}")
        elif n > 1:
            lines = [text.count("\n", 0, i) + 1 for i in find_all(text, m.original)]
            errors.append(f"{m.id}: ambiguous: the original text occurs {n} times in {m.file} "
                          f"(lines {', '.join(map(str, lines))}); include more context")
        else:
            m.line = text.count("\n", 0, text.index(m.original)) + 1
    if errors:
        raise ListError("\n".join(errors))


def find_all(text, sub):
    i = text.find(sub)
    while i >= 0:
        yield i
        i = text.find(sub, i + 1)


# ---- the scratch tree -----------------------------------------------------------


def sync_tree(repo, tracked, scratch):
    """Copies the tracked files (as they are in the working tree) into scratch,
    rewriting only those whose content differs so that a reused build
    directory stays incremental."""
    for rel in tracked:
        src = os.path.join(repo, rel)
        if not os.path.isfile(src) or os.path.islink(src):
            continue  # deleted in the working tree, or a link: nothing to build from
        dst = os.path.join(scratch, rel)
        with open(src, "rb") as f:
            data = f.read()
        try:
            with open(dst, "rb") as f:
                if f.read() == data:
                    continue
        except OSError:
            pass
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as f:
            f.write(data)
        shutil.copymode(src, dst)


def descendants(pid):
    """Every process below pid (Linux /proc). meson starts each test in its
    own process group, so killing meson's group alone would orphan them."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = proc_stat(int(entry))
            if st:
                children.setdefault(st[0], []).append((int(entry), st[1]))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c[0])
    return out  # (pid, start time) pairs


def proc_stat(pid):
    """(parent pid, start time) of a process, or None when it is gone. The
    start time tells a process from a later one that reuses its pid."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            # The command may contain spaces and parentheses: split after the last ')'.
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[1]), int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


class Runner:
    """Runs commands in their own session, so that a timeout or an interrupt
    can end the whole tree of processes (meson, its tests, their children)."""

    def __init__(self, verbose):
        self.verbose = verbose
        self.proc = None

    def run(self, cmd, cwd, timeout):
        """Returns (exit status or None on timeout, combined output)."""
        self.proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        try:
            out, _ = self.proc.communicate(timeout=timeout)
            return self.proc.returncode, out.decode(errors="replace")
        except subprocess.TimeoutExpired:
            self.kill()
            out, _ = self.proc.communicate()
            return None, out.decode(errors="replace")
        except BaseException:
            self.kill()  # an interrupt: leave no process running
            raise
        finally:
            self.proc = None

    def kill(self):
        """SIGTERM first (meson then stops its tests and writes its log),
        SIGKILL after 10 s to whatever is left of the tree."""
        p = self.proc
        if not p or p.poll() is not None:
            return
        tree = descendants(p.pid)
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            # Not reaped yet, so its process group id is still ours.
            os.killpg(p.pid, signal.SIGKILL)
        for pid, start in tree:
            st = proc_stat(pid)
            if st and st[1] == start:  # still the process we saw, not a reused pid
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def build(runner, builddir, jobs, timeout):
    rc, out = runner.run(["ninja", "-C", builddir, f"-j{jobs}"], None, timeout)
    return rc == 0, out


def first_error(out):
    for line in out.splitlines():
        if "error:" in line or "undefined reference" in line:
            return line.strip()[:300]
    lines = [l for l in out.splitlines() if l.strip()]
    return lines[-1][:300] if lines else "(no output)"


def run_suite(runner, builddir, jobs, timeout, maxfail):
    """Runs meson test; returns (failing test names, timed out?, seconds)."""
    log = os.path.join(builddir, "meson-logs", "testlog.json")
    if os.path.exists(log):
        os.remove(log)
    cmd = ["meson", "test", "-C", builddir, "--no-rebuild", "--num-processes", str(jobs)]
    if maxfail:
        cmd += ["--maxfail", str(maxfail)]
    t0 = time.monotonic()
    rc, out = runner.run(cmd, None, timeout)
    seconds = time.monotonic() - t0
    failing, timed_out = [], rc is None
    try:
        with open(log) as f:
            for line in f:
                d = json.loads(line)
                if d.get("result") not in PASSING:
                    failing.append(d["name"].split(" / ")[-1])
                    timed_out |= d.get("result") == "TIMEOUT"
    except OSError:
        pass
    if rc not in (0, None) and not failing:
        # Non-zero without a failing test in the log: meson itself failed.
        failing.append(f"(meson test exit status {rc})")
    if runner.verbose and failing:
        print(out[-4000:], file=sys.stderr)
    return failing, timed_out, seconds


# ---- main -----------------------------------------------------------------------


def describe_tests(tests, limit=4):
    if len(tests) <= limit:
        return ", ".join(tests)
    return ", ".join(tests[:limit]) + f" (+{len(tests) - limit} more)"


def test_mutation(m, scratch, builddir, runner, args, suite_timeout):
    path = os.path.join(scratch, m.file)
    with open(path, encoding="utf-8") as f:
        original_text = f.read()
    t0 = time.monotonic()
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(original_text.replace(m.original, m.replacement, 1))
        ok, out = build(runner, builddir, args.jobs, args.build_timeout)
        if not ok:
            if args.verbose:
                print(out[-4000:], file=sys.stderr)
            return Outcome("compile error", detail=first_error(out), seconds=time.monotonic() - t0)
        failing, timed_out, _ = run_suite(runner, builddir, args.jobs, suite_timeout, args.maxfail)
    finally:
        # Restore even on an interrupt: a reused --work tree must stay clean.
        with open(path, "w", encoding="utf-8") as f:
            f.write(original_text)
    seconds = time.monotonic() - t0
    if failing or timed_out:
        status = "equivalent but caught" if m.equivalent else "caught"
        return Outcome(status, tests=failing, timeout=timed_out, seconds=seconds)
    return Outcome("equivalent" if m.equivalent else "survived", seconds=seconds)


def outcome_text(o):
    if o.status in ("caught", "equivalent but caught"):
        t = "caught (timeout)" if o.timeout else "caught"
        if o.tests:
            t += " by " + describe_tests(o.tests)
        return t if o.status == "caught" else f"DOCUMENTED EQUIVALENT BUT {t}"
    if o.status == "compile error":
        return f"COMPILE ERROR: {o.detail}"
    if o.status == "survived":
        return "SURVIVED"
    return "survived (documented equivalent)"


def write_report(path, mutations, outcomes, wall):
    """A Markdown table of the run, for docs/testing.md."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("| id | where | what | result |\n|---|---|---|---|\n")
        for m in mutations:
            o = outcomes.get(m.id)
            if not o:
                continue
            res = outcome_text(o).replace("|", "\\|")
            if o.status in ("caught", "equivalent but caught"):
                res = "caught (timeout)" if o.timeout else "caught"
                if o.tests:
                    res += " by " + ", ".join(o.tests)
            if o.status == "equivalent":
                res = "equivalent: " + m.equivalent.replace("|", "\\|")
            what = m.description.replace("|", "\\|")
            f.write(f"| {m.id} | {m.file}:{m.line} | {what} | {res} |\n")
        f.write(f"\n{summary_line(outcomes)}; wall time {wall / 60:.1f} min\n")


def summary_line(outcomes):
    count = lambda s: sum(o.status == s for o in outcomes.values())
    line = f"{count('caught')} caught, {count('survived')} survived, {count('equivalent')} equivalent"
    if count("compile error"):
        line += f", {count('compile error')} compile error(s)"
    if count("equivalent but caught"):
        line += f", {count('equivalent but caught')} documented equivalent but caught"
    timeouts = sum(o.timeout for o in outcomes.values())
    if timeouts:
        line += f" ({timeouts} caught by timeout)"
    return line


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--list", action="store_true", help="list the mutations and exit")
    p.add_argument("--check", action="store_true", help="validate the list against the tree and exit")
    p.add_argument("--only", metavar="ID,...", help="run only these mutations")
    p.add_argument("--skip-equivalent", action="store_true",
                   help="do not run mutations documented as equivalent")
    p.add_argument("--mutations", default=DEFAULT_LIST, metavar="FILE",
                   help="the mutation list (default: tools/mutation/mutations.toml)")
    p.add_argument("--work", metavar="DIR",
                   help="keep the scratch tree and its build here and reuse them next time "
                        "(default: a temporary directory, removed at the end)")
    p.add_argument("-j", "--jobs", type=int, default=2,
                   help="parallel compile jobs and test processes (default 2)")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="seconds the suite may take under one mutant before it counts as caught "
                        "(timeout) (default: 4 x the unmutated suite's time, at least 120)")
    p.add_argument("--build-timeout", type=float, default=900, metavar="S",
                   help="seconds one rebuild may take (default 900)")
    p.add_argument("--maxfail", type=int, default=0, metavar="N",
                   help="stop the suite after N failing tests (faster; 'caught by' then lists "
                        "only those); default 0 = run every test")
    p.add_argument("--report", metavar="FILE", help="also write the results as a Markdown table")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show build and test output of failures")
    return p.parse_args(argv)


class Interrupted(Exception):
    pass


def main(argv):
    args = parse_args(argv)
    try:
        mutations = load_list(args.mutations)
        tracked = tracked_files(REPO)
        check_against_tree(mutations, REPO, tracked)
    except ListError as e:
        print(f"mutate.py: bad mutation list:\n{e}", file=sys.stderr)
        return 2
    if args.only:
        wanted = [s.strip() for s in args.only.split(",") if s.strip()]
        known = {m.id for m in mutations}
        unknown = [w for w in wanted if w not in known]
        if unknown:
            print(f"mutate.py: unknown mutation id(s): {', '.join(unknown)} (see --list)",
                  file=sys.stderr)
            return 2
        mutations = [m for m in mutations if m.id in wanted]
    if args.skip_equivalent:
        mutations = [m for m in mutations if not m.equivalent]
    if args.list:
        for m in mutations:
            eq = "  [equivalent]" if m.equivalent else ""
            print(f"{m.id:34} {m.file}:{m.line}  {m.description}{eq}")
        print(f"{len(mutations)} mutations")
        return 0
    if args.check:
        print(f"{len(mutations)} mutations, every original found exactly once")
        return 0

    # SIGTERM ends the run like Ctrl-C: clean up, restore, report what ran.
    def on_term(signum, frame):
        raise Interrupted()
    signal.signal(signal.SIGTERM, on_term)

    runner = Runner(args.verbose)
    scratch = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="clustersim-mutate-")
    if os.path.realpath(scratch).startswith(os.path.realpath(REPO) + os.sep) or \
            os.path.realpath(scratch) == os.path.realpath(REPO):
        print("mutate.py: --work must be outside the source tree", file=sys.stderr)
        return 2
    builddir = os.path.join(scratch, "build-mutate")
    outcomes = {}
    t_start = time.monotonic()
    status = 0
    try:
        os.makedirs(scratch, exist_ok=True)
        sync_tree(REPO, tracked, scratch)
        if not os.path.exists(os.path.join(builddir, "build.ninja")):
            rc, out = runner.run(["meson", "setup", builddir, "--buildtype=debug"], scratch, 600)
            if rc != 0:
                print(f"mutate.py: meson setup failed:\n{out[-3000:]}", file=sys.stderr)
                return 2
        print(f"scratch tree {scratch}; building and running the unmutated suite", flush=True)
        ok, out = build(runner, builddir, args.jobs, args.build_timeout)
        if not ok:
            print(f"mutate.py: the unmutated tree does not build:\n{out[-3000:]}", file=sys.stderr)
            return 2
        failing, timed_out, base_s = run_suite(runner, builddir, args.jobs, None, 0)
        if failing:
            print(f"mutate.py: the unmutated suite fails ({', '.join(failing)}): fix that first; "
                  "a mutant cannot be judged against a red suite", file=sys.stderr)
            return 2
        suite_timeout = args.timeout or max(120.0, 4 * base_s)
        print(f"unmutated suite: {base_s:.0f} s; per-mutant suite timeout {suite_timeout:.0f} s; "
              f"{len(mutations)} mutations", flush=True)
        width = max((len(m.id) for m in mutations), default=0)
        for i, m in enumerate(mutations, 1):
            o = test_mutation(m, scratch, builddir, runner, args, suite_timeout)
            outcomes[m.id] = o
            print(f"[{i:{len(str(len(mutations)))}}/{len(mutations)}] {m.id:{width}}  "
                  f"{outcome_text(o)}  ({o.seconds:.0f} s)", flush=True)
            if o.status == "survived":
                print(f"      {m.file}:{m.line}: {m.description}", flush=True)
    except (KeyboardInterrupt, Interrupted):
        runner.kill()
        print("\nmutate.py: interrupted; results so far:", file=sys.stderr)
        status = 130
    finally:
        if not args.work:
            shutil.rmtree(scratch, ignore_errors=True)
    wall = time.monotonic() - t_start
    print(f"{summary_line(outcomes)}; wall time {wall / 60:.1f} min ({len(outcomes)} of "
          f"{len(mutations)} mutations run)")
    survivors = [mid for mid, o in outcomes.items() if o.status == "survived"]
    if survivors:
        print("survived: " + ", ".join(survivors))
    if args.report:
        write_report(args.report, mutations, outcomes, wall)
    if status:
        return status
    bad = {"survived", "compile error", "equivalent but caught"}
    return 1 if any(o.status in bad for o in outcomes.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
