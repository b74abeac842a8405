#!/usr/bin/env bash
# clustersim sweep as a researcher meets it: a grid of variants x axes x
# seeds whose every row is the `clustersim run` of its point, statistics a
# reader can recompute, the same bytes for any -j and for merged shards,
# invalid runs reported while the others go on, and bad input refused.
# Usage: test_cli_sweep.sh CLUSTERSIM_BINARY SOURCE_ROOT
. "$(dirname "$0")/harness.sh"
prof="$src/data/profiles/v100_thesis.json"
chk="$src/tests/experiment/check_sweep.py"

mkdir -p "$tmp/exp"
cat >"$tmp/exp/base.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 2, "gpu_type": "v100"},
 "dispatch": {"policy": "router", "max_wait_ms": 100}, "placement": {"policy": "dedicated"},
 "clients": [{"model": "resnet50", "rate": 200, "slo_ms": 200, "requests": 300, "warmup_s": 0.5},
             {"model": "alexnet", "rate": 200, "slo_ms": 100, "requests": 300, "warmup_s": 0.5}]}
JSON
# 4 variants x 2 GPU counts x 2 loads x 5 seeds = 80 runs.
cat >"$tmp/exp/grid.json" <<'JSON'
{"name": "cli grid", "base": "base.json",
 "variants": [{"name": "dedicated"},
              {"name": "wait20", "set": {"dispatch.max_wait_ms": 20}},
              {"name": "usher", "set": {"placement": {"policy": "usher"}}},
              {"name": "symphony", "unset": ["placement"], "set": {"dispatch": {"policy": "symphony"}}}],
 "axes": [{"name": "gpus", "path": "cluster.gpus", "values": [1, 2]},
          {"name": "load", "levels": [{"label": "low", "set": {"clients[*].rate": 100}},
                                      {"label": "high", "set": {"clients[*].rate": 300}}]}],
 "seeds": {"first": 1, "count": 5}}
JSON
g="$tmp/exp/grid.json"

# ---- the grid -------------------------------------------------------------------
"$bin" sweep "$g" --list >"$tmp/list.out"
check "--list: a header and 80 runs" test "$(wc -l <"$tmp/list.out")" -eq 81
check "--list: run 37 is wait20, 2 GPUs, high load, seed 3 (variants, then axes, seeds innermost)" \
  grep -qP "^37\twait20\t2\thigh\t3$" "$tmp/list.out"

"$bin" sweep "$g" -j1 -o "$tmp/j1" >"$tmp/j1.out" 2>"$tmp/j1.err"
check "sweep exits 0 when every run is valid" test $? -eq 0
check "sweep writes runs.csv, aggregate.csv, aggregate.json and sweep.json" \
  test -s "$tmp/j1/runs.csv" -a -s "$tmp/j1/aggregate.csv" -a -s "$tmp/j1/aggregate.json" -a -s "$tmp/j1/sweep.json"
check "runs.csv: 80 runs x (2 models + total) rows and the header" test "$(wc -l <"$tmp/j1/runs.csv")" -eq 241
check "runs.csv: the columns a reader filters on" \
  grep -q "^run_id,variant,gpus,load,seed,model,status,error,slo_ms,offered_rps,.*,goodput_rps,.*,warnings$" "$tmp/j1/runs.csv"
check "dedicated on 1 GPU leaves alexnet unserved: its row and the total carry the warning" \
  grep -q "^0,dedicated,1,low,1,alexnet,ok,.*,model_unserved$" "$tmp/j1/runs.csv"
check "the table: a row per point, a column per variant, mean ± CI" \
  python3 -c "
