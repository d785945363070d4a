# make bench: boots tests/bench/*.cfg, prints the figures and writes build/bench/results.json;
# make bench-check (for make test): the same runs, checking only that the results are well-formed.

BENCH_GUESTS := $(patsubst guest-stub/bench/%.c,build/guest/%.elf,$(wildcard guest-stub/bench/bench_*.c))

.PHONY: bench bench-check

# EMU=kvm gives the same table in cycles (QEMU+KVM with nested VT-x); QEMU TCG has no VT-x.
bench: $(KERNEL) $(BENCH_GUESTS)
	python3 tests/bench/run.py --emu $(or $(EMU),bochs)

bench-check: $(KERNEL) $(BENCH_GUESTS)
	python3 tests/bench/run.py --emu bochs --check
