# Targets that boot perfvisor in emulators: test-system, run, gdb, iso (included by the Makefile).

# User knobs: EMU=bochs|qemu|kvm, SCENARIO=FILE, CPUS=N (run, gdb), T=regex (test-system).
EMU ?= bochs
SCENARIO ?= tests/scenarios/demo.cfg
CPUS ?= 2
T ?=

SYS_RUN_TIMEOUT ?= 600
SYS_RUN_LOG := build/run-log
SYS_ISO := build/perfvisor.iso
SYS_RUN_ISO = build/iso/$(basename $(notdir $(SCENARIO))).iso
SYS_GDB_SCRIPT := build/perfvisor.gdb
# gdb needs QEMU; EMU=kvm keeps KVM, anything else means TCG.
SYS_GDB_EMU = $(if $(filter kvm,$(EMU)),kvm,qemu)
# Bochs boots only from a GRUB ISO; QEMU loads the scenario's files itself
# (its GRUB ISO boot is covered by the system tests).
SYS_RUN_BOOT = $(if $(filter bochs,$(EMU)),--iso $(SYS_RUN_ISO),--scenario $(SCENARIO))

.PHONY: test-system run gdb iso

test-system: all
	python3 tests/system/run.py $(if $(T),'$(T)')

# The exit status of scripts/run-emu.sh is the verdict; make turns any
# non-zero one into its own status 2 after printing it as "Error N".
# The demo's table (scripts/demo-table.py) follows the log; other scenarios print none.
run: all
	$(if $(filter bochs,$(EMU)),scripts/mkiso.sh $(SCENARIO) $(SYS_RUN_ISO))
	@rc=0; scripts/run-emu.sh --emu $(EMU) --cpus $(CPUS) --timeout $(SYS_RUN_TIMEOUT) \
		--log $(SYS_RUN_LOG) --follow $(SYS_RUN_BOOT) || rc=$$?; \
	python3 scripts/demo-table.py $(SYS_RUN_LOG)/serial.txt || [ $$rc != 0 ] || rc=1; exit $$rc

gdb: all
	@printf 'file %s\ntarget remote localhost:1234\n' '$(abspath $(KERNEL))' >$(SYS_GDB_SCRIPT)
	@echo "gdb: QEMU starts stopped; in another terminal run:  gdb -x $(SYS_GDB_SCRIPT)"
	@echo "gdb: then e.g. 'hbreak boot_main' and 'continue' (hardware breakpoints: QEMU copies"
	@echo "gdb: the kernel in after reset). Ctrl-C here or 'kill' in gdb ends the run."
	scripts/run-emu.sh --emu $(SYS_GDB_EMU) --cpus $(CPUS) --timeout 0 --log $(SYS_RUN_LOG) \
		--follow --gdb --scenario $(SCENARIO)

iso: $(KERNEL) guests
	scripts/mkiso.sh $(SCENARIO) $(SYS_ISO)
