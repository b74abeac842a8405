set terminal svg size 720,420 dynamic font 'sans,12'
set output 'performance_cost_per_request.svg'
set multiplot layout 1,2 title 'clustersim, workload a (bench/scale.py)'
set logscale x
set xrange [5e5:2e8]
set xlabel 'simulated requests'
set format x '10^{%L}'
set grid
set key off
set yrange [0:*]
set ylabel 'engine ns per simulated request'
plot 'performance_cost_per_request.dat' using 1:2 with linespoints pt 7 lw 2
set ylabel 'peak RSS bytes per request'
plot 'performance_cost_per_request.dat' using 1:3 with linespoints pt 7 lw 2
unset multiplot
