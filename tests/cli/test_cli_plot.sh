#!/usr/bin/env bash
# Figures as a researcher meets them: `clustersim plot RUNDIR` and the figures
# of `clustersim sweep -o DIR` (and `sweep plot`, `sweep merge`). Each figure's
# data is checked against the files it was drawn from by an independent
# reader (tests/figures/check_figures.py), what gnuplot draws against the
# data (its own table output), and the SVG and PNG files as files (XML text,
# PNG size, ink and colours); renders are byte-identical; gnuplot missing
# or failing, and bad directories, are reported as documented.
# Usage: test_cli_plot.sh CLUSTERSIM_BINARY SOURCE_ROOT
. "$(dirname "$0")/harness.sh"
unset CLUSTERSIM_GNUPLOT
prof="$src/data/profiles/v100_thesis.json"
chk="$src/tests/figures/check_figures.py"
fig() { python3 "$chk" "$@"; }
if command -v gnuplot >/dev/null; then render=1; else render=0; fi
# Checks that need gnuplot are skipped (and said so) without it.
rcheck() {
  if [ $render = 1 ]; then check "$@"; else echo "skip - $1 (gnuplot not installed)"; fi
}

# ---- one run: MPS shares, co-location, an idle GPU, requests.csv ---------------------
cat >"$tmp/run.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 3, "gpu_type": "v100", "mps": true},
 "dispatch": {"policy": "router", "max_wait_ms": 20},
 "placement": {"policy": "manual", "replicas": [
   {"model": "resnet50", "gpu": 0, "batch": 8, "mps_share": 0.5},
   {"model": "alexnet", "gpu": 0, "batch": 8, "mps_share": 0.3},
   {"model": "resnet50", "gpu": 1, "batch": 8, "mps_share": 0}]},
 "clients": [{"model": "resnet50", "rate": 200, "slo_ms": 100, "requests": 2000, "warmup_s": 0.5},
             {"model": "alexnet", "rate": 300, "slo_ms": 50, "requests": 3000, "warmup_s": 0.5}]}
JSON
"$bin" run "$tmp/run.json" --output "$tmp/r" --requests-csv >/dev/null 2>&1
"$bin" plot "$tmp/r" >"$tmp/plot.out" 2>"$tmp/plot.err"
check "plot exits 0" test $? -eq 0
check "plot names its five figures on stdout" \
  grep -q "^5 figures in $tmp/r/figures: latency_cdf stage_breakdown gpu_busy placement batch_sizes " "$tmp/plot.out"
rcheck "plot: nothing on stderr" test ! -s "$tmp/plot.err"
for f in latency_cdf stage_breakdown gpu_busy placement batch_sizes; do
  check "$f.dat and $f.gp written" test -s "$tmp/r/figures/$f.dat" -a -s "$tmp/r/figures/$f.gp"
  rcheck "$f.svg and $f.png rendered" test -s "$tmp/r/figures/$f.svg" -a -s "$tmp/r/figures/$f.png"
done
check "latency CDF: its points lie on requests.csv's empirical CDF (every request of resnet50, the documented ranks of alexnet)" \
  fig cdf "$tmp/r"
check "alexnet has over 2000 served requests (the sampled CDF is exercised)" \
  test "$(grep -c "^alexnet" "$tmp/r/figures/latency_cdf.dat")" -lt 1200
check "stage breakdown: summary.json's stage means, equal to the means of requests.csv's stage times" \
  fig stages "$tmp/r"
check "placement: summary.json's replicas, boxes as tall as their share (= worker_latency.csv's), stacked" \
  fig placement "$tmp/r"
check "summary.json carries each replica's MPS share" \
  py "[x['mps_share'] for x in d['models'][0]['replicas']] == [0.5, 0] and d['models'][1]['replicas'] == [{'gpu': 0, 'batch': 8, 'mps_share': 0.3}]" "$tmp/r/summary.json"
check "gpu_busy: gpus_over_time.csv and gpu_timeseries.csv, the idle GPU as zeros" fig gpu-busy "$tmp/r"
check "batch_sizes: the CDFs of summary.json's batch sizes, by batches and by requests, and the medians" \
  fig batches "$tmp/r"
check "gpu_busy: GPU 2 (no replica) is drawn idle in every bin" \
  python3 -c "
rows = open('$tmp/r/figures/gpu_busy.dat').read().split('\n\n\n')[1].splitlines()
g2 = [l.split('\t') for l in rows if l and not l.startswith('#') and l.split('\t')[1] == '2']
assert g2 and all(r[2] == '0' for r in g2), g2[:3]"
# Idle bins have no row in the CSVs (their size follows what ran, not the
# simulated span); the figure draws them as zeros. Requests at 0 and 5 s:
# rows for bins 0 and 5, zeros drawn for bins 1..4.
cat >"$tmp/gap.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 1, "gpu_type": "v100"},
 "clients": [{"model": "resnet50", "slo_ms": 200, "arrival": {"process": "times", "times_ms": [0, 5000]}}]}
