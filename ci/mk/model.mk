# Link 3 of the verification chain: the Go model (model/) against the TLA+ spec.
# `make test` runs the quick checks through `go test ./...` (TestTLCFigures and
# TestSpecEqualsModel on SoundGate_quick.cfg). verify-model runs the long ones
# (MODEL_DEEP=1): the model's counts on every config against TLC's reference figures,
# the spec == model graph comparison on SoundGate_runs2 and SoundGate_keys3, and then
# the explorer on the deep constants, whose summary line ends the log.
# docs/verify/spec.md explains the figures.
VERIFY_TARGETS += verify-model

.PHONY: verify-model
verify-model:
	@mkdir -p $(BUILD)
	MODEL_DEEP=1 $(GO) test -count=1 -timeout 60m -run 'TestTLCFigures|TestSpecEqualsModel|TestAlteredModelIsCaught' -v ./model/ | tee $(BUILD)/model-tests.log
	grep -h 'spec == model' $(BUILD)/model-tests.log | sed 's/^ *graph_test.go:[0-9]*: //' >> $(SUMMARY)
	$(GO) run ./cmd/modelexplore -config spec/tla/SoundGate_deep.cfg | tee $(BUILD)/model.log
	tail -n 1 $(BUILD)/model.log >> $(SUMMARY)
