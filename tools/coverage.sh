#!/usr/bin/env bash
# Line and branch coverage of src/ by the whole test suite.
#
#   bash tools/coverage.sh [BUILD_DIR]     (default build-cov)
#
# Builds with -Db_coverage=true in its own build directory (created on first
# use), removes the counters of earlier runs, runs every test, and prints
# gcovr's figures for src/: overall and per area (src/cli, src/sim, ...), then
# per file for lines and for branches, each sorted from the least covered.
# Needs gcovr (Debian package gcovr).
#
# Nothing is excluded from the figures: every branch gcc emits in src/
# counts, including the ones inside g_assert, g_return_val_if_fail and
# g_clear_* expansions (their failing side is unreachable unless there is a
# bug) and the defensive checks of "cannot happen" cases. For information
# only, one more line gives the overall figure with the lines holding those
# macros left out (gcovr --exclude-lines-by-pattern): about 3 % of src/'s
# branches, half of them never taken. gcovr's --exclude-unreachable-branches
# changed nothing here, so it is not used. Test executables and bench/ are
# not measured (--filter src/).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-cov}
command -v gcovr >/dev/null || { echo "coverage.sh: gcovr is missing (apt-get install gcovr)" >&2; exit 2; }
[ -d "$build" ] || meson setup "$build" --buildtype=debug -Db_coverage=true >/dev/null
ninja -C "$build" -j2 >/dev/null
find "$build" -name '*.gcda' -delete
# A failing test still leaves its counters; report coverage, then fail.
status=0
meson test -C "$build" --num-processes 2 --print-errorlogs >"$build/coverage-tests.log" 2>&1 || status=$?
tail -n 8 "$build/coverage-tests.log"

gcovr_args=(--root . --filter 'src/' --object-directory "$build")
gcovr "${gcovr_args[@]}" --json-summary -o "$build/coverage-summary.json" "$build"
python3 - "$build/coverage-summary.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def pct(c, t):
    return 100.0 * c / t if t else 100.0
print(f"src/ overall: lines {pct(d['line_covered'], d['line_total']):.1f} % "
      f"({d['line_covered']}/{d['line_total']}), branches "
      f"{pct(d['branch_covered'], d['branch_total']):.1f} % "
      f"({d['branch_covered']}/{d['branch_total']})")
areas = {}
for f in d["files"]:
    area = "/".join(f["filename"].split("/")[:2])
    a = areas.setdefault(area, [0, 0, 0, 0])
    a[0] += f["line_covered"]; a[1] += f["line_total"]
    a[2] += f["branch_covered"]; a[3] += f["branch_total"]
print(f"{'area':<16} {'lines %':>8} {'branches %':>11} {'branches':>11}")
for area, a in sorted(areas.items(), key=lambda kv: pct(kv[1][2], kv[1][3])):
    print(f"{area:<16} {pct(a[0], a[1]):8.1f} {pct(a[2], a[3]):11.1f} {a[2]:>5}/{a[3]:<5}")
print()
print(f"{'file':<36} {'lines %':>8} {'branches %':>11} {'branches':>11}")
for f in sorted(d["files"], key=lambda f: (pct(f["branch_covered"], f["branch_total"]), f["filename"])):
    print(f"{f['filename']:<36} {pct(f['line_covered'], f['line_total']):8.1f} "
          f"{pct(f['branch_covered'], f['branch_total']):11.1f} "
          f"{f['branch_covered']:>5}/{f['branch_total']:<5}")
PY
assert_re='.*\b(g_assert[a-z_]*|g_return_val_if_fail|g_return_if_fail|g_clear_[a-z_]*)\s*\(.*'
gcovr "${gcovr_args[@]}" --exclude-lines-by-pattern "$assert_re" --json-summary \
  -o "$build/coverage-summary-noassert.json" "$build"
python3 - "$build/coverage-summary-noassert.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"(information: without the g_assert/g_return_*/g_clear_* lines, src/ branches "
      f"{100.0 * d['branch_covered'] / d['branch_total']:.1f} % "
      f"({d['branch_covered']}/{d['branch_total']}))")
PY
echo
echo "Missing lines per file (gcovr, sorted by uncovered lines):"
gcovr "${gcovr_args[@]}" --sort-percentage "$build"
echo "Missing branches per file (gcovr -b, sorted by uncovered branches):"
gcovr "${gcovr_args[@]}" --branches --sort-percentage "$build"
exit $status
