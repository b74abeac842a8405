#!/usr/bin/env bash
# Checks that a sweep split into shards by the shipped recipes merges into
# exactly the unsharded outputs (docs/experiments.md, "Beyond one machine").
# The experiment is tests/experiment/shard_check.json (27 runs, 3 of them
# invalid, so the exit status 1 of a shard is carried through too).
#  1. GNU parallel on this machine, always: tools/sweep-parallel.sh with 4
#     shards 2 at a time; its merged outputs == the unsharded sweep's, byte for
#     byte (diff -r), with the same table and exit status; and a shard that
#     fails stops the script before the merge (exit 2).
#  2. Slurm, when CI=true or with --slurm (as root): installs slurmctld,
#     slurmd, slurm-client and munge with apt-get if missing, starts munged
#     (unless one already answers), then slurmctld and slurmd with a
#     single-node configuration in a temporary directory (ports 16817 and
#     16818), submits through tools/slurm/submit.sh --wait (a job array of 4
#     shards and the merge job after it), compares its merged outputs the same
#     way, checks that a failing shard cancels the merge instead of leaving it
#     pending, then stops the daemons it started and removes the directory.
# Not tested here: GNU parallel across hosts (--sshlogin), a real multi-node
# Slurm cluster.
#
# Exit status: 1 when a recipe's merged outputs differ from the unsharded ones
# or a recipe fails while its engine works; 0 otherwise. When Slurm cannot be
# installed, started or made to run a trivial job, a SKIPPED line says what
# failed and what was not tested, and the Slurm part does not count.
#
# Usage: tools/check-shards.sh [--slurm | --no-slurm] [--keep] [BUILD_DIR]
#        (BUILD_DIR default build-test, configured here if missing; --keep
#        keeps the temporary directory: outputs, job logs, Slurm's logs)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
root=$PWD
prog=check-shards

slurm=no
[ "${CI:-}" = true ] && slurm=yes
build=build-test
keep=
for a in "$@"; do
  case $a in
    --slurm) slurm=yes ;;
    --no-slurm) slurm=no ;;
    --keep) keep=1 ;;
    -*) echo "usage: tools/check-shards.sh [--slurm | --no-slurm] [--keep] [BUILD_DIR]" >&2; exit 2 ;;
    *) build=$a ;;
  esac
done

t0=$SECONDS
say() { echo "$prog: $*"; }
elapsed() { echo "$((SECONDS - ${1:-$t0})) s"; }
failures=0
fail() { echo "$prog: FAIL: $*"; failures=$((failures + 1)); }

