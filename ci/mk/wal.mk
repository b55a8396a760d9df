# The write-ahead log (impl/wal, docs/wal.md, docs/verify/wal.md).
# verify-wal runs the log through WAL_CRASH_CYCLES simulated machine crashes (a random
# file-system operation, a random part of what was not durable survives) and checks
# after each recovery that every acknowledged record is there, that replay is a
# prefix of what was appended, and that compaction keeps the disk bounded. The
# command prints its figures and ends with one summary line.
WAL_CRASH_CYCLES ?= 2000
WAL_CRASH_SEED   ?= 1

VERIFY_TARGETS += verify-wal

.PHONY: verify-wal
verify-wal:
	@mkdir -p $(BUILD)
	$(GO) run ./impl/wal/crashsim/walcrashsim -cycles $(WAL_CRASH_CYCLES) -seed $(WAL_CRASH_SEED) | tee $(BUILD)/wal.log
	tail -n 1 $(BUILD)/wal.log >> $(SUMMARY)
