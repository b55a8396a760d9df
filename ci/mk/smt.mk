# Link 2 (unbounded): the inductive invariant of spec/tla/SoundGate.tla checked by SMT
# for any number of runs and keys (tlacheck/smt, cmd/tlasmt; docs/verify/smt.md).
# ci/smt/install.sh installs z3 and cvc5 (apt-get) or fails loudly; every obligation
# must be unsat for both, every broken variant of SoundGate.tla in spec/tla/broken sat
# on its obligation with a counterexample tlacheck replays, every vacuity check sat;
# every numbered step of spec/tlaps/SoundGateProofs.tla tied to the obligations that
# discharge it, and on SoundGate_indstep.cfg's constants every obligation's verdict
# (z3, the sorts finite) equal to tlacheck's, on the spec and each broken variant.
VERIFY_TARGETS += verify-tla-smt

# Per obligation; the slowest sat check (BrokenP1 at Keys=2, cvc5) took 39 s on a loaded
# machine here, so 60 s would leave too little room on a slower one (z3, which finds
# none there, then waits the whole timeout before cvc5's model is confirmed).
SMT_TIMEOUT ?= 90s

.PHONY: verify-tla-smt smt-solvers
smt-solvers:
	bash ci/smt/install.sh

# test-go's go test ./... runs tlacheck/smt's solver test, which fails without the
# solvers when $CI is set.
test-go: smt-solvers

verify-tla-smt: smt-solvers
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/tlasmt -spec spec/tla/SoundGate.tla -out $(BUILD)/smt -timeout $(SMT_TIMEOUT) \
		-solvers z3,cvc5 -broken spec/tla/broken | tee $(BUILD)/verify-tla-smt.log
	tail -n 1 $(BUILD)/verify-tla-smt.log >> $(SUMMARY)
