# Link 4 of the verification chain: the model (model/) against the implementation
# (impl/core in process, impl/server over the wire). `make test` runs the quick modes
# through `go test ./...`. verify-conformance runs the deep ones: the exhaustive mode
# on larger configurations (every operation from every reachable model state), random
# traces on the core and through a real server; the last line of the log is the total
# of compared operations, divergences and coverage. docs/verify/conformance.md.
VERIFY_TARGETS += verify-conformance

.PHONY: verify-conformance
verify-conformance:
	@mkdir -p $(BUILD)
	$(GO) test -count=1 -timeout 80m -v -run '^(TestExhaustive|TestRandomCore|TestRandomWire|TestRandomDurable)$$' ./conformance/ -args -conformance.deep $(CONFORMANCE_ARGS) | tee $(BUILD)/conformance.log
	grep -E '^conformance total: [0-9]+ operations compared, 0 divergences, coverage: none missing$$' $(BUILD)/conformance.log >> $(SUMMARY)
