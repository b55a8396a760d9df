#!/usr/bin/env bash
# Memory and disk of a durable gate that holds EFFECTS admitted effects (default one
# million): it starts `soundgate serve` (durable, --snapshot-every SNAPSHOT_EVERY),
# admits new keys with soundgate-bench (8 connections x 32 in flight) until EFFECTS
# are admitted, lets the compaction loop run, and prints the gate's resident size
# (VmRSS, and its peak VmHWM, from /proc) and what its data directory holds: the
# snapshot, the segments left after compaction, and their bytes. The last line is the
# summary.
#
#   bash ci/bench/memory.sh
#   EFFECTS=200000 bash ci/bench/memory.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

EFFECTS=${EFFECTS:-1000000}
SNAPSHOT_EVERY=${SNAPSHOT_EVERY:-100000}
BENCH_DIR=${BENCH_DIR:-$PWD/build/bench}
GO=${GO:-go}
die() { echo "memory bench: FAILED: $*" >&2; exit 1; }
[ -r /proc/self/status ] || die "no /proc: the resident size cannot be read here"

. ci/bench/lib.sh
bench_workdir memory
bench_setup

sock="$work/gate.sock"
"$work/soundgate" serve --roles "$work/roles.json" --data "$work/data" --listen "" --unix "$sock" \
  --snapshot-every "$SNAPSHOT_EVERY" --max-keys-per-run "$EFFECTS" >"$work/gate.log" 2>&1 &
gate_pid=$!; pids+=("$gate_pid")
await_listening "$work/gate.log" "$gate_pid" || { cat "$work/gate.log"; die "the gate did not start"; }

# Each bench call opens its own runs (prefix) and admits new keys on them; repeat
# until EFFECTS are admitted.
admitted=0
round=0
while [ "$admitted" -lt "$EFFECTS" ]; do
  round=$((round + 1))
  out=$("$work/soundgate-bench" --addr "unix:$sock" --token "$AGENT" --operator-token "$OPERATOR" \
    --clients 8 --pipeline 32 --runs 16 --duration 5s -q) ||
    { echo "$out" >&2; die "soundgate-bench failed"; }
  n=$(sed -n 's/^admissions: \([0-9]*\) in.*/\1/p' <<<"$out")
  [ -n "$n" ] || { echo "$out" >&2; die "cannot read soundgate-bench output"; }
  admitted=$((admitted + n))
  echo "memory-bench: $admitted effects admitted"
done
sleep 3 # the compaction loop looks once a second
kill -0 "$gate_pid" 2>/dev/null || { cat "$work/gate.log"; die "the gate died"; }
rss_kib=$(awk '/^VmRSS:/ { print $2 }' "/proc/$gate_pid/status")
hwm_kib=$(awk '/^VmHWM:/ { print $2 }' "/proc/$gate_pid/status")
snap=$(find "$work/data" -maxdepth 1 -name '*.snap' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
segs=$(find "$work/data" -maxdepth 1 -name '*.wal' | wc -l)
seg_bytes=$(find "$work/data" -maxdepth 1 -name '*.wal' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
last_snap=$(grep 'msg=snapshot' "$work/gate.log" | tail -n 1 || true)
[ -n "$last_snap" ] || die "the gate took no snapshot"
echo "memory-bench: last snapshot: ${last_snap#*msg=snapshot }"
awk -v n="$admitted" -v rss="$rss_kib" -v hwm="$hwm_kib" -v snap="$snap" -v segs="$segs" -v sb="$seg_bytes" 'BEGIN {
  printf "memory bench: %d effects admitted: gate resident %.1f MiB (peak %.1f MiB, %.0f bytes per effect); data dir after compaction: snapshot %.1f MiB + %d segments %.1f MiB\n",
    n, rss / 1024, hwm / 1024, rss * 1024 / n, snap / 1048576, segs, sb / 1048576 }'
