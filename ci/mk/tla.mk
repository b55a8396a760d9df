# Link 1 of the verification chain: the TLA+ model check (tla/, cmd/tlacheck).
# test-tla checks spec/tla/*_quick.cfg and the deliberately broken variants of
# spec/tla/broken (each must end as its "\* tlacheck-expect:" line says). verify-tla
# checks every spec/tla/*.cfg (the glob is taken when the command runs) and, when
# TLA2TOOLS_JAR names a tla2tools.jar and java is on PATH, compares each config's
# figures with real TLC (else it says loudly that the comparison was skipped).
# With no config at all, the command says so and fails under CI=true.
# docs/verify/tla.md explains the figures.
TEST_TARGETS   += test-tla
VERIFY_TARGETS += verify-tla verify-tla-broken

.PHONY: test-tla verify-tla verify-tla-broken
test-tla:
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/tlacheck -all spec/tla -quick | tee $(BUILD)/tla-quick.log
	$(GO) run ./cmd/tlacheck -all spec/tla/broken | tee $(BUILD)/tla-broken-quick.log

verify-tla:
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/tlacheck -all spec/tla -progress 30s | tee $(BUILD)/tla.log
	tail -n 1 $(BUILD)/tla.log >> $(SUMMARY)

verify-tla-broken:
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/tlacheck -all spec/tla/broken | tee $(BUILD)/tla-broken.log
	tail -n 1 $(BUILD)/tla-broken.log >> $(SUMMARY)
