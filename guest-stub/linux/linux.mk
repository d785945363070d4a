# `make linux-guest`: Debian's kernel and an initramfs with busybox, perf and the known programs.
# `make deps` (so both of the README's commands) builds it: about 75 MB of packages through apt,
# downloaded once; it is built again only when one of its inputs changes.

LINUX_OUT := build/linux
LINUX_CFLAGS := -nostdlib -static -no-pie -Wl,--build-id=none -Wl,-z,noexecstack

.PHONY: linux-guest
linux-guest: $(LINUX_OUT)/vmlinuz $(LINUX_OUT)/initrd.gz

$(LINUX_OUT)/vmlinuz $(LINUX_OUT)/initrd.gz &: $(LINUX_OUT)/known $(LINUX_OUT)/profile \
		$(LINUX_OUT)/pv-exit guest-stub/linux/init.sh guest-stub/linux/mkguest.sh
	$(Q)bash guest-stub/linux/mkguest.sh $(LINUX_OUT) $(LINUX_OUT)/known $(LINUX_OUT)/profile \
		$(LINUX_OUT)/pv-exit guest-stub/linux/init.sh

$(LINUX_OUT)/%: guest-stub/linux/%.S guest-stub/linux/linux.mk
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)gcc $(LINUX_CFLAGS) -o $@ $<

# `make test-linux`: the Linux guest's system rows (tests/system/linux-guest/), not in make test
# (each boots Linux under Bochs for minutes: the README's long runs).
LINUX_TABLE := tests/system/linux-guest/linux-guest.cfg

.PHONY: test-linux
test-linux: deps
	@$(MAKE) --no-print-directory all
	$(Q)python3 tests/system/run.py --cfg $(LINUX_TABLE) $(if $(T),'$(T)')
