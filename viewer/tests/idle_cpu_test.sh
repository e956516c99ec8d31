#!/usr/bin/env bash
# The desktop viewer left alone (model loaded, result shown, no input) must stay quiet: it waits
# for events instead of drawing frames (issue 30). Prints the CPU time it used over 10 s as a share
# of one core: the published figure (≤ 5 % on an idle machine; before the fix: 114–143 %). It fails
# only above 50 %, where a loop drawing every frame sits on any machine: an idle process uses less
# CPU, not more, when the machine is busy, but the figure itself is a benchmark's (issue 56).
#   idle_cpu_test.sh VIEWER MODEL      (under xvfb-run)
set -u
viewer=$1 model=$2
"$viewer" --model "$model" --text "In the beginning God created the [MASK] and the earth." &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
sleep 8  # load, compute, first frames
hz=$(getconf CLK_TCK)
t1=$(awk '{print $14 + $15}' /proc/$pid/stat)
sleep 10
t2=$(awk '{print $14 + $15}' /proc/$pid/stat)
pct=$(awk -v d=$((t2 - t1)) -v hz="$hz" 'BEGIN { printf "%.1f", 100 * d / hz / 10 }')
echo "viewer idle: ${pct} % of one core over 10 s (figure; the published one is ≤ 5 % on an idle machine)"
awk -v p="$pct" 'BEGIN { exit !(p <= 50.0) }'
