#!/bin/bash
# tools/plot_over_time.py on hand-made run directories: the windows' sums and
# the GPU level in force are worked by hand below.
. "$(dirname "$0")/harness.sh"

mkdir -p "$tmp/a"
cat > "$tmp/a/models_over_time.csv" <<'CSV'
time_s,model,sent,good,bad,goodput_rps
0,x,10,8,1,8
1,x,10,9,0,9
0,y,4,4,0,4
2,y,6,2,2,2
CSV
cat > "$tmp/a/cluster_over_time.csv" <<'CSV'
time_s,gpus_provisioned
0,2
1.5,3
3,0
CSV
(cd "$tmp" && python3 "$src/tools/plot_over_time.py" -o "$tmp/out" --window 2 --no-render "run a=a")
# Window [0, 2): good 8 + 9 + 4 = 21, bad 1, sent 24 -> 10.5, 0.5, 12 per s,
# 2 GPUs at 0. Window [2, 4): good 2, bad 2, sent 6 -> 1, 1, 3; 3 GPUs at 2.
check "first window: sums over models and bins, per second" \
  grep -qx "0 10.5 0.5 12 2" "$tmp/out.dat"
check "second window: the GPU level in force at its start" \
  grep -qx "2 1 1 3 3" "$tmp/out.dat"
check "a gnuplot script naming the run" grep -q "title 'run a'" "$tmp/out.gp"
python3 "$src/tools/plot_over_time.py" -o "$tmp/out2" --no-render "b=$tmp/nope" 2>"$tmp/err"
check "a missing run directory: exit 2" test $? -eq 2
check "a missing run directory: the file in the message" \
  grep -q "nope/models_over_time.csv" "$tmp/err"
finish
