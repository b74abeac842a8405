set terminal svg size 720,560 dynamic font 'sans,12' noenhanced
set output 'gpu_pairs_scatter.svg'
set title 'Pairs left out of the fit: slowdown over the solo latency (iGniter V100)'
set xlabel 'measured latency / solo latency'
set ylabel 'simulated latency / solo latency'
set xrange [1.0:1.25]
set yrange [1.0:1.25]
set size square
set key top left
set grid
plot 'gpu_pairs_scatter.dat' using ($1/$2):($3/$2) with points pt 6 ps 0.5 title 'before: constant 1 + c0', \
     '' using ($1/$2):($4/$2) with points pt 7 ps 0.4 title 'now: batch_share model', \
     x with lines lc rgb '#555555' dt 2 title 'simulated = measured'