tmp=$(mktemp -d)
policy_rc=
slurm_pids=()
munged_pid=
cleanup() {
  stop_slurm
  [ -z "$policy_rc" ] || rm -f "$policy_rc"
  if [ -n "$keep" ]; then echo "$prog: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ ! -d "$build" ]; then
  meson setup "$build" --buildtype=debug >/dev/null || { echo "$prog: meson setup $build failed" >&2; exit 1; }
fi
ninja -C "$build" src/cli/clustersim >/dev/null || { echo "$prog: building $build failed" >&2; exit 1; }
bin=$(cd "$build" && pwd)/src/cli/clustersim
exp=$root/tests/experiment/shard_check.json

# ---- the reference: the unsharded sweep -------------------------------------------
"$bin" sweep "$exp" -j2 -o "$tmp/unsharded" >"$tmp/unsharded.out" 2>"$tmp/unsharded.err"
ref_status=$?
if [ "$ref_status" -gt 1 ] || [ ! -f "$tmp/unsharded/runs.csv" ]; then
  cat "$tmp/unsharded.err"
  echo "$prog: the unsharded sweep failed (exit $ref_status): nothing to compare with" >&2
  exit 1
fi
n_runs=$(python3 -c "import json; print(json.load(open('$tmp/unsharded/sweep.json'))['runs'])")
n_invalid=$(grep -c ',invalid,' "$tmp/unsharded/runs.csv")
say "unsharded: $n_runs runs ($n_invalid invalid), exit status $ref_status, $(ls "$tmp/unsharded" | wc -l) files"

# same NAME MERGED_DIR STATUS LOG: the merged outputs, the exit status and the
# table printed (somewhere in LOG) equal the unsharded sweep's.
same() {
  local name=$1 dir=$2 status=$3 log=$4 ok=1
  if [ ! -d "$dir" ]; then
    fail "$name: no merged outputs ($dir missing; exit status $status)"
    tail -n 20 "$log" | sed 's/^/    /'
    return
  fi
  if ! diff -r "$tmp/unsharded" "$dir" >"$tmp/diff" 2>&1; then
    fail "$name: merged outputs differ from the unsharded ones:"
    head -n 20 "$tmp/diff" | sed 's/^/    /'
    ok=
  fi
  if [ "$status" -ne "$ref_status" ]; then
    fail "$name: exit status $status, the unsharded sweep's $ref_status"
    ok=
  fi
  local lines
  lines=$(wc -l <"$tmp/unsharded.out")
  if ! awk -v n="$lines" '/^goodput_rps of total/ { p = n } p-- > 0' "$log" | cmp -s - "$tmp/unsharded.out"; then
    fail "$name: the printed table differs from the unsharded sweep's"
    ok=
  fi
  [ -z "$ok" ] || say "$name: merged == unsharded, byte for byte ($(ls "$dir" | tr '\n' ' '| sed 's/ $//')), same table, same exit status $status: ok"
}

# ---- GNU parallel -----------------------------------------------------------------
t=$SECONDS
CLUSTERSIM=$bin tools/sweep-parallel.sh "$exp" "$tmp/parallel" 4 -j2 >"$tmp/parallel.out" 2>&1
same "GNU parallel (4 shards, -j2)" "$tmp/parallel/merged" $? "$tmp/parallel.out"

# A shard that fails (here: exit 2 for shard 2) stops the recipe before the merge.
cat >"$tmp/failing-clustersim" <<EOF
#!/bin/sh
case " \$* " in *" --shard 2/4 "*) echo "simulated failure of shard 2" >&2; exit 2 ;; esac
exec "$bin" "\$@"
EOF
chmod +x "$tmp/failing-clustersim"
CLUSTERSIM=$tmp/failing-clustersim tools/sweep-parallel.sh "$exp" "$tmp/parallel-fail" 4 -j2 >"$tmp/parallel-fail.out" 2>&1
st=$?
if [ "$st" -eq 2 ] && [ ! -e "$tmp/parallel-fail/merged" ] && grep -q "shards failed: 2 (exit 2, signal 0, host :)$" "$tmp/parallel-fail.out"; then
  say "GNU parallel: a failing shard is named and nothing is merged (exit 2): ok"
else
  fail "GNU parallel: shard 2 failing: expected exit status 2, shard 2 named, nothing merged; got exit status $st, merged: $([ -e "$tmp/parallel-fail/merged" ] && echo written || echo none)"
  tail -n 5 "$tmp/parallel-fail.out" | sed 's/^/    /'
fi
say "GNU parallel $(parallel --version 2>/dev/null | head -n 1 | awk '{print $3}'): $(elapsed "$t")"

# ---- Slurm ------------------------------------------------------------------------
sdir=
slurm_tested="Slurm: not tested (neither CI=true nor --slurm)"
slurm_skip() {
  slurm_tested="Slurm: SKIPPED ($*)"
  echo "$prog: SKIPPED Slurm: $*"
  echo "$prog: not tested: tools/slurm/submit.sh, sweep.sbatch and merge.sbatch under Slurm" \
       "(the GNU parallel results above stand)"
}

