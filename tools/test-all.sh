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
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
  meson test -C build-asan --print-errorlogs --timeout-multiplier 4
