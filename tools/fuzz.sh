#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz (docs/testing.md, "Fuzzing")
# with clang, AddressSanitizer and UndefinedBehaviorSanitizer in build-fuzz,
# and runs each for a bounded time on a copy of its committed corpus.
#
#   tools/fuzz.sh [--seconds N] [--jobs N] [--replay] [HARNESS...]
#
#   --seconds N  fuzzing time per harness (default 60); a long run is the same
#                with a big N (e.g. 14400 for four hours each)
#   --jobs N     parallel fuzzing processes per harness, and compile jobs
#                (default: one process; compile jobs as ninja chooses)
#   --replay     no fuzzing: run each harness once over its committed corpus
#   HARNESS      fuzz_scenario, fuzz_set, ... or the short name (scenario,
#                set, ...); default: all of them
#
# Prints one line per harness with the executions (from libFuzzer's final
# statistics); exits 1 when any harness found a crash, a leak, a timeout or
# an out-of-memory, naming the reproducer it wrote. The working corpora
# (committed seeds plus what the fuzzer adds) and reproducers stay under
# build-fuzz/fuzz/HARNESS/; the repository is never written.
set -euo pipefail
cd "$(dirname "$0")/.."

ALL=(fuzz_scenario fuzz_set fuzz_simulate fuzz_profile fuzz_network fuzz_interference
     fuzz_maf2019 fuzz_maf2021 fuzz_azure_llm fuzz_decisions fuzz_measured fuzz_dispatch
     fuzz_vidur_trace)
seconds=60 jobs=1 replay=0 harnesses=() ninja_jobs=()
usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) [ $# -ge 2 ] || usage; seconds=$2; shift 2 ;;
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; ninja_jobs=(-j "$2"); shift 2 ;;
    --replay) replay=1; shift ;;
    -h|--help) usage ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; usage ;;
    *) h=$1; [[ $h == fuzz_* ]] || h=fuzz_$h
       [[ " ${ALL[*]} " == *" $h "* ]] || { echo "fuzz.sh: no harness $1 (${ALL[*]})" >&2; exit 2; }
       harnesses+=("$h"); shift ;;
  esac
done
[[ $seconds =~ ^[1-9][0-9]*$ && $jobs =~ ^[1-9][0-9]*$ ]] || usage
[ ${#harnesses[@]} -gt 0 ] || harnesses=("${ALL[@]}")

# The project's own dependencies, then clang with its libFuzzer and sanitizer
# runtimes (Debian 12: clang 14), as tools/install-deps.sh installs packages.
bash tools/install-deps.sh
missing=()
for p in clang libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -d build-fuzz ]; then
  CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
    --buildtype=debugoptimized >/dev/null
fi
ninja -C build-fuzz "${ninja_jobs[@]}" "${harnesses[@]/#/tests/fuzz/}" >/dev/null

# GLib's slice allocator would keep freed and leaked blocks alike in its own
# magazines: every allocation must reach malloc for LeakSanitizer to see it.
# GLib reads this when it loads (a harness started without it restarts itself).
export G_SLICE=always-malloc G_DEBUG=gc-friendly
# A UBSan report is a finding, not a note: stop there so libFuzzer saves the input.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1
export CS_SOURCE_ROOT=$PWD
# The harnesses' input files (and libFuzzer's fork-mode files): a harness that
# crashes cannot remove its own, so they stay in the build directory.
export TMPDIR=$PWD/build-fuzz/fuzz/tmp
rm -rf "$TMPDIR"
mkdir -p "$TMPDIR"

dict_of() {
  case "$1" in
    fuzz_maf2019|fuzz_maf2021|fuzz_azure_llm|fuzz_measured|fuzz_vidur_trace) echo tests/fuzz/dict/csv.dict ;;
    fuzz_dispatch) ;; # a script of calls in bytes: no words to suggest
    *) echo tests/fuzz/dict/json.dict ;;
  esac
}

