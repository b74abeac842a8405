set terminal svg size 720,480 dynamic font 'sans,12' noenhanced
set output 'vidur_ttft_cdf.svg'
set title 'TTFT, vllm_uniform_q3: Llama-2-7B on one A100, the same 200 requests'
set xlabel 'time to first token (s)'
set ylabel 'fraction of requests'
set logscale x
set yrange [0:1]
set key bottom right
set grid
plot 'vidur_ttft_cdf.dat' using 1:2 with lines lw 3 title 'Vidur (forests trained on the sample)', \
     '' using 5:6 with lines lw 2 dt 2 title "clustersim on Vidur's predictions", \
     '' using 3:4 with lines lw 2 title 'clustersim on its own tables (linear)'