import sys
lines = open('$tmp/j1.out').read().splitlines()
assert lines[0] == 'goodput_rps of total: mean ± 95 % CI over seeds', lines[0]
assert lines[1].split() == ['gpus', 'load', 'dedicated', 'wait20', 'usher', 'symphony'], lines[1]
assert [l.split()[:2] for l in lines[2:]] == [['1', 'low'], ['1', 'high'], ['2', 'low'], ['2', 'high']]
assert all(l.count('±') == 4 for l in lines[2:])"
check "nothing on stderr" test ! -s "$tmp/j1.err"
# Progress (runs done, elapsed, time left) goes to stderr only when it is a
# terminal: none above (a file); under script(1)'s pseudo-terminal the line
# is drawn, and the last one says every run is done (lines while runs remain
# come at most every 250 ms, so a fast grid may show only that one; the
# time left is tests/experiment/test_sweep.c's).
if command -v script >/dev/null; then
  script -qec "'$bin' sweep '$g' -j2 >/dev/null" /dev/null >"$tmp/tty.out" 2>&1
  check "on a terminal: the progress line with runs done and elapsed time" \
    grep -qP 'sweep: 80 of 80 runs \(100 %\), \d+:\d\d elapsed' "$tmp/tty.out"
fi
check "sweep.json: experiment, file hashes, version, runs, grid" \
  py "d['experiment'] == 'cli grid' and d['file'] == 'grid.json' and len(d['sha256']) == 64 and d['base']['file'] == 'base.json' and d['runs'] == 80 and d['variants'] == ['dedicated', 'wait20', 'usher', 'symphony'] and d['axes'][1] == {'name': 'load', 'labels': ['low', 'high']} and d['seeds'] == [1, 2, 3, 4, 5]" "$tmp/j1/sweep.json"

# The table's cell is aggregate.csv's mean and CI.
check "a table cell is the aggregate's mean ± ci95" python3 -c "
import csv
rows = [r for r in csv.DictReader(open('$tmp/j1/aggregate.csv'))
        if r['variant'] == 'usher' and r['gpus'] == '2' and r['load'] == 'high' and r['model'] == 'total' and r['metric'] == 'goodput_rps']
cell = '%.1f ± %.1f' % (float(rows[0]['mean']), float(rows[0]['ci95']))
line = open('$tmp/j1.out').read().splitlines()[5]
assert cell in line, (cell, line)"

# Statistics recomputed with Python's statistics module and a printed t table.
check "aggregate.csv recomputed from runs.csv (df 4)" python3 "$chk" stats "$tmp/j1/runs.csv" "$tmp/j1/aggregate.csv"
check "aggregate.json holds the aggregate.csv numbers" python3 -c "
import csv, json
agg = list(csv.DictReader(open('$tmp/j1/aggregate.csv')))
d = json.load(open('$tmp/j1/aggregate.json'))
flat = [(g['variant'], g['point']['gpus'], g['point']['load'], g['model'], m, s)
        for g in d['groups'] for m, s in g['stats'].items()]
assert len(flat) == len(agg)
for (v, gp, ld, mo, m, s), a in zip(flat, agg):
    assert (v, gp, ld, mo, m) == (a['variant'], a['gpus'], a['load'], a['model'], a['metric'])
    assert s['n'] == int(a['n']) and s['n_nan'] == int(a['n_nan'])
    for k in ('mean', 'sd', 'ci95'):
        assert (s[k] is None and a[k] == '') or s[k] == float(a[k]), (k, s[k], a[k])"

# Every row is the single run of its point: `clustersim run --seed S --set ...`.
variant_flags() {
  case $1 in
    dedicated) ;;
    wait20) echo "--set dispatch.max_wait_ms=20" ;;
    usher) echo "--set placement={\"policy\":\"usher\"}" ;;
    symphony) echo "--unset placement --set dispatch={\"policy\":\"symphony\"}" ;;
  esac
}
vs_ok=0
vs_bad=0
while IFS=$'\t' read -r id variant gpus load seed; do
  [ "$id" = run_id ] && continue
  [ "$seed" = 1 ] || [ "$seed" = 4 ] || continue
  rate=100
  [ "$load" = high ] && rate=300
  # shellcheck disable=SC2046
  "$bin" run "$tmp/exp/base.json" --seed "$seed" $(variant_flags "$variant") --set cluster.gpus="$gpus" \
    --set "clients[0].rate=$rate" --set "clients[1].rate=$rate" --json >"$tmp/one.json" 2>/dev/null
  if python3 "$chk" vs-run "$tmp/j1/runs.csv" "$id" "$tmp/one.json"; then
    vs_ok=$((vs_ok + 1))
  else
    vs_bad=$((vs_bad + 1))
  fi
