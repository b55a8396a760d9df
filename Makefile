# soundgate: the gate and the proof that it is right.
#
#   make test     the unit, scenario and quick verification tests (minutes)
#   make verify   every link of the verification chain, each printing its figures
#
# Each link of the chain adds its own targets from a fragment in ci/mk/*.mk:
# a fragment appends to TEST_TARGETS and VERIFY_TARGETS and records one summary
# line per check with $(call summary,LINE). `make verify` ends by printing the
# summary table, so the figures of a run are on the last screen.

SHELL       := /bin/bash
.SHELLFLAGS := -eo pipefail -c
GO          ?= go
export GOFLAGS ?= -mod=mod
BUILD       := build
SUMMARY     := $(BUILD)/verify-summary.txt
TEST_TARGETS   :=
VERIFY_TARGETS :=
PROBE_TARGETS  :=

# A verify target records its figures by piping its command's own output through
# `tee $(BUILD)/NAME.log` and then appending the command's final summary line:
#   tail -n 1 $(BUILD)/NAME.log >> $(SUMMARY)
# Never echo figures written in the Makefile: the command that measured them prints them.

.PHONY: all test verify probes build test-go verify-begin verify-end clean
all: build

build:
	$(GO) build ./...

include $(sort $(wildcard ci/mk/*.mk))

test: test-go $(TEST_TARGETS)
	@echo "make test: all test targets passed"

# test-go runs vet and the whole Go test suite with the race detector and the core's
# assertion tier (the invariants tag: impl/core checks its invariants after every Step).
test-go:
	$(GO) vet ./...
	$(GO) test -race -tags invariants -count=1 ./...

# The links run in the order of the verification chain (VERIFY.md); a target no pattern
# names runs last.
CHAIN_ORDER := verify-tla verify-tla-inductive verify-tla-broken verify-tla-smt verify-model% verify-conformance% \
	verify-lin% verify-fuzz verify-fuzz-% verify-mutation% verify-wal% verify-crashcheck% verify-trace% verify-mediation% verify-adversary% verify-drift%
ORDERED_VERIFY := $(foreach p,$(CHAIN_ORDER),$(filter $(p),$(VERIFY_TARGETS)))
ORDERED_VERIFY += $(filter-out $(ORDERED_VERIFY),$(VERIFY_TARGETS))
ORDERED_VERIFY := $(strip $(foreach t,$(ORDERED_VERIFY),$(if $(filter $(t),$(_seen)),,$(eval _seen += $(t))$(t))))

verify: verify-begin $(ORDERED_VERIFY) verify-end

verify-begin:
	@mkdir -p $(BUILD) && : > $(SUMMARY)
	@echo "make verify: $(words $(ORDERED_VERIFY)) checks: $(ORDERED_VERIFY)"

verify-end:
	@echo
	@echo "==================== make verify: what was checked ===================="
	@cat $(SUMMARY)
	@echo "======================================================================="
	@echo "make verify: $(words $(ORDERED_VERIFY)) checks passed"

probes: $(PROBE_TARGETS)

clean:
	rm -rf $(BUILD)
