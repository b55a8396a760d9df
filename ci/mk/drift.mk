# The drift audit (internal/drift, cmd/drift; docs/verify/drift.md). `make test` checks
# the standing rules through `go test ./internal/drift` (every //spec:action directive
# names an action of Next with its current pin; every action has a model and a core
# implementation). verify-drift prints the standing rules' line and runs the seeded
# changes on a clone of HEAD, each of which must get its expected exit status.
# `make drift BASE=<rev>` audits the change from BASE to the working tree (DRIFT_ARGS
# adds flags: -strict, -github), writing build/drift.json and build/drift.md.
VERIFY_TARGETS += verify-drift

.PHONY: verify-drift drift
verify-drift:
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/drift | tee $(BUILD)/drift-standing.log
	tail -n 1 $(BUILD)/drift-standing.log >> $(SUMMARY)
	$(GO) run ./cmd/drift -controls | tee $(BUILD)/drift-controls.log
	tail -n 1 $(BUILD)/drift-controls.log >> $(SUMMARY)

# BASE and DRIFT_ACKS are read from the environment in the recipe, never pasted into
# its shell line: a branch name may hold a quote or a $( of its own.
export BASE DRIFT_ACKS
drift:
	@if [ -z "$$BASE" ]; then echo "make drift: give the base revision, BASE=<rev> (e.g. BASE=HEAD~1 or BASE=origin/main)" >&2; exit 2; fi
	@mkdir -p $(BUILD)
	$(GO) build -o $(BUILD)/bin/drift ./cmd/drift # go run would turn exit 3 into 1
	start=$$(date +%s); rc=0; $(BUILD)/bin/drift -base "$$BASE" -json $(BUILD)/drift.json -md $(BUILD)/drift.md $(DRIFT_ARGS) || rc=$$?; \
	  echo "make drift: BASE=$$BASE took $$(( $$(date +%s) - start ))s, exit $$rc"; exit $$rc
