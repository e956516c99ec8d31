#!/usr/bin/env bash
# Two threads against one, measured the way docs/performance.md asks (issue 17): for each shape,
# rounds of `deberta bench` at 1 and at 2 threads run back to back (so both see the same host
# load), then the medians over rounds and the ratio. With --ceiling, each round also runs two
# single-threaded forwards at once, one pinned to each of the first two CPUs: the throughput of
# two fully independent copies is what this machine's two cores can give at best, with no split
# and no waiting — the ceiling to read the 2-thread ratio against on a shared host.
#
# Usage: scripts/bench_threads.sh [--rounds R] [--repeat K] [--ceiling] [SHAPE ...]
#   SHAPE is preset:N (default: xsmall:128 xsmall:512 base:128 base:512); needs build/bin/deberta
#   (scripts/build.sh) and python3. Prints one line per round and a summary per shape.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/bin/deberta
rounds=5 repeat=10 ceiling=0 shapes=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --ceiling) ceiling=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *:*) shapes+=("$1"); shift ;;
    *) echo "bench_threads.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#shapes[@]} -gt 0 ] || shapes=(xsmall:128 xsmall:512 base:128 base:512)
[ -x "$bin" ] || { echo "bench_threads.sh: $bin not found; run scripts/build.sh first" >&2; exit 1; }

# median_ms of one `deberta bench` run: bench PRESET N THREADS [taskset CPU]
bench() {
  local pin=()
  [ $# -ge 4 ] && pin=(taskset -c "$4")
  "${pin[@]}" "$bin" bench --preset "$1" --seq "$2" --threads "$3" --repeat "$repeat" --json |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["median_ms"])'
}

for shape in "${shapes[@]}"; do
  preset=${shape%%:*} n=${shape##*:}
  log=$(mktemp)
  for r in $(seq "$rounds"); do
    one=$(bench "$preset" "$n" 1) two=$(bench "$preset" "$n" 2)
    line="$one $two"
    if [ "$ceiling" = 1 ]; then
      a=$(mktemp) b=$(mktemp)
      bench "$preset" "$n" 1 0 >"$a" & bench "$preset" "$n" 1 1 >"$b"; wait
      line="$line $(cat "$a") $(cat "$b")"
      rm -f "$a" "$b"
    fi
    echo "$line" >>"$log"
  done
  python3 - "$preset" "$n" "$log" <<'EOF'
import statistics as st, sys
preset, n, path = sys.argv[1], sys.argv[2], sys.argv[3]
rows = [[float(v) for v in line.split()] for line in open(path)]
for i, r in enumerate(rows, 1):
    extra = f" | two 1-thread copies at once {r[2]:.1f} / {r[3]:.1f} ms: {r[0] / r[2] + r[0] / r[3]:.2f}x" if len(r) > 2 else ""
    print(f"{preset} N={n} round {i}: 1 thread {r[0]:.1f} ms, 2 threads {r[1]:.1f} ms, {r[0] / r[1]:.2f}x{extra}")
one, two = st.median(r[0] for r in rows), st.median(r[1] for r in rows)
summary = (f"{preset} N={n}: medians over {len(rows)} rounds 1 thread {one:.1f} ms, 2 threads {two:.1f} ms: "
           f"{one / two:.2f}x (median of the rounds' ratios {st.median(r[0] / r[1] for r in rows):.2f}x)")
if len(rows[0]) > 2:
    summary += f"; ceiling (two copies at once) {st.median(r[0] / r[2] + r[0] / r[3] for r in rows):.2f}x"
print(summary)
EOF
  rm -f "$log"
done
