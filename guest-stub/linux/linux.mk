# `make linux-guest`: Debian's kernel and an initramfs with busybox, perf and the known programs.
# Not part of `make` or `make test` (it downloads about 75 MB of packages through apt).

LINUX_OUT := build/linux
LINUX_CFLAGS := -nostdlib -static -no-pie -Wl,--build-id=none -Wl,-z,noexecstack

.PHONY: linux-guest
linux-guest: $(LINUX_OUT)/known $(LINUX_OUT)/profile $(LINUX_OUT)/pv-exit \
		guest-stub/linux/init.sh guest-stub/linux/mkguest.sh
	$(Q)bash guest-stub/linux/mkguest.sh $(LINUX_OUT) $(LINUX_OUT)/known $(LINUX_OUT)/profile \
		$(LINUX_OUT)/pv-exit guest-stub/linux/init.sh

$(LINUX_OUT)/%: guest-stub/linux/%.S guest-stub/linux/linux.mk
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)gcc $(LINUX_CFLAGS) -o $@ $<

# `make test-linux`: the Linux guest's system rows (tests/system/linux-guest/), not in make test.
LINUX_TABLE := tests/system/linux-guest/linux-guest.cfg

.PHONY: test-linux
test-linux: all
	$(Q)if [ -f $(LINUX_OUT)/vmlinuz ] && [ -f $(LINUX_OUT)/initrd.gz ]; then \
		python3 tests/system/run.py --cfg $(LINUX_TABLE) $(if $(T),'$(T)'); \
	else \
		echo "test-linux: SKIP: no $(LINUX_OUT)/vmlinuz and initrd.gz: run make linux-guest" \
		     "first (it downloads Debian's kernel, busybox and perf through apt)"; \
	fi
