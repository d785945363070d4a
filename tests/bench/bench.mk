# make bench: boots the bench stanzas of tests/system/bench.cfg (scenarios tests/scenarios/bench-*),
# prints the figures and writes build/bench/results.json;
# make bench-check (for make test): the same runs, checking only that the results are well-formed.

# The bench guests, and the seed workload the soft PMU's exits per instruction are measured on.
BENCH_GUESTS := $(patsubst guest-stub/bench/%.c,build/guest/%.elf,$(wildcard guest-stub/bench/bench_*.c)) \
	build/guest/microbench.elf

.PHONY: bench bench-check

# EMU=kvm gives the same table in cycles (QEMU+KVM with nested VT-x); QEMU TCG has no VT-x.
bench: $(KERNEL) $(BENCH_GUESTS)
	python3 tests/bench/run.py --emu $(or $(EMU),bochs)

bench-check: $(KERNEL) $(BENCH_GUESTS)
	python3 tests/bench/run.py --emu bochs --check
