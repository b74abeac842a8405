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
#  3. GNU parallel across hosts (-S, over ssh), when CI=true or with --ssh
#     (as root): installs openssh-server, openssh-client, rsync and iproute2
#     if missing; makes two network namespaces joined by a veth pair (private
#     addresses 10.213.84.1 and .2, in those namespaces only; where namespaces
#     cannot be made, 127.0.0.1, and the output says so); starts, in the
#     host's namespace, two sshds with a host key, an authorized key and
#     configurations of their own in the temporary directory (ports 16822,
#     16823; /etc/ssh and ~/.ssh are not used: ssh -F), the second in a mount
#     namespace of its own with a tmpfs over its output directory, so that its
#     files are not visible here. From the client namespace it runs the two
#     recipes of docs/experiments.md with 4 shards on `:` (this machine) and
#     the host: shared filesystem (-S 1/:,2/host) and no shared filesystem
#     (the same plus --return of each shard's two files and --cleanup). Each
#     merge is compared as above; the job logs must show shards on both; the
#     second host's tmpfs must be empty after --cleanup. Then it stops the
#     sshds and removes the namespaces.
# Not tested here: hosts that are separate machines (their own filesystems,
# paths, builds, ssh setups), a real multi-node Slurm cluster.
#
# Exit status: 1 when a recipe's merged outputs differ from the unsharded ones
# or a recipe fails while its engine works; 0 otherwise. When Slurm, or the
# ssh host, cannot be installed, started or made to answer, a SKIPPED line
# says what failed and what was not tested, and that part does not count.
#
# Usage: tools/check-shards.sh [--slurm | --no-slurm] [--ssh | --no-ssh] [--keep] [BUILD_DIR]
#        (BUILD_DIR default build-test, configured here if missing; --keep
#        keeps the temporary directory: outputs, job logs, Slurm's and
#        sshd's logs)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
root=$PWD
prog=check-shards

slurm=no
ssh=no
[ "${CI:-}" = true ] && slurm=yes && ssh=yes
build=build-test
keep=
for a in "$@"; do
  case $a in
    --slurm) slurm=yes ;;
    --no-slurm) slurm=no ;;
    --ssh) ssh=yes ;;
    --no-ssh) ssh=no ;;
    --keep) keep=1 ;;
    -*) echo "usage: tools/check-shards.sh [--slurm | --no-slurm] [--ssh | --no-ssh] [--keep] [BUILD_DIR]" >&2; exit 2 ;;
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
  ! declare -F stop_slurm >/dev/null || stop_slurm
  ! declare -F stop_ssh >/dev/null || stop_ssh
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

