# Targets that boot perfvisor by hand: run, gdb, iso (included by the Makefile).

# User knobs: EMU=bochs|qemu|kvm, SCENARIO=FILE, CPUS=N; LINUX=1 for the Linux guest's demo.

# LINUX=1: Debian's kernel runs perf stat and perf record on programs of known cost
# (tests/scenarios/linux-perf.cfg, Bochs with 1 CPU and 512 MB, a few minutes); make deps builds
# the guest first. SCENARIO stays the demo's: `make iso` (part of `make all`) builds the demo ISO
# from it.
ifeq ($(LINUX),1)
RUN_SCENARIO := tests/scenarios/linux-perf.cfg
CPUS ?= 1
RUN_MEM ?= 512
RUN_TIMEOUT ?= 900
endif

EMU ?= bochs
SCENARIO ?= tests/scenarios/demo.cfg
RUN_SCENARIO ?= $(SCENARIO)
CPUS ?= 2
RUN_MEM ?= 256

RUN_TIMEOUT ?= 600
RUN_LOG := build/run-log
RUN_DEMO_ISO := build/perfvisor.iso
RUN_ISO = build/iso/$(basename $(notdir $(RUN_SCENARIO))).iso
RUN_GDB_SCRIPT := build/perfvisor.gdb
# gdb needs QEMU; EMU=kvm keeps KVM, anything else means TCG.
RUN_GDB_EMU = $(if $(filter kvm,$(EMU)),kvm,qemu)
# Bochs boots only from a GRUB ISO; QEMU loads the scenario's files itself
# (its GRUB ISO boot is covered by the system tests).
RUN_BOOT = $(if $(filter bochs,$(EMU)),--iso $(RUN_ISO),--scenario $(RUN_SCENARIO))

.PHONY: run gdb iso

# The README's two commands install what is missing first. The exit status of
# scripts/run-emu.sh is the verdict; make turns any non-zero one into its own
# status 2 after printing it as "Error N". The demo's table (scripts/demo-table.py)
# follows the log; other scenarios print none.
run: deps all
	$(if $(filter bochs,$(EMU)),scripts/mkiso.sh $(RUN_SCENARIO) $(RUN_ISO))
	@echo "  RUN     $(RUN_SCENARIO) under $(EMU), $(CPUS) CPUs, log in $(RUN_LOG)"
	$(Q)rc=0; scripts/run-emu.sh --emu $(EMU) --cpus $(CPUS) --mem $(RUN_MEM) \
		--timeout $(RUN_TIMEOUT) \
		--log $(RUN_LOG) --follow $(RUN_BOOT) || rc=$$?; \
	python3 scripts/demo-table.py $(RUN_LOG)/serial.txt || [ $$rc != 0 ] || rc=1; exit $$rc

gdb: all
	$(Q)printf 'file %s\ntarget remote localhost:1234\n' '$(abspath $(KERNEL))' >$(RUN_GDB_SCRIPT)
	@echo "gdb: QEMU starts stopped; in another terminal run:  gdb -x $(RUN_GDB_SCRIPT)"
	@echo "gdb: then e.g. 'hbreak boot_main' and 'continue' (hardware breakpoints: QEMU copies"
	@echo "gdb: the kernel in after reset). Ctrl-C here or 'kill' in gdb ends the run."
	scripts/run-emu.sh --emu $(RUN_GDB_EMU) --cpus $(CPUS) --timeout 0 --log $(RUN_LOG) \
		--follow --gdb --scenario $(SCENARIO)

iso: $(KERNEL) guests
	scripts/mkiso.sh $(SCENARIO) $(RUN_DEMO_ISO)