JSON
"$bin" run "$tmp/gap.json" --output "$tmp/gap" >/dev/null 2>&1
check "gpus_over_time.csv: a row per bin a GPU ran in (0 and 5), none for the idle ones" \
  test "$(cut -d, -f1 "$tmp/gap/gpus_over_time.csv" | tr '\n' ' ')" = "time_s 0 5 "
"$bin" plot "$tmp/gap" --no-render >/dev/null 2>&1
check "gpu_busy: the idle bins 1..4 drawn as zeros, the rest as gpus_over_time.csv" fig gpu-busy "$tmp/gap"
check "gpu_busy: six bins drawn for GPU 0" \
  python3 -c "
rows = open('$tmp/gap/figures/gpu_busy.dat').read().split('\n\n\n')[0].splitlines()
rows = [l.split('\t') for l in rows if l and not l.startswith('#')]
assert [r[1] for r in rows] == ['1', '0', '0', '0', '0', '1'], rows"
# A run whose series doubled their width (issue 32): 4,096 requests 2 s
# apart make 4,096 runs of 1 s bins, so the series end in 2 s bins, which
# the summary states and the figure must use: one bin per request, all busy.
python3 -c "
import json
print(json.dumps({'profiles': ['$prof'], 'cluster': {'gpus': 1, 'gpu_type': 'v100'},
  'clients': [{'model': 'resnet50', 'slo_ms': 200, 'arrival': {'process': 'times',
    'times_ms': [2000 * k for k in range(4096)]}}]}))" >"$tmp/wide.json"
"$bin" run "$tmp/wide.json" --output "$tmp/wide" >/dev/null 2>&1
check "a long run's series: summary.json states their doubled width" \
  py "d['timeseries'] == {'bin_s': 2, 'requested_bin_s': 1, 'max_runs': 4096} and d['autoscaling']['timeseries_bin_s'] == 1" "$tmp/wide/summary.json"
check "a long run's series: gpus_over_time.csv has a row per 2 s bin" \
  python3 -c "
rows = open('$tmp/wide/gpus_over_time.csv').read().splitlines()[1:]
assert [r.split(',')[0] for r in rows] == [str(2 * k) for k in range(4096)], rows[:3]"
"$bin" plot "$tmp/wide" --no-render >/dev/null 2>&1
check "gpu_busy of a long run: drawn in the summary's 2 s bins" fig gpu-busy "$tmp/wide"
check "gpu_busy of a long run: 4,096 bins, every one used" \
  python3 -c "
rows = open('$tmp/wide/figures/gpu_busy.dat').read().split('\n\n\n')[0].splitlines()
rows = [l.split('\t') for l in rows if l and not l.startswith('#')]
assert len(rows) == 4096 and all(r[1] == '1' for r in rows), rows[:3]"
rcheck "latency_cdf.svg: models, axis labels, title" \
  fig svg "$tmp/r/figures/latency_cdf.svg" "resnet50 (n = " "alexnet (n = " "SLO 50 ms" \
  "end-to-end latency (ms)" "fraction of requests answered within x" "placement manual"
rcheck "stage_breakdown.svg: models, stages, unit" \
  fig svg "$tmp/r/figures/stage_breakdown.svg" resnet50 alexnet "router wait (batching)" \
  "GPU execution" "mean time per request (ms)" "SLO"
rcheck "placement.svg: every box label, GPU labels, shares, busy fractions" \
  fig svg "$tmp/r/figures/placement.svg" "b8 · 50 %" "b8 · 30 %" "b8 · no limit" \
  "MPS share of the GPU's SMs" "% busy" "no limit: a replica without MPS share"
rcheck "gpu_busy.svg: both panels' labels" \
  fig svg "$tmp/r/figures/gpu_busy.svg" "simulated time (s)" "GPUs" "busy fraction" "GPU"
rcheck "batch_sizes.svg: both styles per model, medians, axis labels" \
  fig svg "$tmp/r/figures/batch_sizes.svg" "resnet50 by batches (n = " "alexnet by requests (median " \
  "batch size (requests)" "fraction with batch size <= x" "placement manual"
for f in latency_cdf stage_breakdown gpu_busy placement batch_sizes; do
  rcheck "$f.png: 800 x 500, ink, colours, every series colour drawn" \
    fig png "$tmp/r/figures/$f.png" 800 500 "$tmp/r/figures/$f.gp"
done
cp -r "$tmp/r/figures" "$tmp/r_first"
"$bin" plot "$tmp/r" >/dev/null 2>&1
check "a second plot gives byte-identical .dat, .gp, .svg and .png" diff -r "$tmp/r_first" "$tmp/r/figures"
check "no staging directory is left" test ! -e "$tmp/r/figures.new"
check "a restyled script renders by itself (gnuplot NAME.gp in figures/)" \
  bash -c "[ $render = 0 ] || (cd '$tmp/r/figures' && rm placement.png && LC_ALL=C.UTF-8 gnuplot placement.gp && cmp placement.png '$tmp/r_first/placement.png')"

# SIGTERM at any moment leaves the old figures or the new ones, never a mix
# or the staging directory.
for delay in 0.01 0.05 0.1; do
  "$bin" plot "$tmp/r" >/dev/null 2>&1 &
  pid=$!
  sleep $delay
  kill -TERM $pid 2>/dev/null
  wait $pid
  check "SIGTERM after ${delay} s: figures whole (old or new), no staging directory" \
    bash -c "test ! -e '$tmp/r/figures.new' && diff -r '$tmp/r_first' '$tmp/r/figures' >/dev/null"