done <"$tmp/list.out"
check "32 runs (seeds 1 and 4 of every point) equal clustersim run of the point, metric by metric" \
  test "$vs_ok" -eq 32 -a "$vs_bad" -eq 0

# ---- the same bytes whatever -j, and merged shards ---------------------------------
"$bin" sweep "$g" -j2 -o "$tmp/j2" >"$tmp/j2.out" 2>&1
check "-j2 writes the same bytes as -j1" diff -r "$tmp/j1" "$tmp/j2"
check "-j2 prints the same table" cmp "$tmp/j1.out" "$tmp/j2.out"
"$bin" sweep "$g" -j3 -o "$tmp/j3" >/dev/null 2>&1
check "-j3 (threads of unequal work) writes the same bytes" diff -r "$tmp/j1" "$tmp/j3"

"$bin" sweep "$g" --shard 1/3 -j1 -o "$tmp/s1" >"$tmp/s1.out" 2>&1
check "a shard exits 0 and says what it ran" grep -q "^shard 1/3: 27 of 80 runs, written to" "$tmp/s1.out"
check "a shard writes runs.csv and shard.json only" \
  test "$(ls "$tmp/s1" | tr '\n' ' ')" = "runs.csv shard.json "
check "shard.json: runs 0, 3, 6, ... (run number mod 3 = 0)" \
  py "d['shard'] == {'index': 1, 'count': 3} and d['run_ids'] == list(range(0, 80, 3)) and d['sweep']['runs'] == 80" "$tmp/s1/shard.json"
"$bin" sweep "$g" --shard 2/3 -j2 -o "$tmp/s2" >/dev/null 2>&1
"$bin" sweep "$g" --shard 3/3 -o "$tmp/s3" >/dev/null 2>&1
"$bin" sweep merge -o "$tmp/merged" "$tmp/s3" "$tmp/s1" "$tmp/s2" >"$tmp/merged.out" 2>&1
check "merge exits 0" test $? -eq 0
check "shards 1/3 + 2/3 + 3/3 merged (in any order) == the unsharded outputs, byte for byte" diff -r "$tmp/j1" "$tmp/merged"
check "merge prints the unsharded table" cmp "$tmp/j1.out" "$tmp/merged.out"

bad "merge: a missing shard" "27 of 80 runs are in no shard given (runs 0, 3, 6," sweep merge -o "$tmp/m2" "$tmp/s2" "$tmp/s3"
check "merge: a refused merge writes nothing" test ! -e "$tmp/m2"
bad "merge: a shard given twice" "appears in two shards: $tmp/s1 and $tmp/s1" sweep merge -o "$tmp/m2" "$tmp/s1" "$tmp/s1" "$tmp/s2" "$tmp/s3"
sed 's/"count": 5/"count": 4/' "$g" >"$tmp/exp/grid4.json"
"$bin" sweep "$tmp/exp/grid4.json" --shard 1/3 -o "$tmp/other" >/dev/null 2>&1
bad "merge: shards of different experiments" "are shards of different sweeps: their shard.json differ in sweep.file" \
  sweep merge -o "$tmp/m2" "$tmp/other" "$tmp/s2" "$tmp/s3"
check "shard.json: the random streams' version (rng_stream_version 2)" \
  py "d['sweep']['rng_stream_version'] == 2" "$tmp/s1/shard.json"
