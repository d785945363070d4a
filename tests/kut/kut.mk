# make kut KUT=DIR: a user's kvm-unit-tests build, entry by entry under perfvisor (docs/kut.md).

# KUT_TESTS= and KUT_GROUPS= pick entries (names or patterns; groups of unittests.cfg);
# KUT_TIMEOUT= is the limit per entry in seconds (Bochs runs ~100 M instructions a second).
KUT ?=
KUT_TESTS ?=
KUT_GROUPS ?=
KUT_TIMEOUT ?= 300

.PHONY: kut
kut: $(KERNEL)
	@test -n "$(KUT)" || { echo "make kut: KUT=DIR names a kvm-unit-tests build (docs/kut.md)"; exit 2; }
	python3 tests/kut/run.py '$(KUT)' --emu $(EMU) --tests '$(KUT_TESTS)' \
		--groups '$(KUT_GROUPS)' --timeout $(KUT_TIMEOUT)

# The runner's own checks (verdicts, unittests.cfg reading), with no kvm-unit-tests build.
.PHONY: kut-check
kut-check:
	@echo "  KUTCHK  tests/kut/test_run.py"
	$(Q)python3 tests/kut/test_run.py