done

# run --force replaces the outputs: the figures drawn from the old ones go too,
# files of the user's own stay.
cp -r "$tmp/r" "$tmp/rf"
touch "$tmp/rf/figures/notes.txt"
"$bin" run "$tmp/run.json" --output "$tmp/rf" --force >/dev/null 2>&1
check "run --force removes the earlier figures, keeps other files" \
  test "$(ls "$tmp/rf/figures")" = notes.txt
rm "$tmp/rf/figures/notes.txt"
"$bin" run "$tmp/run.json" --output "$tmp/rf" --force >/dev/null 2>&1
check "... and the emptied figures directory" test ! -e "$tmp/rf/figures"

# Without requests.csv: the CDF is skipped with a note, the rest is drawn.
"$bin" run "$tmp/run.json" --output "$tmp/r2" >/dev/null 2>&1
"$bin" plot "$tmp/r2" >"$tmp/p2.out" 2>"$tmp/p2.err"
check "plot without requests.csv exits 0" test $? -eq 0
check "it says latency_cdf was skipped and how to get requests.csv" \
  grep -q "note: latency_cdf skipped: .*requests.csv is absent (.*--requests-csv writes it)" "$tmp/p2.err"
check "and draws the other four" \
  bash -c "ls '$tmp/r2/figures' | grep -c '\.dat$' | grep -qx 4 && test ! -e '$tmp/r2/figures/latency_cdf.dat'"

# Time-sliced: replicas take turns, drawn evenly.
"$bin" run "$tmp/run.json" --set cluster.mps=false --output "$tmp/r3" >/dev/null 2>&1
"$bin" plot "$tmp/r3" --no-render >/dev/null 2>&1
check "time-sliced placement: boxes split each GPU evenly" fig placement "$tmp/r3"
check "time-sliced placement says so on its y axis" grep -q "time-sliced (drawn evenly)" "$tmp/r3/figures/placement.gp"

# A centralized dispatch places no replica: no placement map, with a note.
"$bin" run "$tmp/run.json" --unset placement --set dispatch.policy=symphony --unset dispatch.max_wait_ms \
  --unset cluster.mps --output "$tmp/r4" >/dev/null 2>&1
"$bin" plot "$tmp/r4" --no-render >/dev/null 2>"$tmp/p4.err"
check "symphony: the placement map is skipped with a note" \
  bash -c "grep -q 'note: placement skipped: the run has no replicas (dispatch symphony' '$tmp/p4.err' && test ! -e '$tmp/r4/figures/placement.dat' && test -e '$tmp/r4/figures/gpu_busy.dat'"

# ---- batch sizes: a hand-made distribution, its CDF and medians computed by hand -------------
# resnet50: 2 batches of 1, 3 of 4, 5 of 8 (given out of order): 10 batches,
# 2 + 12 + 40 = 54 requests. By batches 2/10, 5/10, 10/10; by requests 2/54,
# 14/54, 54/54. Median by batches: rank ceil(10/2) = 5, reached at size 4; by
# requests: rank 27, reached at 8; p90: rank 9, at 8. alexnet ran no batch.
hand() { # DIR SIZES COUNT: a copy of the run with resnet50's sizes replaced, alexnet's emptied
  rm -rf "$1"; cp -r "$tmp/r" "$1"; rm -rf "$1/figures"
  python3 -c "
import json; p = '$1/summary.json'; d = json.load(open(p))
d['models'][0]['batches'] = {'count': $3, 'mean_size': 5.4, 'sizes': $2}
d['models'][1]['batches'] = {'count': 0, 'mean_size': None, 'sizes': {}}
json.dump(d, open(p, 'w'))"
}
hand "$tmp/hb" '{"8": 5, "1": 2, "4": 3}' 10
"$bin" plot "$tmp/hb" --no-render >/dev/null 2>"$tmp/hb.err"
check "batch_sizes of the hand-made distribution: the CDF rows computed by hand" python3 -c "
rows = [l.split('\t') for l in open('$tmp/hb/figures/batch_sizes.dat').read().split('\n\n\n')[0].splitlines() if l and l[0] != '#']
want = [[0, 0, 0, 0, 0, 0], [1, 2, 2, 0.2, 2, 2 / 54], [4, 3, 5, 0.5, 14, 14 / 54], [8, 5, 10, 1, 54, 1]]
assert len(rows) == 4, rows
for r, w in zip(rows, want):
    assert r[0] == 'resnet50' and [int(x) for x in r[1:4]] == w[:3] and int(r[5]) == w[4], (r, w)
    assert abs(float(r[4]) - w[3]) < 1e-9 and abs(float(r[6]) - w[5]) < 1e-9, (r, w)"
check "... its medians: 4 by batches, 8 by requests, p90 8, 10 batches" \
  grep -qP "^resnet50\t4\t8\t8\t10$" "$tmp/hb/figures/batch_sizes.dat"
