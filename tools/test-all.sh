#!/usr/bin/env bash
# Runs the whole test suite twice: a normal debug build, then a build with
# AddressSanitizer and UndefinedBehaviorSanitizer. Build directories:
# build-test and build-asan (created on first use).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d build-test ] || meson setup build-test --buildtype=debug >/dev/null
meson test -C build-test --print-errorlogs

[ -d build-asan ] || meson setup build-asan --buildtype=debug -Db_sanitize=address,undefined \
  -Db_lundef=false >/dev/null
# G_SLICE=always-malloc: GLib 2.74 hands small blocks out of its slice
# allocator, whose leaks LeakSanitizer cannot see; with it every block is a
# malloc of its own.
G_SLICE=always-malloc UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
  meson test -C build-asan --print-errorlogs --timeout-multiplier 4

# One closing line over both runs (meson's own summary precedes it).
python3 - build-test/meson-logs/testlog.json build-asan/meson-logs/testlog.json <<'PY'
import json, sys
passed = failed = 0
for path in sys.argv[1:]:
    with open(path) as f:
        for line in f:
            result = json.loads(line).get("result")
            if result in ("OK", "EXPECTEDFAIL", "SKIP"):
                passed += result != "SKIP"
            else:
                failed += 1
print(f"tests: {passed} passed, {failed} failed")
PY
