#!/bin/bash
# tools/paired_gain.py on a hand-made runs.csv: the differences per seed and
# their t interval are worked by hand below.
. "$(dirname "$0")/harness.sh"

cat > "$tmp/runs.csv" <<'CSV'
run_id,variant,gpus,seed,model,status,error,goodput_rps,warnings
1,a,1,1,total,ok,,100,
2,a,1,2,total,ok,,110,
3,a,1,3,total,ok,,120,
4,b,1,1,total,ok,,90,
5,b,1,2,total,ok,,96,
6,b,1,3,total,ok,,105,
7,c,1,1,total,ok,,10,
8,c,1,2,total,ok,,10,
9,c,1,3,total,ok,,10,
10,a,1,1,x,ok,,999,
CSV
out=$(python3 "$src/tools/paired_gain.py" "$tmp" a)
# Best other at gpus=1: b (mean 97). Differences 10, 14, 15: mean 13,
# stdev sqrt(((-3)^2 + 1^2 + 2^2) / 2) = sqrt(7) = 2.6458, half-width
# t(2) 4.303 x 2.6458 / sqrt(3) = 6.573; gain 13 / 97 = 13.4 %.
check "best other, paired mean, t interval, relative gain" \
  test "$(echo "$out" | tail -1)" = "1,b,97.0,110.0,13.0,6.6,13.4,3"
python3 "$src/tools/paired_gain.py" "$tmp" nope 2>/dev/null
check "a variant that is not there: exit status 2" test $? -eq 2
finish
