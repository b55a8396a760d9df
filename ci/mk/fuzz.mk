# Fuzzing (links 5 of the verification chain, docs/verify/fuzz.md). Every target of
# ./fuzz runs in turn for its budget; fuzz/run.sh prints each target's executions as go
# reported them and ends with one summary line. The seed corpora also run as plain
# tests in `make test` (go test ./...).
#
# The budgets are execution counts, about 20 s each on a 2-core machine, not
# durations: with a duration, go 1.26's fuzz coordinator can report its own deadline
# as a failure ("context deadline exceeded", no input saved; golang/go#75804, fixed in
# go 1.27), and it did so once in CI. A count has no deadline. FUZZ_COUNTS gives the
# targets whose speed differs most their own count; `make verify-fuzz FUZZTIME=1m
# FUZZ_COUNTS=` runs every target for a minute instead.
FUZZTIME      ?= 250000x
FUZZ_COUNTS   ?= FUZZTIME_FuzzRoundTrip=350000x FUZZTIME_FuzzReaderSplit=50000x \
                 FUZZTIME_FuzzDecodeResponse=500000x
FUZZTIME_LONG ?= 2h

VERIFY_TARGETS += verify-fuzz

.PHONY: verify-fuzz fuzz-long
verify-fuzz:
	@mkdir -p $(BUILD)
	env $(FUZZ_COUNTS) FUZZTIME=$(FUZZTIME) GO=$(GO) FUZZ_LOG_DIR=$(BUILD)/fuzz bash fuzz/run.sh | tee $(BUILD)/fuzz.log
	tail -n 1 $(BUILD)/fuzz.log >> $(SUMMARY)

# The long run (hours; not part of verify): FUZZTIME_LONG per target.
fuzz-long:
	@mkdir -p $(BUILD)
	FUZZTIME=$(FUZZTIME_LONG) GO=$(GO) FUZZ_LOG_DIR=$(BUILD)/fuzz-long bash fuzz/run.sh | tee $(BUILD)/fuzz-long.log
