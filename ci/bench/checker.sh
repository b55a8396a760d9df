#!/usr/bin/env bash
# Checker bench: the project's model checker side by side with TLC 2.20 (one worker),
# in one run, on each config: generated/distinct/depth (which must be equal), wall
# time, distinct states per second and peak resident size, for tlacheck exact,
# tlacheck with fingerprints and 1 worker, and with fingerprints and 2 workers. One
# line per config and a summary line with the ratios to TLC, measured in the same run.
#
# TLC is not part of the project: give a tla2tools.jar (TLA2TOOLS_JAR) and java on
# PATH; without them the bench says so and fails, as the table is the comparison.
#
#   TLA2TOOLS_JAR=/path/to/tla2tools.jar bash ci/bench/checker.sh
#   CONFIGS="spec/tla/SoundGate_deep.cfg" FP_MIB=64 TLA2TOOLS_JAR=... bash ci/bench/checker.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

CONFIGS=${CONFIGS:-"spec/tla/SoundGate_quick.cfg spec/tla/SoundGate_runs2.cfg spec/tla/SoundGate_keys3.cfg spec/tla/SoundGate_deep.cfg tlacheck/testdata/TwoPhase_big.cfg"}
FP_MIB=${FP_MIB:-64}
GO=${GO:-go}
die() { echo "checker bench: FAILED: $*" >&2; exit 1; }
jar=${TLA2TOOLS_JAR:-}
[ -n "$jar" ] && [ -r "$jar" ] || die "TLC is needed for the comparison: set TLA2TOOLS_JAR to a tla2tools.jar (TLC 2.20); none is set or readable"
command -v java >/dev/null || die "java is not on PATH (TLC needs it)"
[ -x /usr/bin/time ] || die "/usr/bin/time is needed for the peak resident size"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$GO" build -o "$work/tlacheck" ./cmd/tlacheck

# measure NAME CMD...: runs CMD, keeps its output in $work/NAME.out and its wall
# seconds and peak resident KiB in $work/NAME.time ("wall kib").
measure() {
  local name=$1
  shift
  /usr/bin/time -f "%e %M" -o "$work/$name.time" "$@" >"$work/$name.out" 2>&1 || true
}

# figures FILE: "generated/distinct/depth" from tlacheck's summary line or TLC's output.
figures() {
  local f=$1
  if grep -q '^tla ' "$f"; then
    sed -n 's/^tla [^:]*: \([0-9]*\) generated, \([0-9]*\) distinct, depth \([0-9]*\),.*/\1\/\2\/\3/p' "$f" | tail -n 1
  else
    local g d depth
    g=$(sed -n 's/^\([0-9,]*\) states generated, \([0-9,]*\) distinct states found.*/\1/p' "$f" | tail -n 1 | tr -d ,)
    d=$(sed -n 's/^\([0-9,]*\) states generated, \([0-9,]*\) distinct states found.*/\2/p' "$f" | tail -n 1 | tr -d ,)
    depth=$(sed -n 's/.*depth of the complete state graph search is \([0-9]*\).*/\1/p' "$f" | tail -n 1)
    echo "$g/$d/$depth"
  fi
}

summary=()
declare -A total
for cfg in $CONFIGS; do
  [ -r "$cfg" ] || die "no config $cfg"
  dir=$(dirname "$cfg")
  base=$(basename "$cfg" .cfg)
  mod=${base%%_*}
  tla="$dir/$mod.tla"
  [ -r "$tla" ] || die "no module $tla for $cfg"
  measure exact "$work/tlacheck" -progress 1h -config "$cfg" "$tla"
  measure fp1 "$work/tlacheck" -progress 1h -fingerprints "$FP_MIB" -workers 1 -config "$cfg" "$tla"
  measure fp2 "$work/tlacheck" -progress 1h -fingerprints "$FP_MIB" -workers 2 -config "$cfg" "$tla"
  scratch="$work/tlc-$base"
  mkdir -p "$scratch"
  cp "$tla" "$scratch/" && cp "$cfg" "$scratch/"
  (cd "$scratch" && measure tlc java -XX:+UseParallelGC -cp "$jar" tlc2.TLC -workers 1 -config "$base.cfg" "$mod.tla")
  ref=$(figures "$work/tlc.out")
  [ -n "${ref%%/*}" ] || { tail -n 20 "$work/tlc.out" >&2; die "$base: TLC printed no figures"; }
  line="checker bench: $base: TLC $ref"
  for run in exact fp1 fp2 tlc; do
    fig=$(figures "$work/$run.out")
    [ "$fig" = "$ref" ] || { tail -n 5 "$work/$run.out" >&2; die "$base: $run gave $fig, TLC $ref"; }
    read -r wall kib <"$work/$run.time"
    distinct=$(echo "$ref" | cut -d/ -f2)
    rate=$(awk -v d="$distinct" -v w="$wall" 'BEGIN { printf "%.0f", (w > 0 ? d / w : 0) }')
    line+="; $run ${wall}s ${rate}/s $((kib / 1024))MiB"
    total[$run]=$(awk -v a="${total[$run]:-0}" -v b="$wall" 'BEGIN { print a + b }')
  done
  echo "$line"
  summary+=("$base")
done
awk -v n="${#summary[@]}" -v tlc="${total[tlc]}" -v ex="${total[exact]}" -v f1="${total[fp1]}" -v f2="${total[fp2]}" 'BEGIN {
  printf "checker bench: %d configs, figures equal to TLC on all; wall time summed: TLC %.1fs, tlacheck exact %.1fs (%.2fx the speed of TLC), fingerprints with 1 worker %.1fs (%.2fx), with 2 workers %.1fs (%.2fx; %.2fx the speed of 1 worker)\n",
    n, tlc, ex, tlc / ex, f1, tlc / f1, f2, tlc / f2, f1 / f2 }'
