# Mediation: the escape matrix of `soundgate run`'s sandbox, its negative
# controls (one layer off at a time) and the sandbox's start-up time. Needs root, user
# namespaces, seccomp and Landlock ABI 6; under CI=true a missing feature fails.
TEST_TARGETS   += test-mediation-cli
VERIFY_TARGETS += verify-mediation

.PHONY: verify-mediation test-mediation-cli
verify-mediation:
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/soundgate-escape | tee $(BUILD)/mediation.log
	tail -n 1 $(BUILD)/mediation.log >> $(SUMMARY)

# The CLI end to end: the agent's exit status comes back, the host's root is read-only
# inside, the gate's credential is not passed on.
test-mediation-cli:
	@mkdir -p $(BUILD)
	@if [ "$$(id -u)" != 0 ] && [ "$$CI" != true ]; then echo "test-mediation-cli: SKIPPED: needs root (CI runs it)"; exit 0; fi; \
	$(GO) build -o $(BUILD)/soundgate-mediation ./cmd/soundgate; \
	code=0; SOUNDGATE_TOKEN=not-for-the-agent $(BUILD)/soundgate-mediation run --local --run mk-cli -- \
	  sh -c 'test -z "$$SOUNDGATE_TOKEN" || exit 1; touch /etc/soundgate-cli 2>/dev/null && exit 1; exit 7' || code=$$?; \
	if [ $$code -ne 7 ]; then echo "test-mediation-cli: FAIL: exit status $$code, want 7"; exit 1; fi; \
	echo "test-mediation-cli: exit status 7 propagated, read-only root, credential withheld: ok"
