# Link 6 of the verification chain (docs/verify/linearizability.md): the real server
# (the `soundgate serve` binary, over TCP and its Unix socket) driven by concurrent
# clients while a nemesis SIGKILLs and restarts it; every history is checked with
# porcupine against the model (lincheck/). The command prints histories, operations,
# unknown outcomes, crashes and failures, ending with one summary line. The unit tests
# of lincheck/ (make test) run a small campaign and the negative controls.
#
# verify-fuzz-state runs the fuzz targets on a live session and on log recovery
# (fuzz/session_test.go, fuzz/wal_test.go), each for its count in LIN_FUZZ (about
# 30 s each on a 2-core machine; counts, not durations: see ci/mk/fuzz.mk), and prints
# the executions go reported.
LIN_HISTORIES ?= 200
LIN_CRASH     ?= 300ms
LIN_SEED      ?= 1
LIN_FUZZ      ?= FuzzSession=20000x,FuzzLogRecovery=200000x

VERIFY_TARGETS += verify-lin verify-fuzz-state

.PHONY: verify-lin verify-fuzz-state
verify-lin:
	@mkdir -p $(BUILD) && rm -rf $(BUILD)/lincheck
	$(GO) run ./cmd/lincheck -histories $(LIN_HISTORIES) -crash-every $(LIN_CRASH) -seed $(LIN_SEED) -out $(BUILD)/lincheck | tee $(BUILD)/lin.log
	tail -n 1 $(BUILD)/lin.log >> $(SUMMARY)

verify-fuzz-state:
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/lincheck -fuzz $(LIN_FUZZ) -out $(BUILD)/fuzz-state | tee $(BUILD)/fuzz-state.log
	tail -n 1 $(BUILD)/fuzz-state.log >> $(SUMMARY)
