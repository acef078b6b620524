# style.gp: the shared look of lockstorm's charts. Every chart script
# (timeline.gp, latency.gp, rate.gp, fencing.gp in a run directory) loads
# it first, then calls `eval ls_terminal(WIDTH, HEIGHT)` and loads
# faults.gp, which shades each fault window on the time axis.
# lockstorm copies this file into each run directory as style.gp.

# SVG, scaled to its container (the HTML report), no JavaScript.
ls_terminal(w, h) = sprintf("set terminal svg size %d,%d dynamic enhanced font 'Helvetica,12' linewidth 1.2 background '#ffffff'", w, h)

# Colours (colour-blind safe: Okabe-Ito).
ls_grant   = '#0072B2'
ls_busy    = '#999999'
ls_unknown = '#CC79A7'
ls_failed  = '#D55E00'
ls_hold    = '#56B4E9'
ls_lease   = '#E69F00'
ls_stale   = '#D62728'
ls_broken  = '#6A1B9A'
ls_fault   = '#F0E442'
ls_plain   = '#D55E00'
ls_fenced  = '#009E73'
ls_rejects = '#555555'

set style line 1 lc rgb ls_grant lw 1.5 pt 7 ps 0.35
set style line 2 lc rgb ls_busy lw 1.5 pt 1 ps 0.45
set style line 3 lc rgb ls_unknown lw 1.5 pt 9 ps 0.9
set style line 4 lc rgb ls_failed lw 1.5 pt 2 ps 0.8
set style line 5 lc rgb '#000000' lw 2
set style line 6 lc rgb ls_stale lw 2 dt 2
set style line 7 lc rgb ls_plain lw 2
set style line 8 lc rgb ls_fenced lw 2
set style line 9 lc rgb ls_rejects lw 1.5 dt 3

set border 3 lc rgb '#444444'
set tics nomirror out scale 0.6 textcolor rgb '#333333'
set grid xtics ytics lc rgb '#e5e5e5' lw 1 dt 1
set key outside top center horizontal maxrows 2 samplen 2 spacing 1.1 font ',11'
set xlabel 'time since run start (s)' textcolor rgb '#333333'
set title font ',13' textcolor rgb '#222222'
set datafile missing 'NaN'
set datafile commentschars '#'
set style fill solid 1.0 noborder