cp -r "$tmp/s2" "$tmp/s2v"
sed 's/"rng_stream_version":[[:space:]]*2/"rng_stream_version": 1/' "$tmp/s2/shard.json" >"$tmp/s2v/shard.json"
bad "merge: shards of two random stream versions" \
  "are shards of different sweeps: their shard.json differ in sweep.rng_stream_version" \
  sweep merge -o "$tmp/m2" "$tmp/s1" "$tmp/s2v" "$tmp/s3"
cp -r "$tmp/s2" "$tmp/s2x"
head -20 "$tmp/s2/runs.csv" >"$tmp/s2x/runs.csv"
bad "merge: a runs.csv missing rows of its runs" "s2x/runs.csv: has no row of run" sweep merge "$tmp/s1" "$tmp/s2x" "$tmp/s3"
# A shard's rows must be whole runs of the sweep, each model once: a runs.csv
# with a row duplicated, lost, of a model the run has not, or of another
# point is refused, not counted (run 1: resnet50, alexnet, total on lines 2-4).
bad_rows() {
  local what=$1 msg=$2 edit=$3
  rm -rf "$tmp/s2r"
  cp -r "$tmp/s2" "$tmp/s2r"
  awk "$edit" "$tmp/s2/runs.csv" >"$tmp/s2r/runs.csv"
  bad "merge: $what" "$msg" sweep merge -o "$tmp/m2" "$tmp/s1" "$tmp/s2r" "$tmp/s3"
  check "merge: $what: writes nothing" test ! -e "$tmp/m2"
}
bad_rows "a duplicated row" 's2r/runs.csv: run 1: two rows of model "resnet50" (a row duplicated?)' \
  '{ print } NR == 2 { print }'
bad_rows "a missing model" \
  "s2r/runs.csv: run 1: its total row has generated = " 'NR != 3 { print }'
bad_rows "a model the run has not" "s2r/runs.csv: run 1: its total row has generated = " \
  '{ print } NR == 3 { sub(/,alexnet,/, ",vgg19,"); print }'
bad_rows "a row after the total" \
  's2r/runs.csv: run 1: expected its model rows and then its total row, got 4 row(s) ending with model "vgg19"' \
  '{ print } NR == 4 { sub(/,total,/, ",vgg19,"); print }'
bad_rows "a row of another point" \
  's2r/runs.csv: run 1: a row has variant "wait20" but run 1 of the sweep has "dedicated"' \
  'NR == 3 { sub(/^1,dedicated,/, "1,wait20,") } { print }'
bad "merge: no shard" "expected one or more SHARDDIR" sweep merge -o "$tmp/m2"
bad "merge: not a shard directory" "shard.json: cannot read" sweep merge "$tmp/j1"

# GLPK keeps an environment per thread until glp_free_env: the sweep releases
# it after each run, or the ASan build's LeakSanitizer fails this run.
cat >"$tmp/exp/milp.json" <<'JSON'
{"base": "base.json", "variants": [{"name": "ao-milp", "set": {"placement": {"policy": "ao-milp"}}},
                                   {"name": "wsm-milp", "set": {"placement": {"policy": "wsm-milp"}}}],
 "axes": [{"name": "gpus", "path": "cluster.gpus", "values": [1, 2]}], "seeds": [1]}
JSON
"$bin" sweep "$tmp/exp/milp.json" -j2 -o "$tmp/milp" >/dev/null
check "MILP placements on two threads" test $? -eq 0

# ---- invalid runs are reported, the others go on ------------------------------------
cat >"$tmp/exp/mixed.json" <<'JSON'
{"base": "base.json",
 "variants": [{"name": "dedicated"},
              {"name": "manual", "set": {"placement": {"policy": "manual", "replicas": [
                 {"model": "resnet50", "gpu": 0, "batch": 8}, {"model": "alexnet", "gpu": 1, "batch": 8}]}}}],
 "axes": [{"name": "gpus", "path": "cluster.gpus", "values": [1, 2]}],
 "seeds": [3, 9]}