check "... alexnet, without a batch, has a note and no curve" bash -c "
  grep -q 'note: batch_sizes: alexnet ran no batch of measured requests, no curve' '$tmp/hb.err' &&
  ! grep -q '^alexnet' '$tmp/hb/figures/batch_sizes.dat'"
check "... the key gives the medians" grep -q 'title "resnet50 by batches (n = 10, median 4)"' "$tmp/hb/figures/batch_sizes.gp"
hand "$tmp/hb2" '{"1": 2, "4": 3, "8": 4}' 10
bad "batch sizes that do not add up to batches.count" \
  "summary.json: models[0].batches.sizes: the sizes count 9 batches, batches.count 10 (the files of two runs?)" plot "$tmp/hb2"
hand "$tmp/hb3" '{"0": 2, "4": 8}' 10
bad "a batch size 0" "summary.json: models[0].batches.sizes" plot "$tmp/hb3"
check "... nothing written" bash -c "test ! -e '$tmp/hb2/figures' && test ! -e '$tmp/hb3/figures'"
hand "$tmp/hb4" '{"1": 2, "4": 3, "8": 5}' 10
python3 -c "
import json; p = '$tmp/hb4/summary.json'; d = json.load(open(p))
for m in d['models']: del m['batches']['sizes']
json.dump(d, open(p, 'w'))"
"$bin" plot "$tmp/hb4" --no-render >/dev/null 2>"$tmp/hb4.err"
check "a summary without batch sizes (older versions): batch_sizes skipped with a note, exit 0" bash -c "
  [ $? -eq 0 ] && grep -q 'note: batch_sizes skipped: .*has no batch sizes' '$tmp/hb4.err' && test ! -e '$tmp/hb4/figures/batch_sizes.dat'"

# ---- gnuplot missing, not wanted, failing --------------------------------------------------
cp -r "$tmp/r" "$tmp/m"
rm -rf "$tmp/m/figures"
CLUSTERSIM_GNUPLOT=/nonexistent "$bin" plot "$tmp/m" >"$tmp/m.out" 2>"$tmp/m.err"
check "CLUSTERSIM_GNUPLOT=/nonexistent: exit 0" test $? -eq 0
check "it warns once that the figures were not rendered, naming the variable" \
  test "$(grep -c "warning: figures not rendered: CLUSTERSIM_GNUPLOT=/nonexistent is not an executable program" "$tmp/m.err")" -eq 1
check "the .dat and .gp files are written, nothing rendered" \
  bash -c "test \$(ls '$tmp/m/figures' | grep -c '\.\(dat\|gp\)$') -eq 10 && ! ls '$tmp/m/figures' | grep -q '\.\(svg\|png\)$'"
check "stdout says they are not rendered" grep -q "(.dat, .gp: not rendered)" "$tmp/m.out"
check "the unrendered .dat and .gp are the rendered run's" \
  bash -c "for f in '$tmp/m/figures'/*; do cmp \"\$f\" '$tmp/r_first'/\$(basename \"\$f\") || exit 1; done"
PATH=/nonexistent-dir "$bin" plot "$tmp/m" >/dev/null 2>"$tmp/m2.err"
check "gnuplot not on PATH: exit 0 and a warning saying how to install it" \
  bash -c "[ $? -eq 0 ] && grep -q 'gnuplot is not on PATH (Debian: apt-get install gnuplot-nox' '$tmp/m2.err'"
"$bin" plot "$tmp/m" --no-render >"$tmp/nr.out" 2>"$tmp/nr.err"
check "--no-render: exit 0, no warning, no renders" \
  bash -c "[ $? -eq 0 ] && test ! -s '$tmp/nr.err' && ! ls '$tmp/m/figures' | grep -q '\.\(svg\|png\)$'"
CLUSTERSIM_GNUPLOT=/bin/false "$bin" plot "$tmp/m" >"$tmp/f.out" 2>"$tmp/f.err"
check "a gnuplot that fails: exit 1 naming the script" \
  bash -c "[ $? -eq 1 ] && grep -q 'figures: /bin/false failed on $tmp/m/figures/latency_cdf.gp' '$tmp/f.err'"
check "... and its .dat and .gp are kept to see why" test -s "$tmp/m/figures/latency_cdf.gp"

