#!/usr/bin/env bash
# Retention: a durable gate that takes new runs for a long while keeps its resident
# size and its data directory flat once finished runs start to retire. It starts
# `soundgate serve` (durable, --retention RETENTION, --snapshot-every SNAPSHOT_EVERY)
# and runs soundgate-bench's lifecycle load: new runs without end, EFFECTS_PER_RUN
# new keys admitted and completed on each, until EFFECTS (default ten million over one
# million runs) at RATE effects per second (default 12000: a steady rate keeps the set of
# runs not yet retired steady, so that what grows is what does not retire). Every
# SAMPLE it prints the effects and runs so far, the gate's
# resident size (VmRSS) and its data directory's bytes. The summary compares the last
# sample with the first one taken after WARMUP (the first retention period and a
# snapshot after it): the ratios are what "flat" means here, and the retired runs'
# own cost (their ids) is printed beside them. The bench's run ids order in time, and
# with ORDERED_IDS=1 (the default) the gate runs with --ordered-ids, so that a retired
# run costs nothing (the watermark); ORDERED_IDS=0 keeps the exact set of retired ids,
# which grows with them.
#
#   bash ci/bench/retention.sh
#   EFFECTS=1000000 bash ci/bench/retention.sh
#   ORDERED_IDS=0 bash ci/bench/retention.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

EFFECTS=${EFFECTS:-10000000}
EFFECTS_PER_RUN=${EFFECTS_PER_RUN:-10}
RETENTION=${RETENTION:-10s}
SNAPSHOT_EVERY=${SNAPSHOT_EVERY:-200000}
SAMPLE=${SAMPLE:-10s}
WARMUP=${WARMUP:-40} # seconds: the first sample at or after it is the reference
RATE=${RATE:-12000}
ORDERED_IDS=${ORDERED_IDS:-1}
CLIENTS=${CLIENTS:-8}
PIPELINE=${PIPELINE:-16}
BENCH_DIR=${BENCH_DIR:-$PWD/build/bench}
GO=${GO:-go}
die() { echo "retention bench: FAILED: $*" >&2; exit 1; }
[ -r /proc/self/status ] || die "no /proc: the resident size cannot be read here"

. ci/bench/lib.sh
bench_workdir retention
bench_setup

sock="$work/gate.sock"
ordered=()
case "$ORDERED_IDS" in
1) ordered=(--ordered-ids); mode="watermark (--ordered-ids)" ;;
0) mode="exact set of retired ids" ;;
*) die "ORDERED_IDS is 0 or 1, not $ORDERED_IDS" ;;
esac
"$work/soundgate" serve --roles "$work/roles.json" --data "$work/data" --listen "" --unix "$sock" \
  --retention "$RETENTION" --snapshot-every "$SNAPSHOT_EVERY" "${ordered[@]}" >"$work/gate.log" 2>&1 &
gate_pid=$!; pids+=("$gate_pid")
await_listening "$work/gate.log" "$gate_pid" || { cat "$work/gate.log"; die "the gate did not start"; }

"$work/soundgate-bench" --addr "unix:$sock" --token "$AGENT" --operator-token "$OPERATOR" \
  --clients "$CLIENTS" --pipeline "$PIPELINE" --effects "$EFFECTS" --effects-per-run "$EFFECTS_PER_RUN" \
  --rate "$RATE" --gate-pid "$gate_pid" --data "$work/data" --sample "$SAMPLE" | tee "$work/samples.log" ||
  { tail -n 20 "$work/gate.log" >&2; die "soundgate-bench failed"; }
kill -0 "$gate_pid" 2>/dev/null || { cat "$work/gate.log"; die "the gate died"; }
snaps=$(grep -c 'msg=snapshot' "$work/gate.log" || true)
[ "$snaps" -gt 0 ] || die "the gate took no snapshot"
# The snapshots' entries are the runs and effects not retired: steady if retirement
# keeps up.
grep 'msg=snapshot' "$work/gate.log" | sed -n 's/.* lsn=\([0-9]*\) bytes=\([0-9]*\) entries=\([0-9]*\).*/retention-bench: snapshot at record \1: \2 bytes, \3 runs and effects/p' |
  awk 'NR % 10 == 1' | tail -n 12

# Flat means: the later half of the run, after the warm-up, holds no more than the
# earlier half. The data directory is a saw-tooth (segments pile up between
# snapshots, compaction cuts them), so each half is compared by its highest sample,
# and the state itself by the snapshots' sizes.
awk -v warm="$WARMUP" -v snaps="$snaps" -v per="$EFFECTS_PER_RUN" -v mode="$mode" '
  function val(k,   i, kv) { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) return kv[2] } return "" }
  /^lifecycle:/ {
    t = val("t"); sub(/s$/, "", t); eff = val("effects"); runs = val("runs")
    if (t + 0 >= warm) { n++; T[n] = t; R[n] = val("rss_kib"); D[n] = val("data_bytes") }
  }
  END {
    if (n < 4) { print "retention bench: FAILED: fewer than 4 samples after the warm-up"; exit 1 }
    h = int(n / 2)
    for (i = 1; i <= n; i++) {
      if (i <= h) { if (R[i] + 0 > r1) r1 = R[i] + 0; if (D[i] + 0 > d1) d1 = D[i] + 0 }
      else        { if (R[i] + 0 > r2) r2 = R[i] + 0; if (D[i] + 0 > d2) d2 = D[i] + 0 }
    }
    printf "retention bench (%s): %d effects over %d runs (%d per run) in %ds, %d snapshots; highest after the warm-up, t=%s-%ss vs t=%s-%ss: gate resident %.1f vs %.1f MiB (x%.2f), data dir %.1f vs %.1f MiB (x%.2f)\n",
      mode, eff, runs, per, T[n], snaps, T[1], T[h], T[h + 1], T[n], r1 / 1024, r2 / 1024, r2 / r1, d1 / 1048576, d2 / 1048576, d2 / d1
  }' "$work/samples.log"
