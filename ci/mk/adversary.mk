# The adversary: a real `soundgate serve` attacked class by class (connection floods
# with and without a token, a trickled hello, roles-file mutations, socket and
# data-directory takeover, display injection, one token's quota exhaustion, agents
# that go silent after hello), each class also against a build with its defence off
# (the negative controls, build tags adversary_weak_*). Fails on any escalation or
# state change, and on a control that finds nothing.
VERIFY_TARGETS += verify-adversary

.PHONY: verify-adversary
verify-adversary:
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/adversary | tee $(BUILD)/adversary.log
	tail -n 1 $(BUILD)/adversary.log >> $(SUMMARY)