# ---- bad RUNDIR: exit 2, a message, nothing written ------------------------------------------
bad "plot of a missing directory" "clustersim plot: $tmp/none: not found" plot "$tmp/none"
mkdir "$tmp/empty"
bad "plot of a directory without summary.json" "summary.json: absent: $tmp/empty is not the output directory of a run" plot "$tmp/empty"
check "nothing written into it" test -z "$(ls -A "$tmp/empty")"
bad "plot without RUNDIR" "expected a RUNDIR" plot
corrupt() { # DIR: a copy of the run (without figures) to break
  rm -rf "$1"; cp -r "$tmp/r" "$1"; rm -rf "$1/figures"
}
corrupt "$tmp/c1"; echo '{"models": [' >"$tmp/c1/summary.json"
bad "a summary.json that is not JSON" "$tmp/c1/summary.json:" plot "$tmp/c1"
corrupt "$tmp/c2"
python3 -c "
import json; p = '$tmp/c2/summary.json'; d = json.load(open(p)); d['models'][1]['replicas'][0]['gpu'] = 7
json.dump(d, open(p, 'w'))"
bad "a replica on a GPU the run does not have" "summary.json: models[1].replicas[0].gpu: " plot "$tmp/c2"
corrupt "$tmp/c3"; sed -i '5s/,alexnet,/,vgg19,/' "$tmp/c3/requests.csv"
bad "requests.csv of another run" "requests.csv: line 5: model \"vgg19\" is not a model of" plot "$tmp/c3"
corrupt "$tmp/c4"; sed -i '7s/^\(\([^,]*,\)\{10\}\)[0-9]*/\1-3/' "$tmp/c4/requests.csv"
bad "a malformed latency" "requests.csv: line 7: column latency_ns" plot "$tmp/c4"
corrupt "$tmp/c5"; sed -i '3s/,[0-9.]*$/,x/' "$tmp/c5/gpus_over_time.csv"
bad "a malformed time series" "gpus_over_time.csv: line 3: column busy_gpus: expected a finite number" plot "$tmp/c5"
check "bad input writes no figures" bash -c "! ls -d '$tmp'/c?/figures* 2>/dev/null"
cp -r "$tmp/r_first" "$tmp/c5/figures"
"$bin" plot "$tmp/c5" >/dev/null 2>&1
check "bad input leaves the figures of an earlier plot alone" diff -r "$tmp/r_first" "$tmp/c5/figures"

# ---- plot --compare: runs side by side ------------------------------------------------
# r, r5 (time-sliced) and hb share dispatch router: labelled by their directories' names.
"$bin" run "$tmp/run.json" --set cluster.mps=false --output "$tmp/r5" --requests-csv >/dev/null 2>&1
"$bin" plot --compare "$tmp/r" "$tmp/r5" "$tmp/hb" -o "$tmp/cmp" >"$tmp/cmp.out" 2>"$tmp/cmp.err"
check "plot --compare exits 0 and lists its figures" bash -c "[ $? -eq 0 ] &&
  grep -q '^4 figures in $tmp/cmp/figures: batch_sizes_compare_resnet50 batch_sizes_compare_alexnet latency_cdf_compare_resnet50 latency_cdf_compare_alexnet ' '$tmp/cmp.out'"
check "compare: each run's block is its summary.json's batch CDF with its median, each latency block on its requests.csv's CDF" \
  fig compare "$tmp/cmp" "$tmp/r" "$tmp/r5" "$tmp/hb"
check "compare: runs sharing a dispatch policy are told apart by their directory" \
  bash -c "grep -q '^# run 0: router (r) = ' '$tmp/cmp/figures/batch_sizes_compare_resnet50.dat' && grep -q '^# run 2: router (hb) = ' '$tmp/cmp/figures/batch_sizes_compare_resnet50.dat'"
check "compare: the hand-made run's median 4 is in the medians block" \
  grep -qP "^router \(hb\)\t4\t10$" "$tmp/cmp/figures/batch_sizes_compare_resnet50.dat"
check "compare: a run without alexnet's batches has a note and no curve" \
  grep -q "note: batch_sizes_compare: $tmp/hb ran no batch of measured requests of alexnet, no curve" "$tmp/cmp.err"
rcheck "compare svg: series labels, medians, axis" \
  fig svg "$tmp/cmp/figures/batch_sizes_compare_resnet50.svg" "router (r) (n = " "router (r5) (n = " "router (hb) (n = 10, median 4)" "batch size (requests)"
for f in batch_sizes_compare_resnet50 latency_cdf_compare_alexnet; do
  rcheck "$f.png: 800 x 500, ink, every series colour drawn" fig png "$tmp/cmp/figures/$f.png" 800 500 "$tmp/cmp/figures/$f.gp"
done
cp -r "$tmp/cmp/figures" "$tmp/cmp_first"
"$bin" plot --compare "$tmp/r" "$tmp/r5" "$tmp/hb" -o "$tmp/cmp" >/dev/null 2>&1
check "a second comparison gives byte-identical files" diff -r "$tmp/cmp_first" "$tmp/cmp/figures"
"$bin" plot --compare "$tmp/r" "$tmp/r4" -o "$tmp/cmp2" --no-render >/dev/null 2>"$tmp/cmp2.err"
check "compare: the latency CDFs need every run's requests.csv (a note names the one without)" bash -c "
  grep -q 'note: latency_cdf_compare skipped: $tmp/r4/requests.csv absent' '$tmp/cmp2.err' &&
  test -e '$tmp/cmp2/figures/batch_sizes_compare_resnet50.dat' && ! ls '$tmp/cmp2/figures' | grep -q latency"
check "compare: different policies are labelled by policy alone" \
  bash -c "grep -q '^# run 0: router = ' '$tmp/cmp2/figures/batch_sizes_compare_resnet50.dat' && grep -q '^# run 1: symphony = ' '$tmp/cmp2/figures/batch_sizes_compare_resnet50.dat'"
