# Link 7 of the verification chain: the mutation score of the core.
# cmd/mutate mutates impl/core with type-checked mutants, runs the core's tests and the
# conformance suite on each one (isolated with go test -overlay; the tree is never
# written), and fails below the threshold. docs/verify/mutation.md explains the figures.
#
# MUTATION_SKIP names tests that cannot observe a mutant and only cost time: the
# negative controls build the *original* tree with broken_p* tags in a subprocess,
# which never sees the overlay, and TestRandomWire drives the server over a socket
# (the wire link has its own checks).
MUTATION_PKGS      := ./impl/core/
MUTATION_TESTS     := ./impl/core/,./conformance/
MUTATION_SKIP      := TestScenariosCatchBrokenCores|TestConformanceCatchesBrokenCores|TestRandomWire
MUTATION_THRESHOLD := 90
MUTATION_ARGS       = -name impl/core -threshold $(MUTATION_THRESHOLD) -suppress mutation/suppress.txt \
	-test '$(MUTATION_TESTS)' -skip '$(MUTATION_SKIP)' -json $(BUILD)/mutation.json

VERIFY_TARGETS += verify-mutation
.PHONY: verify-mutation mutation mutation-diff

# make mutation: the score with progress lines (one per mutant) on stderr.
mutation:
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/mutate $(MUTATION_ARGS) $(MUTATION_PKGS)

# make mutation-diff BASE=origin/main: only the lines a change touched (pull requests).
mutation-diff:
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/mutate $(MUTATION_ARGS) -diff $(or $(BASE),HEAD) $(MUTATION_PKGS)

verify-mutation:
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/mutate -q $(MUTATION_ARGS) $(MUTATION_PKGS) | tee $(BUILD)/mutation.log
	tail -n 1 $(BUILD)/mutation.log >> $(SUMMARY)
