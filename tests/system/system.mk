# make test-system: the system tests, stanzas of tests/system/*.cfg run by tests/system/run.py
# (docs/testing.md), after run.py's own test. T=regex selects by name, G=groups by group
# (group long only when named).
# make soak: the tests of group long (tests/system/soak.cfg), outside make test; meanwhile every
# SOAK_PROGRESS seconds a line tells how far each running soak has got (domains ended of
# domains started).
T ?=
G ?=

.PHONY: test-system
test-system: all
	$(Q)tests/unit/run.sh tests/system/test_run.py
	python3 tests/system/run.py $(if $(T),'$(T)') $(if $(G),-G '$(G)')

SOAK_PROGRESS ?= 30
SOAK_STARTED := '^perfvisor: domain [0-9]+ \(.*\): ELF'
SOAK_ENDED := '^perfvisor: domain [0-9]+ \(.*\) (exited|killed)'

# A serial log newer than the stamp made at the start and without a verdict is running.
define soak_progress
while sleep $(SOAK_PROGRESS); do \
	for log in $$(find build/test-logs -name serial.txt -newer $$stamp); do \
		grep -q '^perfvisor: EXIT' $$log && continue; \
		n=$$(grep -cE $(SOAK_STARTED) $$log); \
		echo "soak: $$(basename $$(dirname $$log)): $$(grep -cE $(SOAK_ENDED) $$log) of $$n" \
		     "domains ended, $$(( $$(date +%s) - start )) s"; \
	done; \
done
endef

.PHONY: soak
soak: all
	@echo "soak: the tests of group long (tests/system/soak.cfg), two at a time;" \
	      "progress every $(SOAK_PROGRESS) s"
	@start=$$(date +%s); stamp=$$(mktemp); \
	( $(soak_progress) ) & progress=$$!; \
	python3 tests/system/run.py $(if $(T),'$(T)') -G long; rc=$$?; \
	kill $$progress 2>/dev/null; rm -f $$stamp; \
	echo "soak: $$(( $$(date +%s) - start )) s in all"; \
	exit $$rc
