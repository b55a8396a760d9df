# Trace validation (internal/tracecheck, cmd/tracecheck; docs/verify/drift.md, "Trace
# validation"): the real `soundgate serve` binary writes one line per step of its core,
# per answer and per start (--trace); every trace is replayed against
# spec/tla/SoundGate.tla. The traces come from a linearizability campaign with SIGKILLs
# and from the crash harness (timed SIGKILLs and log failpoints), each server of them
# writing its own file into build/traces (servertest.Process, $SOUNDGATE_TRACE_DIR);
# make probes adds the probes' traces when run after it. The last lines are the
# validation's figures and the negative controls: the broken cores and a broken wake
# path of the node must each be caught (TestTracesCatchBrokenGates). `make test` runs
# the in-process workloads and the negative controls through `go test ./...`.
TRACE_DIR           := $(BUILD)/traces
TRACE_LIN_HISTORIES ?= 200
TRACE_CRASH_CYCLES  ?= 50

VERIFY_TARGETS += verify-trace

.PHONY: verify-trace
verify-trace:
	@mkdir -p $(BUILD) && rm -rf $(TRACE_DIR) $(BUILD)/lincheck-trace && mkdir -p $(TRACE_DIR)
	SOUNDGATE_TRACE_DIR=$(abspath $(TRACE_DIR)) $(GO) run ./cmd/lincheck -histories $(TRACE_LIN_HISTORIES) -crash-every 300ms -seed 1 -out $(BUILD)/lincheck-trace | tee $(BUILD)/trace-sources.log
	SOUNDGATE_TRACE_DIR=$(abspath $(TRACE_DIR)) $(GO) run ./cmd/crashcheck -cycles $(TRACE_CRASH_CYCLES) -seed 1 | tee -a $(BUILD)/trace-sources.log
	$(GO) run ./cmd/tracecheck $(TRACE_DIR)/*.ndjson | tee $(BUILD)/trace.log
	tail -n 1 $(BUILD)/trace.log >> $(SUMMARY)
	$(GO) test -count=1 -v -run '^TestTracesCatchBrokenGates$$' ./internal/tracecheck/ | tee $(BUILD)/trace-controls.log
	grep -h 'trace validation negative controls: 5 of 5 broken builds caught' $(BUILD)/trace-controls.log | sed 's/^ *check_test.go:[0-9]*: //' >> $(SUMMARY)
