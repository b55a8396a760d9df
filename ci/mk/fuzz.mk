# Fuzzing (links 5 of the verification chain, docs/verify/fuzz.md). Every target of
# ./fuzz runs in turn for FUZZTIME; fuzz/run.sh prints each target's executions as go
# reported them and ends with one summary line. The seed corpora also run as plain
# tests in `make test` (go test ./...).
FUZZTIME      ?= 20s
FUZZTIME_LONG ?= 2h

VERIFY_TARGETS += verify-fuzz

.PHONY: verify-fuzz fuzz-long
verify-fuzz:
	@mkdir -p $(BUILD)
	FUZZTIME=$(FUZZTIME) GO=$(GO) FUZZ_LOG_DIR=$(BUILD)/fuzz bash fuzz/run.sh | tee $(BUILD)/fuzz.log
	tail -n 1 $(BUILD)/fuzz.log >> $(SUMMARY)

# The long run (hours; not part of verify): FUZZTIME_LONG per target.
fuzz-long:
	@mkdir -p $(BUILD)
	FUZZTIME=$(FUZZTIME_LONG) GO=$(GO) FUZZ_LOG_DIR=$(BUILD)/fuzz-long bash fuzz/run.sh | tee $(BUILD)/fuzz-long.log