JSON
"$bin" sweep "$tmp/exp/mixed.json" -j2 -o "$tmp/mixed" >"$tmp/mixed.out" 2>"$tmp/mixed.err"
check "a sweep with invalid runs exits 1" test $? -eq 1
check "stderr names each invalid run with its variant, axis values and seed" \
  grep -q "^clustersim sweep: run 4 (variant manual, gpus 1, seed 3) invalid: .*gpu" "$tmp/mixed.err"
check "stderr counts them" grep -q "^clustersim sweep: 2 runs invalid" "$tmp/mixed.err"
check "runs.csv: the invalid runs' rows carry status and message; the other 6 runs ran" python3 -c "
import csv
rows = list(csv.DictReader(open('$tmp/mixed/runs.csv')))
bad = [r for r in rows if r['status'] == 'invalid']
assert [(r['run_id'], r['variant'], r['gpus'], r['seed'], r['model'], r['goodput_rps']) for r in bad] == \
    [('4', 'manual', '1', '3', '', ''), ('5', 'manual', '1', '9', '', '')], bad
assert all('gpu' in r['error'] for r in bad)
assert len({r['run_id'] for r in rows if r['status'] == 'ok'}) == 6"
check "the table says invalid where no run of a cell ran" grep -qE "^1 +[0-9.]+ ± [0-9.]+ +invalid$" "$tmp/mixed.out"
check "aggregate.csv recomputed from runs.csv (df 1, invalid runs left out)" \
  python3 "$chk" stats "$tmp/mixed/runs.csv" "$tmp/mixed/aggregate.csv"

# ---- goodput search: each run is the highest load within the SLO -------------------------
# Symphony's one-model setting in small: 8 GPUs of l(b) = 1.053 b + 5.072 ms,
# SLO 25 ms, 3 s of Poisson arrivals. The analytic bound of staggered
# batches (Symphony Table 2) is 5839 req/s: no search may end above it.
cat >"$tmp/exp/t2.json" <<JSON
{"profiles": ["$src/data/profiles/symphony_table2.json"],
 "cluster": {"gpus": 8, "gpu_type": "1080ti", "price_per_hour": 0.5, "price_source": "test: a 1080 Ti has no cloud price"},
 "dispatch": {"policy": "symphony", "d_ctrl_us": 0, "d_data_us": 0, "d_resp_ms": 0},
 "clients": [{"model": "ResNet50", "rate": 100, "slo_ms": 25, "duration_s": 3, "warmup_s": 0.5}]}
JSON
cat >"$tmp/exp/search.json" <<'JSON'
{"base": "t2.json",
 "variants": [{"name": "symphony"}, {"name": "eager", "set": {"dispatch.policy": "eager"}}],
 "axes": [{"name": "gpus", "path": "cluster.gpus", "values": [4, 8]}],
 "seeds": {"first": 1, "count": 3}, "search": {"max_multiplier": 128}}
JSON
"$bin" sweep "$tmp/exp/search.json" -j2 -o "$tmp/search" >"$tmp/search.out" 2>"$tmp/search.err"
check "a search sweep exits 0" test $? -eq 0
check "its table says what each run is and shows max_load_rps" \
  grep -qzP "^goodput search: each run is the highest load with every model's p99 latency <= its SLO\nmax_load_rps of total" "$tmp/search.out"
check "runs.csv: the search columns before warnings" \
  grep -q "^run_id,variant,gpus,seed,model,.*,drain_s,cost_per_hour,goodput_per_dollar,gpu_hours,paid_per_hour,max_load_rps,search_multiplier,search_probes,max_load_per_dollar,warnings$" "$tmp/search/runs.csv"