stop_slurm() {
  [ ${#slurm_pids[@]} -gt 0 ] || [ -n "$munged_pid" ] || return 0
  [ -z "$sdir" ] || SLURM_CONF=$sdir/slurm.conf timeout 10 scancel --quiet --state=PENDING,RUNNING --user=root 2>/dev/null
  local p
  for p in "${slurm_pids[@]}" $munged_pid; do kill "$p" 2>/dev/null; done
  for _ in $(seq 1 50); do
    local alive=
    for p in "${slurm_pids[@]}" $munged_pid; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ -n "$alive" ] || break
    sleep 0.2
  done
  for p in "${slurm_pids[@]}" $munged_pid; do
    kill -0 "$p" 2>/dev/null && { echo "$prog: pid $p did not stop on SIGTERM: SIGKILL"; kill -9 "$p" 2>/dev/null; }
  done
  slurm_pids=()
  munged_pid=
}

# Installs (if needed) and starts munge and a single-node Slurm; on failure,
# prints the SKIPPED line and returns 1.
start_slurm() {
  if [ "$(id -u)" -ne 0 ]; then
    slurm_skip "not root: installing the packages and starting slurmctld, slurmd and munged need root"
    return 1
  fi
  local pkgs=(slurmctld slurmd slurm-client munge) missing=() p
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    local ts=$SECONDS
    # The packages' scripts would start the daemons with the system's (absent)
    # configuration: policy-rc.d keeps them from it during the installation.
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d &&
        policy_rc=/usr/sbin/policy-rc.d
    fi
    if ! { DEBIAN_FRONTEND=noninteractive timeout 300 apt-get update -qq &&
           DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
           >"$tmp/apt.log" 2>&1; then
      tail -n 5 "$tmp/apt.log" | sed 's/^/    /'
      slurm_skip "apt-get could not install ${missing[*]} (last lines above)"
      return 1
    fi
    [ -z "$policy_rc" ] || { rm -f "$policy_rc"; policy_rc=; }
    say "installed ${missing[*]} in $(elapsed "$ts")"
  fi

  # munge: reuse a munged that answers, else start one (it refuses to run as root).
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    say "munge: a running munged answers: using it"
  else
    mkdir -p /run/munge && chown munge: /run/munge && chmod 0755 /run/munge
    if [ ! -s /etc/munge/munge.key ]; then
      runuser -u munge -- mungekey --create >/dev/null 2>&1 ||
        { slurm_skip "munge: no /etc/munge/munge.key and mungekey --create failed"; return 1; }
    fi
    rm -f /run/munge/munged.pid
    if ! runuser -u munge -- munged >"$tmp/munged.out" 2>&1; then
      sed 's/^/    /' "$tmp/munged.out"
      slurm_skip "munged did not start (above)"
      return 1
    fi
    munged_pid=$(cat /run/munge/munged.pid 2>/dev/null)
    if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
      slurm_skip "munged started but munge -n | unmunge fails"
      return 1
    fi
  fi

  sdir=$tmp/slurm
  mkdir -p "$sdir/state" "$sdir/spool" "$sdir/log"
  local host
  host=$(hostname -s)
  cat >"$sdir/slurm.conf" <<EOF
# A single-node Slurm for tools/check-shards.sh.
ClusterName=clustersim-check
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$sdir/state
SlurmdSpoolDir=$sdir/spool
SlurmctldPidFile=$sdir/slurmctld.pid
SlurmdPidFile=$sdir/slurmd.pid
SlurmctldLogFile=$sdir/log/slurmctld.log
SlurmdLogFile=$sdir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$sdir/slurm.conf
  if ! slurmctld -f "$SLURM_CONF" >"$sdir/log/slurmctld.out" 2>&1; then
    tail -n 5 "$sdir/log/slurmctld.out" "$sdir/log/slurmctld.log" 2>/dev/null | sed 's/^/    /'
    slurm_skip "slurmctld did not start (above)"
    return 1
  fi
  sleep 0.5
  [ -s "$sdir/slurmctld.pid" ] && slurm_pids+=("$(cat "$sdir/slurmctld.pid")")
  if ! slurmd -f "$SLURM_CONF" >"$sdir/log/slurmd.out" 2>&1; then
    tail -n 5 "$sdir/log/slurmd.out" "$sdir/log/slurmd.log" 2>/dev/null | sed 's/^/    /'
    slurm_skip "slurmd did not start (above)"
    return 1
  fi
  sleep 0.5
  [ -s "$sdir/slurmd.pid" ] && slurm_pids+=("$(cat "$sdir/slurmd.pid")")

  local state=
  for _ in $(seq 1 30); do
    state=$(sinfo -h -N -o '%T' 2>/dev/null | head -n 1)
    [ "$state" = idle ] && break
    sleep 1
  done
  if [ "$state" != idle ]; then
    tail -n 5 "$sdir/log/slurmctld.log" "$sdir/log/slurmd.log" 2>/dev/null | sed 's/^/    /'
    slurm_skip "the node is not idle 30 s after starting slurmctld and slurmd (sinfo: '${state:-no answer}'; logs above)"
    return 1
  fi
  # A trivial job: Slurm itself runs jobs, so what fails next is the recipe's.
  if ! timeout 60 sbatch --wait --quiet --output=/dev/null --wrap true >/dev/null 2>"$tmp/probe.err"; then
    sed 's/^/    /' "$tmp/probe.err"
    slurm_skip "the node is idle but a trivial job (sbatch --wait --wrap true) failed or took over 60 s"
    return 1
  fi
  say "Slurm $(sinfo --version | awk '{print $2}'): single node $host up, a trivial job ran"
  return 0
}

if [ "$slurm" = no ]; then
  say "$slurm_tested"
else
  t=$SECONDS
  if start_slurm; then
    slurm_tested="Slurm: tested on a single node"
    say "Slurm started in $(elapsed "$t")"
    t=$SECONDS
    CLUSTERSIM=$bin timeout 180 tools/slurm/submit.sh --wait "$exp" "$tmp/slurm-out" 4 --time=10 \
      >"$tmp/slurm.out" 2>&1
    st=$?
    [ "$st" -ne 124 ] || echo "    submit.sh --wait did not return within 180 s; squeue: $(squeue -h -o '%i %T %r' | tr '\n' ';')"
    same "Slurm (job array of 4 shards, merge job afterok)" "$tmp/slurm-out/merged" "$st" "$tmp/slurm.out"
    say "Slurm sweep: $(elapsed "$t")"

    t=$SECONDS
    CLUSTERSIM=$tmp/failing-clustersim timeout 120 tools/slurm/submit.sh --wait "$exp" "$tmp/slurm-fail" 4 --time=10 \
      >"$tmp/slurm-fail.out" 2>&1
    st=$?
    if [ "$st" -eq 2 ] && [ ! -e "$tmp/slurm-fail/merged" ] && grep -q "shards failed or did not finish: 2 (logs" "$tmp/slurm-fail.out" &&
       [ -z "$(squeue -h)" ]; then
      say "Slurm: a failing shard is named, the merge job is cancelled, not left pending (exit 2): ok ($(elapsed "$t"))"
    else
      fail "Slurm: shard 2 failing: expected exit status 2, only shard 2 named, nothing merged, an empty queue; got exit status $st, merged: $([ -e "$tmp/slurm-fail/merged" ] && echo written || echo none), queue: '$(squeue -h -o '%i %T %r' | tr '\n' ';')'"
      tail -n 5 "$tmp/slurm-fail.out" | sed 's/^/    /'
    fi
    stop_slurm
    say "Slurm daemons stopped"
  fi
fi

if [ "$failures" -gt 0 ]; then
  say "$failures check(s) FAILED ($(elapsed))"
  exit 1
fi
say "sharded sweeps merge into the unsharded outputs: ok ($(elapsed))"
say "tested: GNU parallel on this machine; $slurm_tested"
say "not tested: GNU parallel across hosts (--sshlogin), a multi-node Slurm cluster"
