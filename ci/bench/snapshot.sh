#!/usr/bin/env bash
# Do snapshots stop the gate? For each size of state (EFFECTS, default 1 and 10
# million admitted effects), it fills a durable gate with soundgate-bench, then runs
# the same load (CLIENTS connections x DEPTH in flight over RUNS runs, SECONDS_PER_RUN,
# at the gate's default limits) on two copies
# of that data directory: once with --snapshot-every 0 (no snapshot: the reference),
# once with the default compaction, whose first snapshot after the restart (after
# 100,000 records) encodes and writes the whole state during the run. It prints the
# admit latency p999 and max of both runs and the ratio of the max with snapshots to
# the p999 without; the gate's own log says when the snapshot ran (encode=, took=).
#
#   bash ci/bench/snapshot.sh
#   EFFECTS="1000000" ROUNDS=3 bash ci/bench/snapshot.sh
#
# The machine is shared and its disk's latency varies: compare the two runs of one
# round, and look at several rounds. The last line is the summary.
set -euo pipefail
cd "$(dirname "$0")/../.."

EFFECTS=${EFFECTS:-"1000000 10000000"}
ROUNDS=${ROUNDS:-2}
CLIENTS=${CLIENTS:-8}
DEPTH=${DEPTH:-32}
# A snapshot is paced to a fifth of a core and takes about 6 s per million effects
# here: by default a run lasts 10 s plus 8 s per million, so that it holds one.
SECONDS_PER_RUN=${SECONDS_PER_RUN:-}
BENCH_DIR=${BENCH_DIR:-$PWD/build/bench}
GO=${GO:-go}
say() { echo "snapshot-bench: $*"; }
die() { echo "snapshot bench: FAILED: $*" >&2; exit 1; }

. ci/bench/lib.sh
bench_workdir snapshot
bench_setup
sock="$work/gate.sock"

start_gate() { # DATA_DIR EXTRA_FLAGS...
  local data=$1; shift
  "$work/soundgate" serve --roles "$work/roles.json" --data "$data" --listen "" --unix "$sock" \
    "$@" >"$work/gate.log" 2>&1 &
  gate_pid=$!; pids+=("$gate_pid")
  # Replaying the filled log (no snapshot in it) takes about a second per million records.
  await_listening "$work/gate.log" "$gate_pid" 300 || { cat "$work/gate.log"; die "the gate did not start"; }
}
stop_gate() { kill "$gate_pid" 2>/dev/null || true; wait "$gate_pid" 2>/dev/null || true; gate_pid=; }
load() { # SECONDS -> the bench's output
  # Runs enough that none outgrows the gate's default --max-keys-per-run (65,536) in
  # SECONDS at some 150,000 admits a second: the gate is measured at its defaults.
  "$work/soundgate-bench" --addr "unix:$sock" --token "$AGENT" --operator-token "$OPERATOR" \
    --clients "$CLIENTS" --pipeline "$DEPTH" --runs "${RUNS:-$((16 + 4 * $1))}" --duration "${1}s" -q || die "soundgate-bench failed"
}
field() { # NAME OUTPUT -> the value of NAME= on the "latency new" line, in ms
  awk -v name="$1" '/^latency new/ { for (i = 1; i <= NF; i++) if (index($i, name "=") == 1) print substr($i, length(name) + 2) }' <<<"$2" |
    awk '{ d = $1; if (d ~ /µs$/) { sub(/µs$/, "", d); printf "%.3f", d / 1000 } else if (d ~ /ms$/) { sub(/ms$/, "", d); printf "%.3f", d }
      else if (d ~ /ns$/) { sub(/ns$/, "", d); printf "%.3f", d / 1e6 } else if (d ~ /s$/) { sub(/s$/, "", d); printf "%.3f", d * 1000 } }'
}

summary=""
for n in $EFFECTS; do
  rm -rf "$work/filled"
  start_gate "$work/filled" --snapshot-every 0
  admitted=0
  while [ "$admitted" -lt "$n" ]; do
    out=$(load 5)
    admitted=$((admitted + $(sed -n 's/^admissions: \([0-9]*\) in.*/\1/p' <<<"$out")))
  done
  stop_gate
  say "$admitted effects in the state"
  secs=${SECONDS_PER_RUN:-$((10 + 8 * n / 1000000))}
  for round in $(seq 1 "$ROUNDS"); do
    for mode in off on; do
      rm -rf "$work/data"; cp -r "$work/filled" "$work/data"
      # The copy's write-back (a gigabyte at 10M) must not fall in the run: the
      # kernel would flush it while the gate waits for its own fdatasyncs.
      sync
      if [ "$mode" = off ]; then start_gate "$work/data" --snapshot-every 0; else start_gate "$work/data"; fi
      out=$(load "$secs")
      stop_gate
      snap=$({ grep 'msg=snapshot ' "$work/gate.log" || true; } | head -n 1 | sed 's/.*\(encode=[^ ]*\) \(took=[^ ]*\).*/\1 \2/')
      [ "$mode" = on ] && [ -z "$snap" ] && die "no snapshot was taken during the run with snapshots (raise SECONDS_PER_RUN)"
      p999=$(field p999 "$out"); mx=$(field max "$out")
      eval "p999_$mode=$p999; max_$mode=$mx"
      say "$admitted effects, round $round, snapshots $mode: p999 $p999 ms, max $mx ms${snap:+ (snapshot $snap)}"
    done
    ratio=$(awk -v m="$max_on" -v p="$p999_off" 'BEGIN { printf "%.2f", m / p }')
    summary="$summary $admitted effects round $round (${secs}s runs): max with snapshots $max_on ms, p999 without $p999_off ms (x$ratio), max without $max_off ms;"
  done
done
echo
echo "snapshot bench (${CLIENTS}x${DEPTH}, admit latency):$summary"