check "each row: max_load_rps is the offered load, below the analytic bound N b / l(b), p99 within SLO" python3 -c "
import csv, math
rows = list(csv.DictReader(open('$tmp/search/runs.csv')))
assert len(rows) == 24, len(rows)
for r in rows:
    n = int(r['gpus'])
    b = math.floor((25 / (1 + 1 / n) - 5.072) / 1.053)
    bound = n * b / (1.053 * b + 5.072) * 1000
    assert r['max_load_rps'] == r['offered_rps'], r
    assert 0 < float(r['max_load_rps']) <= bound, (r['max_load_rps'], bound)
    assert float(r['latency_p99_ms']) <= 25, r
    assert float(r['max_load_rps']) == 100 * float(r['search_multiplier']), r
"
check "each row: cost_per_hour = GPUs x 0.5, max_load_per_dollar = max_load_rps x 3600 / cost_per_hour" python3 -c "
import csv
for r in csv.DictReader(open('$tmp/search/runs.csv')):
    price = 0.5 * int(r['gpus'])
    assert float(r['cost_per_hour']) == price, r
    assert abs(float(r['max_load_per_dollar']) - float(r['max_load_rps']) * 3600 / price) <= 1e-12 * float(r['max_load_per_dollar']), r
    assert abs(float(r['goodput_per_dollar']) - float(r['goodput_rps']) * 3600 / price) <= 1e-12 * float(r['goodput_per_dollar']), r