"$bin" run "$tmp/gap.json" --output "$tmp/gap2" >/dev/null 2>&1
"$bin" plot --compare "$tmp/r" "$tmp/gap2" -o "$tmp/cmp3" --no-render >/dev/null 2>"$tmp/cmp3.err"
check "compare: a model some run lacks is left out with a note naming the run" bash -c "
  grep -q 'note: no comparison of alexnet: not a model of $tmp/gap2/summary.json' '$tmp/cmp3.err' &&
  test -e '$tmp/cmp3/figures/batch_sizes_compare_resnet50.dat' && test ! -e '$tmp/cmp3/figures/batch_sizes_compare_alexnet.dat'"
cat >"$tmp/bert.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 1, "gpu_type": "v100"},
 "clients": [{"model": "bert", "slo_ms": 200, "rate": 50, "requests": 50}]}
JSON
"$bin" run "$tmp/bert.json" --output "$tmp/bert" >/dev/null 2>&1
bad "compare: runs without a model in common" \
  "the runs have no model in common, nothing to compare ($tmp/r/summary.json has resnet50, alexnet; $tmp/bert/summary.json has bert)" \
  plot --compare "$tmp/r" "$tmp/bert" -o "$tmp/cx"
bad "compare: one run" "--compare: expected at least two RUNDIRs" plot --compare "$tmp/r" -o "$tmp/cx"
bad "compare: a directory without summary.json" "summary.json: absent: $tmp/empty is not the output directory of a run" \
  plot --compare "$tmp/r" "$tmp/empty" -o "$tmp/cx"
bad "compare: an unreadable summary.json" "$tmp/c1/summary.json:" plot --compare "$tmp/c1" "$tmp/r" -o "$tmp/cx"
bad "compare: malformed batch sizes" "summary.json: models[0].batches.sizes: the sizes count 9 batches" \
  plot --compare "$tmp/r" "$tmp/hb2" -o "$tmp/cx"
bad "compare: a run given twice" "given twice" plot --compare "$tmp/r" "$tmp/r/" -o "$tmp/cx"
bad "compare: a malformed requests.csv" "requests.csv: line 7: column latency_ns" plot --compare "$tmp/r" "$tmp/c4" -o "$tmp/cx"
bad "compare: -o into a run's directory" "-o $tmp/r3: holds summary.json, a run's output" plot --compare "$tmp/r" "$tmp/hb" -o "$tmp/r3"
bad "compare without -o" "--compare needs -o OUTDIR" plot --compare "$tmp/r" "$tmp/hb"
bad "-o without --compare" "-o is for --compare" plot "$tmp/r" -o "$tmp/cx"
check "bad comparisons write nothing" bash -c "test ! -e '$tmp/cx' && test ! -e '$tmp/r3/figures.new'"

# ---- sweep figures ------------------------------------------------------------------------------
mkdir -p "$tmp/exp"
cat >"$tmp/exp/base.json" <<JSON
{"profiles": ["$prof"], "cluster": {"gpus": 2, "gpu_type": "v100"},
 "dispatch": {"policy": "router", "max_wait_ms": 100}, "placement": {"policy": "dedicated"},
 "clients": [{"model": "resnet50", "rate": 200, "slo_ms": 200, "requests": 200, "warmup_s": 0.5},
             {"model": "alexnet", "rate": 200, "slo_ms": 200, "requests": 200, "warmup_s": 0.5}]}
JSON
# 2 variants x 3 GPU counts (numeric, given out of order) x 2 loads x 3 seeds.
cat >"$tmp/exp/grid.json" <<'JSON'
{"name": "plot grid", "base": "base.json",
 "variants": [{"name": "dedicated"}, {"name": "usher_mps", "set": {"placement": {"policy": "usher"}, "cluster.mps": true}}],
 "axes": [{"name": "gpus", "path": "cluster.gpus", "values": [1, 3, 2]},
          {"name": "load", "levels": [{"label": "low", "set": {"clients[*].rate": 100}},
                                      {"label": "high", "set": {"clients[*].rate": 400}}]}],
 "seeds": {"first": 1, "count": 3}}
JSON
"$bin" sweep "$tmp/exp/grid.json" -j2 -o "$tmp/s" >"$tmp/s.out" 2>"$tmp/s.err"
check "sweep with figures exits 0, stderr empty, the table alone on stdout" \
  bash -c "[ $? -eq 0 ] && test ! -s '$tmp/s.err' && [ \$(wc -l <'$tmp/s.out') -eq 8 ]"
check "sweep -o: goodput and p99 against gpus, one figure per load" \
  test "$(ls "$tmp/s/figures" | grep '\.gp$' | tr '\n' ' ')" = \
  "goodput_rps_vs_gpus_load-high.gp goodput_rps_vs_gpus_load-low.gp latency_p99_ms_vs_gpus_load-high.gp latency_p99_ms_vs_gpus_load-low.gp "
check "goodput figures: every row is aggregate.csv's mean, ci95 and n, every cell drawn once" \
  fig sweep-dat "$tmp/s" goodput_rps total
check "p99 figures: the same" fig sweep-dat "$tmp/s" latency_p99_ms total
check "numeric x in value order (1, 2, 3) although the axis lists 1, 3, 2" \
  test "$(grep -v '^#' "$tmp/s/figures/goodput_rps_vs_gpus_load-low.dat" | awk -F'\t' '$1 == "dedicated" {printf "%s", $2}')" = 123
