# The write-ahead log (impl/wal, docs/wal.md, docs/verify/wal.md).
# verify-wal runs the log through WAL_CRASH_CYCLES simulated machine crashes (a random
# file-system operation, a random part of what was not durable survives) and checks
# after each recovery that every acknowledged record is there, that replay is a
# prefix of what was appended, and that compaction keeps the disk bounded. Every
# life's abstract trace (append, write, sync, ack, snapshot, crash, recover) is
# replayed through spec/tla/WAL.tla (internal/waltrace), which must allow each step.
# The command prints its figures and ends with one summary line.
WAL_CRASH_CYCLES ?= 10000
WAL_CRASH_SEED   ?= 1

VERIFY_TARGETS += verify-wal

.PHONY: verify-wal
verify-wal:
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/walcrashsim -cycles $(WAL_CRASH_CYCLES) -seed $(WAL_CRASH_SEED) | tee $(BUILD)/wal.log
	tail -n 1 $(BUILD)/wal.log >> $(SUMMARY)

# The gate crash harness (crashcheck): the real `soundgate serve` binary (built with
# -tags failpoints), SIGKILLed at random moments and at log failpoints under
# concurrent load, restarted on the same directory; D1, P2, P3, P4 checked after every
# restart; recovery time printed. A short run also runs in `go test ./...`
# (TestCrashHarness, with its negative control). crash-long is the 1,000-cycle run.
CRASHCHECK_CYCLES      ?= 100
CRASHCHECK_LONG_CYCLES ?= 1000
CRASHCHECK_SEED        ?= 1

VERIFY_TARGETS += verify-crashcheck

.PHONY: verify-crashcheck crash-long bench-durable
verify-crashcheck:
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/crashcheck -cycles $(CRASHCHECK_CYCLES) -seed $(CRASHCHECK_SEED) | tee $(BUILD)/crashcheck.log
	tail -n 1 $(BUILD)/crashcheck.log >> $(SUMMARY)

crash-long:
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/crashcheck -cycles $(CRASHCHECK_LONG_CYCLES) -seed $(CRASHCHECK_SEED) | tee $(BUILD)/crashcheck-long.log

# Durable-mode throughput and latency next to Redis SET NX with appendfsync always
# (installed from Debian if missing; loopback only). Not part of verify: the machine
# is shared and the figures are noisy; see docs/verify/wal.md.
bench-durable:
	@mkdir -p $(BUILD)
	bash ci/bench/durable.sh | tee $(BUILD)/bench-durable.log
