# Link 1 of the verification chain: the TLA+ model check (tlacheck/, cmd/tlacheck).
# test-tla checks spec/tla/*_quick.cfg and the deliberately broken variants of
# spec/tla/broken (each must end as its "\* tlacheck-expect:" line says). verify-tla
# checks every spec/tla/*.cfg (the glob is taken when the command runs) and, when
# TLA2TOOLS_JAR names a tla2tools.jar and java is on PATH, compares each config's
# figures with real TLC (else it says loudly that the comparison was skipped). The
# write-ahead log's spec (spec/tla/WAL.tla, WAL.cfg) is among them; its own figures
# line, as the command printed it, also goes to the summary table.
# With no config at all, the command says so and fails under CI=true.
# docs/verify/tla.md explains the figures.
TEST_TARGETS   += test-tla
VERIFY_TARGETS += verify-tla

# The broken variants, when the spec provides them.
TLA_BROKEN := $(wildcard spec/tla/broken/*.cfg)
ifneq ($(TLA_BROKEN),)
VERIFY_TARGETS += verify-tla-broken
endif

# Link 2 (bounded): tlacheck's inductive mode on the gate's IndInv, when the spec
# provides its generator config (IndInit enumerates every state satisfying IndInv).
TLA_INDSTEP := $(wildcard spec/tla/SoundGate_indstep.cfg)
ifneq ($(TLA_INDSTEP),)
VERIFY_TARGETS += verify-tla-inductive
endif

.PHONY: test-tla verify-tla verify-tla-broken verify-tla-inductive
test-tla:
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/tlacheck -all spec/tla -quick | tee $(BUILD)/tla-quick.log
ifneq ($(TLA_BROKEN),)
	$(GO) run ./cmd/tlacheck -all spec/tla/broken | tee $(BUILD)/tla-broken-quick.log
endif

verify-tla:
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/tlacheck -all spec/tla -progress 30s | tee $(BUILD)/tla.log
	tail -n 1 $(BUILD)/tla.log >> $(SUMMARY)
	grep '^tla WAL: ' $(BUILD)/tla.log >> $(SUMMARY)

verify-tla-broken:
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/tlacheck -all spec/tla/broken | tee $(BUILD)/tla-broken.log
	tail -n 1 $(BUILD)/tla-broken.log >> $(SUMMARY)

verify-tla-inductive:
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/tlacheck -inductive -indinv IndInv -typeok IndInit -safety Safety,Structure \
		-config spec/tla/SoundGate_indstep.cfg spec/tla/SoundGate.tla | tee $(BUILD)/tla-inductive.log
	tail -n 1 $(BUILD)/tla-inductive.log >> $(SUMMARY)

# verify-deep (not part of make verify: minutes to hours): the configs of
# spec/tla/deep, each a bigger domain of spec/tla/SoundGate.tla, model-checked in the
# fingerprint mode with two workers, in a set of TLA_DEEP_MIB MiB unless the cfg has
# a line `\* verify-deep: -fingerprints MIB` (a set is resident whole once its pages
# are touched, so each config's is sized to it). Each prints its figures and mode;
# the last line sums them up. docs/verify/tla.md, "make verify-deep", has the figures.
TLA_DEEP_MIB ?= 64
.PHONY: verify-deep
verify-deep:
	@mkdir -p $(BUILD)
	$(GO) build -o $(BUILD)/bin/tlacheck ./cmd/tlacheck
	@set -e; : > $(BUILD)/tla-deep.log; n=0; \
	for cfg in spec/tla/deep/*.cfg; do \
	  n=$$((n+1)); \
	  mib=$$(sed -n 's/^\\\* verify-deep: -fingerprints \([0-9][0-9]*\)$$/\1/p' $$cfg); mib=$${mib:-$(TLA_DEEP_MIB)}; \
	  /usr/bin/time -f "verify-deep $$cfg: %e s wall, %M KiB max resident" $(BUILD)/bin/tlacheck -fingerprints $$mib -workers 2 -progress 60s \
	    -label "$$(basename $$cfg .cfg)" -config $$cfg spec/tla/SoundGate.tla 2>&1 | tee -a $(BUILD)/tla-deep.log; \
	done; \
	echo "verify-deep: $$n configs: $$(grep '^tla ' $(BUILD)/tla-deep.log | sed 's/^tla //' | tr '\n' ';')" | tee -a $(BUILD)/tla-deep.log