"
# The run metrics, batch percentiles included, are the simulation at the load found.
read -r sr_rate sr_seed sr_gpus < <(python3 -c "
import csv; r = next(r for r in csv.DictReader(open('$tmp/search/runs.csv')) if r['run_id'] == '1')
assert r['variant'] == 'symphony', r
print(r['max_load_rps'], r['seed'], r['gpus'])")
"$bin" run "$tmp/exp/t2.json" --seed "$sr_seed" --set "clients[0].rate=$sr_rate" --set "cluster.gpus=$sr_gpus" --json >"$tmp/sr.json" 2>/dev/null
check "a search row (median_batch, p90_batch and all) is the run at the load found" \
  python3 "$chk" vs-run "$tmp/search/runs.csv" 1 "$tmp/sr.json"
check "sweep.json records the search" py "d['search'] == {'criterion': 'p99', 'max_multiplier': 128, 'tolerance': 0.005, 'max_probes': 40}" "$tmp/search/sweep.json"
check "the figures draw max_load_rps" test -s "$tmp/search/figures/max_load_rps_vs_gpus.dat"
"$bin" sweep "$tmp/exp/search.json" -j1 --shard 1/2 -o "$tmp/ss1" >/dev/null 2>&1
"$bin" sweep "$tmp/exp/search.json" -j1 --shard 2/2 -o "$tmp/ss2" >/dev/null 2>&1
"$bin" sweep merge -o "$tmp/smerged" "$tmp/ss2" "$tmp/ss1" >"$tmp/smerged.out" 2>&1
check "search shards merged == the unsharded search sweep, byte for byte" diff -r "$tmp/search" "$tmp/smerged"
check "the merge prints the same table" cmp "$tmp/search.out" "$tmp/smerged.out"
bad "--metric of a search sweep asked of another" "--metric search_probes: only a goodput-search sweep" \
  sweep "$g" --metric search_probes -o "$tmp/none"
check "...and nothing is written" test ! -e "$tmp/none"
bad "sweep plot: a search metric of a sweep without search" "aggregate.csv: no metric \"max_load_rps\" (only a goodput-search sweep" \
  sweep plot "$tmp/j1" --metric max_load_rps
cat >"$tmp/exp/badsearch.json" <<'JSON'
{"base": "t2.json", "seeds": [1], "search": {"criterion": "p95"}}
JSON
bad "a bad search block: file, JSON path, what is expected" \
  "badsearch.json: search.criterion: expected \"p99\" or \"bad_rate\", got \"p95\"" sweep "$tmp/exp/badsearch.json"

# ---- the shipped experiments load: every edit applies to its base scenario --------------
for e in "$src"/experiments/*.json; do
  "$bin" sweep "$e" --list >"$tmp/shipped.out" 2>"$tmp/shipped.err"
  check "$(basename "$e"): every run of the grid builds (sweep --list)" \
    test $? -eq 0 -a "$(wc -l <"$tmp/shipped.out")" -gt 1 -a ! -s "$tmp/shipped.err"
done

# ---- outputs stay whole: one writer, and an interrupt leaves one set ------------------
# A gnuplot that says it started (file started.N) and waits for go.N before
# rendering (the real one when there is one), so that a second writer and an
# interrupt meet the sweep in the middle of its figures without any timing.
cat >"$tmp/slowplot" <<SH
#!/bin/sh
n=\$(cat "$tmp/plotid")
touch "$tmp/started.\$n"
i=0
while [ ! -e "$tmp/go.\$n" ] && [ \$i -lt 1200 ]; do sleep 0.05; i=\$((i + 1)); done
real=\$(command -v gnuplot)
[ -n "\$real" ] && exec "\$real" "\$@"
exit 0
SH
chmod +x "$tmp/slowplot"
cat >"$tmp/exp/small.json" <<'JSON'
{"base": "base.json", "variants": [{"name": "w100"}, {"name": "w20", "set": {"dispatch.max_wait_ms": 20}}],
 "axes": [{"name": "gpus", "path": "cluster.gpus", "values": [1, 2]}], "seeds": [1, 2]}
JSON
sed 's/"seeds": \[1, 2\]/"seeds": [3, 4]/' "$tmp/exp/small.json" >"$tmp/exp/smallB.json"
# Started with SIGINT at its default (a shell's background job ignores it),
# in a session of its own when GROUP=1 (as a terminal's foreground job); exec
# all the way, so that $! is clustersim's PID.
launch() {
  exec python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
if os.environ.get("GROUP") == "1":
    os.setsid()
os.execv(sys.argv[1], sys.argv[1:])' "$@"
}
wait_for() { local i=0; while [ ! -e "$1" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done; }
"$bin" sweep "$tmp/exp/small.json" -o "$tmp/refA" >/dev/null 2>&1
"$bin" sweep "$tmp/exp/smallB.json" -o "$tmp/refB" >/dev/null 2>&1

echo 1 >"$tmp/plotid"
CLUSTERSIM_GNUPLOT="$tmp/slowplot" launch "$bin" sweep "$tmp/exp/small.json" -o "$tmp/lk" >"$tmp/lk.out" 2>&1 &
first=$!
wait_for "$tmp/started.1"
bad "a second sweep into a directory being written is refused, naming the writer" \
  "clustersim sweep: --output $tmp/lk: another clustersim (PID $first) is writing it; wait for it to finish, or use another directory" \
  sweep "$tmp/exp/smallB.json" -o "$tmp/lk" --force
bad "... and so are a merge and a plot into it" "another clustersim (PID $first) is writing it" \
  sweep plot "$tmp/lk"
touch "$tmp/go.1"
wait "$first"
check "... while the first sweep ends normally (exit 0)" test $? -eq 0
check "... with its own outputs whole, and its lock gone" \
  sh -c "cmp -s '$tmp/lk/runs.csv' '$tmp/refA/runs.csv' && diff -r -x '*.svg' -x '*.png' '$tmp/lk' '$tmp/refA' >/dev/null && test ! -e '$tmp/lk/.clustersim.lock'"
mkdir "$tmp/stale"
echo 999999999 >"$tmp/stale/.clustersim.lock"
"$bin" sweep "$tmp/exp/small.json" -o "$tmp/stale" >/dev/null 2>&1
check "a lock file left by a writer that was killed (no process holds it) is taken over: exit 0, lock gone" \
  sh -c "test $? -eq 0 && cmp -s '$tmp/stale/runs.csv' '$tmp/refA/runs.csv' && test ! -e '$tmp/stale/.clustersim.lock'"

# SIGINT while the figures render, to the sweep alone and to its process
# group (a terminal's Ctrl-C): the old set or the new one, figures included,
# and no figures.new (before: new tables beside old figures).
for target in pid group; do
  rm -rf "$tmp/int"
  cp -r "$tmp/refA" "$tmp/int"
  n=int-$target
  echo "$n" >"$tmp/plotid"
  GROUP=$([ $target = group ] && echo 1 || echo 0) CLUSTERSIM_GNUPLOT="$tmp/slowplot" launch "$bin" sweep "$tmp/exp/smallB.json" -o "$tmp/int" --force >/dev/null 2>&1 &
  pid=$!
  wait_for "$tmp/started.$n"
  if [ $target = pid ]; then kill -INT "$pid"; else kill -INT -- "-$pid"; fi
  touch "$tmp/go.$n"
  wait "$pid"
  rc=$?
  check "SIGINT ($target) during the figures: the sweep ends by it (status 130)" test $rc -eq 130
  whole=none
  for ref in refA refB; do
    diff -r -x '*.svg' -x '*.png' "$tmp/int" "$tmp/$ref" >/dev/null 2>&1 && whole=$ref
  done
  check "SIGINT ($target): the directory holds one whole set, figures included (got $whole)" test "$whole" != none
  check "SIGINT ($target): no figures.new and no lock left" test ! -e "$tmp/int/figures.new" -a ! -e "$tmp/int/.clustersim.lock"
done

# ---- bad input: exit 2, nothing written -------------------------------------------------
bad "missing experiment" "nope.json: cannot read" sweep "$tmp/exp/nope.json" -o "$tmp/none"
check "missing experiment: no output directory" test ! -e "$tmp/none"
cat >"$tmp/exp/badpath.json" <<'JSON'
{"base": "base.json", "variants": [{"name": "a", "set": {"clients[5].rate": 5}}], "seeds": [1]}
JSON
bad "an edit that cannot apply: file, JSON path, reason" \
  "badpath.json: variants[0].set.clients[5].rate: index past the end of the array (applied to base.json)" \
  sweep "$tmp/exp/badpath.json" -o "$tmp/none"
check "bad experiment: no output directory" test ! -e "$tmp/none"
bad "--shard K > N" "--shard 3/2: expected K/N with 1 <= K <= N" sweep "$g" --shard 3/2 -o "$tmp/none"
bad "--shard without --output" "--shard needs --output DIR" sweep "$g" --shard 1/2
bad "-j 0" "-j: expected a number of runs at a time >= 1" sweep "$g" -j 0
bad "--metric unknown" "--metric goodput: not a metric of runs.csv (slo_ms, offered_rps" sweep "$g" --metric goodput
bad "earlier outputs are refused" "holds the outputs of an earlier sweep (runs.csv, aggregate.csv, aggregate.json, sweep.json); use --force" \
  sweep "$g" -o "$tmp/j1"
"$bin" sweep "$tmp/exp/mixed.json" -o "$tmp/s1" --force >/dev/null 2>&1
check "--force replaces the whole set: a shard's shard.json goes" test ! -e "$tmp/s1/shard.json" -a -e "$tmp/s1/aggregate.csv"
printf '%s' '{"base": "base.json", "variants": [{"name": "a\nb"}], "seeds": [1]}' >"$tmp/exp/newline.json"
bad "a newline in a variant name is refused (runs.csv would break for sweep plot)" \
  'newline.json: variants[0].name: variant "a\nb" holds a control character (byte 0x0a)' \
  sweep "$tmp/exp/newline.json" -o "$tmp/none"
check "... and nothing is written" test ! -e "$tmp/none"
finish