rcheck "what gnuplot draws (its table) is the .dat's mean and mean ± ci95 (goodput)" \
  fig table "$tmp/s/figures" goodput_rps_vs_gpus_load-high
rcheck "what gnuplot draws is the .dat (p99, with the SLO line)" \
  fig table "$tmp/s/figures" latency_p99_ms_vs_gpus_load-high
check "the p99 figure marks the models' common SLO" grep -q 'title "SLO (200 ms)"' "$tmp/s/figures/latency_p99_ms_vs_gpus_load-high.gp"
# The SLO an axis sets: each figure at one SLO marks it; a figure across SLOs
# marks none.
cat >"$tmp/exp/slo.json" <<'JSON'
{"base": "base.json", "variants": [{"name": "dedicated"}],
 "axes": [{"name": "gpus", "path": "cluster.gpus", "values": [1, 2]},
          {"name": "slo", "levels": [{"label": "150", "set": {"clients[*].slo_ms": 150}},
                                     {"label": "250", "set": {"clients[*].slo_ms": 250}}]}],
 "seeds": [1]}
JSON
"$bin" sweep "$tmp/exp/slo.json" -j2 -o "$tmp/slo" --no-render >/dev/null 2>&1
check "a figure at SLO 150 ms marks 150, one at 250 ms marks 250" bash -c "
  grep -q 'title \"SLO (150 ms)\"' '$tmp/slo/figures/latency_p99_ms_vs_gpus_slo-150.gp' &&
  grep -q 'title \"SLO (250 ms)\"' '$tmp/slo/figures/latency_p99_ms_vs_gpus_slo-250.gp'"
check "a figure across SLOs marks none" bash -c "! grep -q 'SLO (' '$tmp/slo/figures/latency_p99_ms_vs_slo_gpus-1.gp'"
rcheck "goodput svg: every series title, both axis labels, the fixed axis" \
  fig svg "$tmp/s/figures/goodput_rps_vs_gpus_load-high.svg" dedicated usher_mps gpus "goodput (req/s)" \
  "(load = high)" "over 3 seeds"
rcheck "p99 svg: series, axis labels with the unit" \
  fig svg "$tmp/s/figures/latency_p99_ms_vs_gpus_load-low.svg" dedicated usher_mps gpus "p99 latency (ms"
for f in goodput_rps_vs_gpus_load-high latency_p99_ms_vs_gpus_load-low; do
  rcheck "$f.png: 800 x 500, ink, every series colour drawn" \
    fig png "$tmp/s/figures/$f.png" 800 500 "$tmp/s/figures/$f.gp"
done
cp -r "$tmp/s/figures" "$tmp/s_first"
"$bin" sweep plot "$tmp/s" >"$tmp/sp.out" 2>&1
check "sweep plot redraws byte-identical figures" diff -r "$tmp/s_first" "$tmp/s/figures"
check "sweep plot lists them" grep -q "^4 figures in $tmp/s/figures: goodput_rps_vs_gpus_load-low" "$tmp/sp.out"
"$bin" sweep "$tmp/exp/grid.json" -j1 -o "$tmp/s1" >/dev/null 2>&1
check "-j1 and -j2 give the same figures" diff -r "$tmp/s/figures" "$tmp/s1/figures"
"$bin" sweep "$tmp/exp/grid.json" -j1 --shard 1/2 -o "$tmp/sh1" >/dev/null 2>&1
"$bin" sweep "$tmp/exp/grid.json" -j1 --shard 2/2 -o "$tmp/sh2" >/dev/null 2>&1
check "a shard draws no figure (it has no aggregate)" test ! -e "$tmp/sh1/figures"
"$bin" sweep "$tmp/exp/grid.json" -j1 --shard 2/2 -o "$tmp/s1" --force >/dev/null 2>&1
check "a shard written over an unsharded sweep removes its figures" test ! -e "$tmp/s1/figures"
"$bin" sweep merge -o "$tmp/sm" "$tmp/sh1" "$tmp/sh2" >/dev/null 2>&1
check "sweep merge draws the unsharded sweep's figures" diff -r "$tmp/s/figures" "$tmp/sm/figures"
"$bin" sweep plot "$tmp/s" --metric throughput_rps --model alexnet --no-render >/dev/null 2>&1
check "sweep plot --metric --model: the model's figures, checked the same way" \
  bash -c "fig() { python3 '$chk' \"\$@\"; }; fig sweep-dat '$tmp/s' throughput_rps alexnet && fig sweep-dat '$tmp/s' latency_p99_ms alexnet && test -e '$tmp/s/figures/alexnet_throughput_rps_vs_gpus_load-low.gp'"
# The figures drawn before stay (sweep plot --metric once deleted them):
# only the set's own names are replaced.
check "sweep plot --metric keeps the figures drawn before, rendered ones too" \
  bash -c "cd '$tmp/s_first' && for f in *; do cmp \"\$f\" '$tmp/s/figures/'\"\$f\" || exit 1; done"
