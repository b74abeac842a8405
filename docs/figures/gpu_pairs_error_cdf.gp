set terminal svg size 720,480 dynamic font 'sans,12' noenhanced
set output 'gpu_pairs_error_cdf.svg'
set title 'Relative error of 750 measured co-located latencies (iGniter V100)'
set xlabel '|simulated - measured| / measured (%)'
set ylabel 'fraction of latencies'
set xrange [0:15]
set yrange [0:1]
set key bottom right
set grid
plot 'gpu_pairs_error_cdf.dat' using 1:2 with lines lw 2 title 'measured pair, before (flat factor)', \
     '' using 3:4 with lines lw 2 title 'measured pair, now (model x scale)', \
     '' using 5:6 with lines lw 2 dt 2 title 'unseen pair, before (constant)', \
     '' using 7:8 with lines lw 2 dt 2 title 'unseen pair, now (batch_share)'
