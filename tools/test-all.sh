#!/usr/bin/env bash
# Runs the whole test suite twice: a normal debug build, then a build with
# AddressSanitizer and UndefinedBehaviorSanitizer. Build directories:
# build-test and build-asan (created on first use).
#
# Both passes always run, whatever the first gave, and the last line is one
# count over both, `tests: N passed, M failed` (CI reads it; a skip fails
# under CI=true, where every optional package is installed): a pass whose
# setup or build fails counts as one failure and is named above that line.
# Exits 1 when anything failed. docs/testing.md ("Under load") says how
# the suite copes with a busy machine.
set -uo pipefail
cd "$(dirname "$0")/.."

broken=()   # passes that could not run their tests: "NAME (why)"
logs=()     # testlog.json of each pass that ran
status=0

# pass NAME BUILD_DIR SETUP_ARGS... -- TEST_ARGS...: sets up and builds
# BUILD_DIR when needed, then runs meson test with TEST_ARGS.
pass() {
  local name=$1 dir=$2
  shift 2
  local setup=()
  while [ "$1" != "--" ]; do
    setup+=("$1")
    shift
  done
  shift
  echo "== $name ($dir)"
  if [ ! -f "$dir/build.ninja" ] && ! meson setup "$dir" "${setup[@]}" >/dev/null; then
    broken+=("$name (meson setup $dir failed)")
    status=1
    return
  fi
  # Build first, on its own: a compile error is then named as such instead
  # of drowning in meson test's output.
  if ! ninja -C "$dir" >"$dir/test-all-build.log" 2>&1; then
    tail -n 40 "$dir/test-all-build.log" >&2
    broken+=("$name (build failed, $dir/test-all-build.log)")
    status=1
    return
  fi
  rm -f "$dir/meson-logs/testlog.json"
  meson test -C "$dir" --print-errorlogs "$@" || status=1
  if [ -f "$dir/meson-logs/testlog.json" ]; then
    logs+=("$dir/meson-logs/testlog.json")
  else
    broken+=("$name (meson test wrote no testlog.json)")
    status=1
  fi
}

pass debug build-test --buildtype=debug --

# G_SLICE=always-malloc: GLib 2.74 hands small blocks out of its slice
# allocator, whose leaks LeakSanitizer cannot see; with it every block is a
# malloc of its own. --timeout-multiplier 4: the sanitizers make the tests
# 2-3 times slower (each timeout in tests/**/meson.build is already ten
# times the debug build's measured cost; docs/testing.md).
G_SLICE=always-malloc UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
  pass sanitizers build-asan --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false \
  -- --timeout-multiplier 4

# One closing line over both passes (meson's own summaries precede it).
python3 - "${#broken[@]}" "${broken[@]}" "${logs[@]}" <<'PY'
import json, os, sys
n_broken = int(sys.argv[1])
broken, logs = sys.argv[2:2 + n_broken], sys.argv[2 + n_broken:]
ci = os.environ.get("CI", "") == "true"
passed = failed = skipped = 0
names = []
for path in logs:
    with open(path) as f:
        for line in f:
            t = json.loads(line)
            result = t.get("result")
            if result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                # A test skips only when an optional package is missing
                # (its log says which); CI installs every one of them
                # (tools/install-deps.sh), so there a skip is a missing
                # install step and fails the run.
                skipped += 1
                names.append(f"{'failed' if ci else 'skipped'}: {t.get('name')} (SKIP"
                             f"{', under CI=true, where nothing may skip' if ci else ''})")
                failed += ci
            else:
                failed += 1
                names.append(f"failed: {t.get('name')} ({result})")
for b in broken:
    print(f"not run: {b}")
    failed += 1
for n in names:
    print(n)
print(f"tests: {passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if failed else 0)
PY
[ $? -eq 0 ] || status=1
exit "$status"