"$bin" sweep plot "$tmp/s" --no-render >/dev/null 2>&1
check "sweep plot of the default metric again keeps alexnet's and drops only its own old renders" \
  bash -c "test -e '$tmp/s/figures/alexnet_throughput_rps_vs_gpus_load-low.gp' && test -e '$tmp/s/figures/goodput_rps_vs_gpus_load-low.gp' && test ! -e '$tmp/s/figures/goodput_rps_vs_gpus_load-low.svg'"

# A categorical axis (labels with % and spaces) and one seed: positions on x, no bars.
cat >"$tmp/exp/cat.json" <<'JSON'
{"name": "plot categories", "base": "base.json",
 "variants": [{"name": "dedicated"}, {"name": "wait20", "set": {"dispatch.max_wait_ms": 20}}],
 "axes": [{"name": "load", "levels": [{"label": "light 50%", "set": {"clients[*].rate": 100}},
                                      {"label": "heavy", "set": {"clients[*].rate": 400}}]}],
 "seeds": [4]}
JSON
"$bin" sweep "$tmp/exp/cat.json" -o "$tmp/cat" >/dev/null 2>"$tmp/cat.err"
check "categorical sweep: exit 0, stderr empty" bash -c "[ $? -eq 0 ] && test ! -s '$tmp/cat.err'"
check "categorical: the first axis is x, the labels at 0, 1, ..." fig sweep-dat "$tmp/cat" goodput_rps total
check "one seed: ci95 NaN in the .dat" grep -qP "^dedicated\t0\tlight 50%\t[0-9.e+-]+\tNaN\t1$" "$tmp/cat/figures/goodput_rps_vs_load.dat"
rcheck "one seed: gnuplot draws the mean without a bar" fig table "$tmp/cat/figures" goodput_rps_vs_load
rcheck "a label holding % is a tic label, not a format" fig svg "$tmp/cat/figures/goodput_rps_vs_load.svg" "light 50%" heavy

# No axis: the variants side by side.
cat >"$tmp/exp/noaxis.json" <<'JSON'
{"name": "plot variants", "base": "base.json",
 "variants": [{"name": "dedicated"}, {"name": "wait20", "set": {"dispatch.max_wait_ms": 20}}],
 "seeds": {"first": 1, "count": 2}}
JSON
"$bin" sweep "$tmp/exp/noaxis.json" -o "$tmp/na" >/dev/null 2>&1
check "no axis: metric vs variant" fig sweep-dat "$tmp/na" goodput_rps total
rcheck "no axis: rendered, variants as x tics" fig svg "$tmp/na/figures/goodput_rps_vs_variant.svg" dedicated wait20

# gnuplot missing during a sweep: outputs and scripts written, a warning, exit 0.
CLUSTERSIM_GNUPLOT=/nonexistent "$bin" sweep "$tmp/exp/noaxis.json" -o "$tmp/na2" >/dev/null 2>"$tmp/na2.err"
check "sweep without gnuplot: exit 0, one warning, .dat and .gp written" \
  bash -c "[ $? -eq 0 ] && [ \$(grep -c 'warning: figures not rendered' '$tmp/na2.err') -eq 1 ] && test -s '$tmp/na2/figures/goodput_rps_vs_variant.gp' && test ! -e '$tmp/na2/figures/goodput_rps_vs_variant.png'"
check "... and the sweep's own outputs are the same as with gnuplot" \
  bash -c "for f in runs.csv aggregate.csv aggregate.json sweep.json; do cmp '$tmp/na/'\$f '$tmp/na2/'\$f || exit 1; done"

# sweep plot on bad directories.
bad "sweep plot of a run directory" "$tmp/r/sweep.json: absent: $tmp/r is not the output directory of a sweep (clustersim sweep EXPERIMENT -o DIR, or sweep merge -o DIR); it is a run's: clustersim plot draws its figures" sweep plot "$tmp/r"
bad "plot of a sweep directory" "it is a sweep's: clustersim sweep plot draws its figures" plot "$tmp/cat"
cp -r "$tmp/cat" "$tmp/bc1"; sed -i '1s/,load,/,loads,/' "$tmp/bc1/aggregate.csv"
bad "aggregate.csv with other axes than sweep.json" \
  "aggregate.csv: line 1: expected the columns variant,load,model,metric,n,n_nan,mean,sd,ci95" sweep plot "$tmp/bc1"
cp -r "$tmp/cat" "$tmp/bc2"
sed -i 's/^\(dedicated,heavy,total,goodput_rps,1,0,\)[0-9.e+-]*/\1abc/' "$tmp/bc2/aggregate.csv"
bad "a mean that is not a number" "aggregate.csv: line $(grep -n '^dedicated,heavy,total,goodput_rps,' "$tmp/bc2/aggregate.csv" | cut -d: -f1): column mean: expected a finite number, got \"abc\"" sweep plot "$tmp/bc2"
bad "sweep plot --model of no model" "no statistics of model \"nosuch\" (models: resnet50, alexnet, total)" \
  sweep plot "$tmp/cat" --model nosuch
bad "sweep plot --metric that is no metric" "--metric bogus: not a metric of runs.csv" sweep plot "$tmp/cat" --metric bogus
check "bad sweep plots leave the figures as they were" diff -r "$tmp/cat/figures" "$tmp/bc2/figures"

finish
