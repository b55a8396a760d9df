# Mediation (issue 9): the escape matrix of `soundgate run`'s sandbox, its negative
# controls (one layer off at a time) and the sandbox's start-up time. Needs root, user
# namespaces, seccomp and Landlock ABI 6; under CI=true a missing feature fails.
VERIFY_TARGETS += verify-mediation

.PHONY: verify-mediation
verify-mediation:
	@mkdir -p $(BUILD)
	$(GO) run ./impl/sandbox/escape/cmd/soundgate-escape | tee $(BUILD)/mediation.log
	tail -n 1 $(BUILD)/mediation.log >> $(SUMMARY)