# apt_install PACKAGE...: installs those that are missing (as root). When
# apt-get fails, shows its last lines, names them in $apt_failed, returns 1.
apt_updated=
apt_failed=
apt_install() {
  local missing=() p ts=$SECONDS
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  # The packages' scripts would start their daemons with the system's
  # configuration: policy-rc.d keeps them from it during the installation.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d &&
      policy_rc=/usr/sbin/policy-rc.d
  fi
  if ! { { [ -n "$apt_updated" ] || DEBIAN_FRONTEND=noninteractive timeout 300 apt-get update -qq; } &&
         apt_updated=1 &&
         DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
         >"$tmp/apt.log" 2>&1; then
    tail -n 5 "$tmp/apt.log" | sed 's/^/    /'
    apt_failed=${missing[*]}
    return 1
  fi
  [ -z "$policy_rc" ] || { rm -f "$policy_rc"; policy_rc=; }
  say "installed ${missing[*]} in $(elapsed "$ts")"
}

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
  apt_install slurmctld slurmd slurm-client munge ||
    { slurm_skip "apt-get could not install $apt_failed (last lines above)"; return 1; }

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

# ---- GNU parallel across hosts (ssh) ----------------------------------------------
# The other "host" is an sshd started here, in a network namespace of its own
# joined to the client's (another namespace, where the recipes run) by a veth
# pair: shards cross a network link. Two sshds on it: "shared" sees this
# machine's files; "private" runs in a mount namespace of its own with a tmpfs
# over the output directory, so that what its shards write is not visible here
# (--return must bring it back; --cleanup must leave that tmpfs empty).
# Everything (keys, sshd and ssh configuration, known_hosts) is in $tmp/ssh.
ssh_tested="GNU parallel across hosts: not tested (neither CI=true nor --ssh)"
sshd_pids=()
ssh_netns=()
ssh_netns_dir=
ssh_privsep=
ssh_client=()
ssh_link=
declare -A ssh_ports=([shared]=16822 [private]=16823)
ssh_skip() {
  ssh_tested="GNU parallel across hosts: SKIPPED ($*)"
  echo "$prog: SKIPPED ssh: $*"
  echo "$prog: not tested: tools/sweep-parallel.sh across hosts (-S over ssh; --return and --cleanup" \
       "without a shared filesystem) (the results above stand)"
}

stop_ssh() {
  [ ${#sshd_pids[@]} -gt 0 ] || [ ${#ssh_netns[@]} -gt 0 ] || [ -n "$ssh_privsep" ] || return 0
  # The sshds, then whatever still runs in the namespaces made here (a
  # session, a shard, after an interrupt).
  local p ns pids=("${sshd_pids[@]}")
  for ns in "${ssh_netns[@]}"; do mapfile -t -O "${#pids[@]}" pids < <(ip netns pids "$ns" 2>/dev/null); done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for _ in $(seq 1 25); do
    local alive=
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ -n "$alive" ] || break
    sleep 0.2
  done
  for p in "${pids[@]}"; do
    kill -0 "$p" 2>/dev/null && { echo "$prog: pid $p did not stop on SIGTERM: SIGKILL"; kill -9 "$p" 2>/dev/null; }
  done
  # The private tmpfs went with the last process of its mount namespace.
  for ns in "${ssh_netns[@]}"; do ip netns del "$ns" 2>/dev/null; done
  # ip netns add made /run/netns (a mount) when there was none: undo that too.
  if [ -n "$ssh_netns_dir" ] && [ -z "$(ls -A /run/netns 2>/dev/null)" ]; then
    umount /run/netns 2>/dev/null
    rmdir /run/netns 2>/dev/null
  fi
  [ -z "$ssh_privsep" ] || rmdir "$ssh_privsep" 2>/dev/null
  sshd_pids=() ssh_netns=() ssh_netns_dir='' ssh_privsep=''
}

# ssh_run HOST COMMAND...: ssh from the client side with the check's
# configuration, at most 15 s.
ssh_run() { timeout 15 "${ssh_client[@]}" ssh -F "$tmp/ssh/config" "$@" </dev/null; }

# Installs (if needed) and starts the second host; on failure, prints the
# SKIPPED line and returns 1.
start_ssh() {
  if [ "$(id -u)" -ne 0 ]; then
    ssh_skip "not root: installing the packages, starting sshd and making namespaces need root"
    return 1
  fi
  apt_install openssh-server openssh-client rsync iproute2 ||
    { ssh_skip "apt-get could not install $apt_failed (last lines above)"; return 1; }
  local d=$tmp/ssh
  mkdir -m 700 "$d" &&
    ssh-keygen -q -t ed25519 -N '' -C clustersim-check-host -f "$d/host_key" &&
    ssh-keygen -q -t ed25519 -N '' -C clustersim-check -f "$d/id" &&
    cp "$d/id.pub" "$d/authorized_keys" ||
    { ssh_skip "ssh-keygen could not make the keys"; return 1; }
  # sshd's privilege separation directory (compiled in); the packages' init
  # scripts, which did not run, would make it.
  if [ ! -d /run/sshd ]; then
    mkdir -m 755 /run/sshd || { ssh_skip "cannot make /run/sshd"; return 1; }
    ssh_privsep=/run/sshd
  fi

  # The network: client namespace 10.213.84.1 <-> host namespace 10.213.84.2.
  local nsc=clustersim-check-$$-client nsh=clustersim-check-$$-host addr host_exec=()
  [ -d /run/netns ] || ssh_netns_dir=1
  ip netns add "$nsc" 2>"$d/netns.err" && ssh_netns+=("$nsc") &&
    ip netns add "$nsh" 2>>"$d/netns.err" && ssh_netns+=("$nsh")
  if [ ${#ssh_netns[@]} -eq 2 ] && {
       ip -n "$nsc" link add veth0 type veth peer name veth0 netns "$nsh" &&
       ip -n "$nsc" addr add 10.213.84.1/30 dev veth0 &&
       ip -n "$nsh" addr add 10.213.84.2/30 dev veth0 &&
       ip -n "$nsc" link set lo up && ip -n "$nsh" link set lo up &&
       ip -n "$nsc" link set veth0 up && ip -n "$nsh" link set veth0 up; } 2>>"$d/netns.err"; then
    addr=10.213.84.2
    ssh_client=(ip netns exec "$nsc")
    host_exec=(ip netns exec "$nsh")
    ssh_link="network namespaces joined by a veth pair (client 10.213.84.1, host 10.213.84.2)"
  else
    local why ns
    why=$(head -n 1 "$d/netns.err")
    for ns in "${ssh_netns[@]}"; do ip netns del "$ns" 2>/dev/null; done
    ssh_netns=()
    addr=127.0.0.1
    ssh_client=()
    ssh_link="127.0.0.1 (no network namespace: no network link crossed)"
    say "network namespaces cannot be made here (${why:-ip netns failed}): falling back to 127.0.0.1, the shards cross no network link"
  fi

  # PidFile: not the system's /run/sshd.pid. StrictModes no: the keys are
  # under /tmp, which is world-writable. UsePAM no: no login session.
  local name port
  for name in shared private; do
    port=${ssh_ports[$name]}
    cat >"$d/sshd-$name.conf" <<EOF
# The "$name" host of tools/check-shards.sh.
ListenAddress $addr:$port
HostKey $d/host_key
PidFile $d/sshd-$name.pid
AuthorizedKeysFile $d/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
PrintLastLog no
MaxStartups 64
LoginGraceTime 20
LogLevel INFO
EOF
  done
  cat >"$d/config" <<EOF
# ssh -F $d/config (no ~/.ssh, no /etc/ssh/ssh_config)
Host shared private
  HostName $addr
  User root
  IdentityFile $d/id
  IdentitiesOnly yes
  BatchMode yes
  ConnectTimeout 5
  ServerAliveInterval 5
  ServerAliveCountMax 3
  StrictHostKeyChecking no
  UserKnownHostsFile $d/known_hosts
  GlobalKnownHostsFile /dev/null
  LogLevel ERROR
Host shared
  Port ${ssh_ports[shared]}
Host private
  Port ${ssh_ports[private]}
EOF
  # -D: sshd stays in the foreground, so that $! is its pid (ip netns exec
  # and unshare exec it, and sh execs it after mounting the tmpfs).
  "${host_exec[@]}" /usr/sbin/sshd -D -f "$d/sshd-shared.conf" -E "$d/sshd-shared.log" </dev/null &
  sshd_pids+=($!)
  mkdir -p "$tmp/ssh-private"
  "${host_exec[@]}" unshare --mount --propagation private \
    sh -c 'mount -t tmpfs -o size=64m,mode=0755 clustersim-check "$1" && exec /usr/sbin/sshd -D -f "$2" -E "$3"' \
    sh "$tmp/ssh-private" "$d/sshd-private.conf" "$d/sshd-private.log" </dev/null >"$d/private.out" 2>&1 &
  sshd_pids+=($!)

  for name in shared private; do
    local ok=
    for _ in $(seq 1 25); do
      ssh_run "$name" true 2>"$d/probe-$name.err" && { ok=1; break; }
      kill -0 "${sshd_pids[0]}" 2>/dev/null && kill -0 "${sshd_pids[1]}" 2>/dev/null || break
      sleep 0.2
    done
    if [ -z "$ok" ]; then
      tail -n 5 "$d/probe-$name.err" "$d/private.out" "$d/sshd-$name.log" 2>/dev/null | sed 's/^/    /'
      ssh_skip "the $name sshd ($addr port ${ssh_ports[$name]}) did not let ssh in (above)"
      return 1
    fi
  done
  # The private host's output directory is its own: a file made there over
  # ssh is not here, and one made here is not there.
  touch "$tmp/ssh-private/.here"
  if ! ssh_run private "touch $tmp/ssh-private/.there && [ ! -e $tmp/ssh-private/.here ]" </dev/null ||
     [ -e "$tmp/ssh-private/.there" ]; then
    ssh_skip "the private host's tmpfs over $tmp/ssh-private is not private (its files are visible here, or this machine's there)"
    return 1
  fi
  rm -f "$tmp/ssh-private/.here"
  ssh_run private "rm -f $tmp/ssh-private/.there"
  say "ssh: two sshds (OpenSSH $(ssh -V 2>&1 | sed 's/^OpenSSH_\([^ ,]*\).*/\1/')) on $ssh_link; the private one's output directory is a tmpfs of its own"
  return 0
}

# ssh_ran NAME LOG WHO...: GNU parallel's job log LOG shows shards that ran on
# each WHO (an sshlogin as -S gave it); says where each shard ran.
ssh_ran() {
  local name=$1 log=$2 who where ok=1
  shift 2
  where=$(awk -F'\t' 'NR > 1 { printf "%s%s: %s", sep, $1, ($2 == ":" ? "here" : $2); sep = ", " }' "$log" 2>/dev/null)
  for who in "$@"; do
    if ! awk -F'\t' -v h="$who" 'NR > 1 && $2 == h { n++ } END { exit !n }' "$log" 2>/dev/null; then
      fail "$name: no shard ran on '$who' (job log: ${where:-none})"
      ok=
    fi
  done
  [ -z "$ok" ] || say "$name: shards ran on ${where//"ssh -F $tmp/ssh/config "/}"
}

if [ "$ssh" = no ]; then
  say "$ssh_tested"
else
  t=$SECONDS
  if start_ssh; then
    ssh_tested="GNU parallel across hosts: tested over ssh with $ssh_link"
    say "ssh hosts started in $(elapsed "$t")"
    cfg=$tmp/ssh/config

    # (a) Shared filesystem: shards here and on the host, written in place.
    t=$SECONDS
    CLUSTERSIM=$bin "${ssh_client[@]}" timeout 120 tools/sweep-parallel.sh "$exp" "$tmp/ssh-shared" 4 \
      -S "1/:,2/ssh -F $cfg shared" </dev/null >"$tmp/ssh-shared.out" 2>&1
    same "GNU parallel across hosts, shared filesystem (-S 1/:,2/host)" "$tmp/ssh-shared/merged" $? "$tmp/ssh-shared.out"
    ssh_ran "GNU parallel across hosts, shared filesystem" "$tmp/ssh-shared/parallel.log" : "ssh -F $cfg shared"
    say "shared filesystem: $(elapsed "$t")"

    # (b) No shared filesystem: the host's shards come back with --return,
    # and --cleanup removes them there.
    t=$SECONDS
    out=$tmp/ssh-private
    CLUSTERSIM=$bin "${ssh_client[@]}" timeout 120 tools/sweep-parallel.sh "$exp" "$out" 4 \
      -S "1/:,2/ssh -F $cfg private" \
      --return "$out/shard-{}/runs.csv" --return "$out/shard-{}/shard.json" --cleanup \
      </dev/null >"$tmp/ssh-private.out" 2>&1
    same "GNU parallel across hosts, no shared filesystem (-S 1/:,2/host --return --cleanup)" "$out/merged" $? "$tmp/ssh-private.out"
    ssh_ran "GNU parallel across hosts, no shared filesystem" "$out/parallel.log" : "ssh -F $cfg private"
    left=$(nsenter -t "${sshd_pids[1]}" -m find "$out" -mindepth 1 2>&1)
    if [ -z "$left" ] && nsenter -t "${sshd_pids[1]}" -m findmnt -n -t tmpfs "$out" >/dev/null; then
      say "GNU parallel across hosts, no shared filesystem: --cleanup left the host's tmpfs empty: ok"
    else
      fail "GNU parallel across hosts, no shared filesystem: after --cleanup the host's $out holds (or cannot be read):"
      echo "$left" | head -n 10 | sed 's/^/    /'
    fi
    say "no shared filesystem: $(elapsed "$t")"

    if [ ${#ssh_client[@]} -gt 0 ]; then
      n=$(grep -c "Accepted publickey for root from 10.213.84.1 " "$tmp/ssh/sshd-shared.log" "$tmp/ssh/sshd-private.log" |
          awk -F: '{ s += $2 } END { print s + 0 }')
      say "ssh: $n logins from the client namespace (10.213.84.1) in the sshds' logs"
    fi
    stop_ssh
    say "ssh hosts stopped$([ ${#ssh_client[@]} -eq 0 ] || echo ", namespaces removed")"
  fi
fi

if [ "$failures" -gt 0 ]; then
  say "$failures check(s) FAILED ($(elapsed))"
  exit 1
fi
say "sharded sweeps merge into the unsharded outputs: ok ($(elapsed))"
say "tested: GNU parallel on this machine; $slurm_tested; $ssh_tested"
case $ssh_tested in
  *": tested "*) say "not tested: hosts that are separate machines (their own filesystems, paths, builds), a multi-node Slurm cluster" ;;
  *) say "not tested: GNU parallel across hosts (--sshlogin), a multi-node Slurm cluster" ;;
esac