failed=0
for h in "${harnesses[@]}"; do
  exe=build-fuzz/tests/fuzz/$h
  work=build-fuzz/fuzz/$h
  mkdir -p "$work/corpus"
  log=$work/last.log
  if [ "$replay" -eq 1 ]; then
    set +e
    ("$exe" -runs=0 -timeout=10 -rss_limit_mb=2048 tests/fuzz/corpus/"$h"/* >"$log" 2>&1) 2>/dev/null
    rc=$?
    set -e
    n=$(find tests/fuzz/corpus/"$h" -type f | wc -l)
    if [ $rc -eq 0 ]; then
      printf '%-18s replayed %d seeds: ok\n' "$h" "$n"
    else
      printf '%-18s replay FAILED (exit %d), log %s:\n' "$h" "$rc" "$log"
      grep -E '^(==[0-9]+== ?ERROR|SUMMARY|fuzz: property|Running:|.*runtime error)' "$log" | head -5 || true
      failed=1
    fi
    continue
  fi
  # The committed seeds join the working corpus; what earlier runs found stays.
  cp -n tests/fuzz/corpus/"$h"/* "$work/corpus/"
  before=$(date +%s)
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048
        -artifact_prefix="$work/" -print_final_stats=1)
  dict=$(dict_of "$h")
  [ -z "$dict" ] || args+=(-dict="$dict")
  # Scenarios and logs may grow to 10^5-element arrays (a reader that indexes
  # its lists takes seconds there: issue 34); libFuzzer would keep inputs
  # below the largest seed, 4 KiB for most.
  case "$h" in
    fuzz_scenario|fuzz_set|fuzz_simulate|fuzz_decisions) args+=(-max_len=1048576) ;;
  esac
  [ "$jobs" -le 1 ] || args+=(-fork="$jobs")
  # In a subshell whose stderr is dropped: bash's own "Aborted" line for a
  # harness killed by a signal says nothing the log does not.
  set +e
  ("$exe" "${args[@]}" "$work/corpus" >"$log" 2>&1) 2>/dev/null
  rc=$?
  set -e
  execs=$({ grep -o 'stat::number_of_executed_units: [0-9]*' "$log" || true; } \
          | awk '{s += $2} END {print s + 0}')
  if [ "$execs" -eq 0 ]; then
    # Fork mode prints no final statistics: take the last status line.
    execs=$({ grep -oE '^#[0-9]+' "$log" || true; } | tail -1 | tr -d '#')
    execs=${execs:-0}
  fi
  elapsed=$(( $(date +%s) - before ))
  corpus=$(find "$work/corpus" -type f | wc -l)
  artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
  if [ $rc -eq 0 ]; then
    printf '%-18s %10d executions in %4d s (%d/s), corpus %d files: ok\n' "$h" "$execs" \
      "$elapsed" $(( execs / (elapsed > 0 ? elapsed : 1) )) "$corpus"
  else
    printf '%-18s %10d executions in %4d s: FAILED (exit %d)\n' "$h" "$execs" "$elapsed" "$rc"
    grep -E '^(==[0-9]+== ?ERROR|SUMMARY|fuzz: property)|runtime error|ALARM|out-of-memory' "$log" \
      | head -5 | sed 's/^/    /' || true
    # The top frames of the project's code (libFuzzer's and the sanitizers'
    # own frames say nothing about the input). An allocation's stack is cut
    # at GLib (no frame pointers) unless unwound slowly: too slow to fuzz
    # with, so the reproducer is run once more that way.
    stack=$log
    if [ -n "$artifact" ]; then
      (ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0 "$exe" -rss_limit_mb=2048 \
        -malloc_limit_mb=2048 "$artifact" >"$work/replay.log" 2>&1) 2>/dev/null || true
      grep -qE '^ *#[0-9]+ 0x.* in [a-z_0-9]+ .*/(src|tests)/' "$work/replay.log" && stack=$work/replay.log
    fi
    grep -E '^ *#[0-9]+ 0x' "$stack" | grep -vE ' in (fuzzer::|__sanitizer|__asan|__ubsan|__interceptor|__lsan|malloc|calloc|realloc|g_[a-z_]+ )|0x[0-9a-f]+  \(' \
      | head -6 | sed -E 's/ \(BuildId: [0-9a-f]+\)//; s/^ */    /' || true
    echo "    reproducer: ${artifact:-(none written; see $log)}"
    grep -m1 -o 'INFO: Seed: [0-9]*' "$log" | sed 's/^INFO: /    libFuzzer /' || true
    # CI machines are thrown away: a small reproducer is printed so that it
    # can be recreated from the log (base64 -d).
    if [ -n "$artifact" ] && [ "$(stat -c %s "$artifact")" -le 8192 ]; then
      echo "    reproducer, base64:"
      base64 -w 100 "$artifact" | sed 's/^/      /'
    fi
    echo "    replay it:  CS_SOURCE_ROOT=$PWD $exe ${artifact:-FILE}"
    echo "    log:        $log"
    failed=1
  fi
done
exit $failed
