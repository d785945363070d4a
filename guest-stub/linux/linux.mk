# `make linux-guest`: Debian's kernel and an initramfs with busybox, perf and the known program.
# Not part of `make` or `make test` (it downloads about 75 MB of packages through apt).

LINUX_OUT := build/linux
LINUX_CFLAGS := -nostdlib -static -no-pie -Wl,--build-id=none -Wl,-z,noexecstack

.PHONY: linux-guest
linux-guest: $(LINUX_OUT)/known $(LINUX_OUT)/pv-exit guest-stub/linux/init.sh \
		guest-stub/linux/mkguest.sh
	$(Q)bash guest-stub/linux/mkguest.sh $(LINUX_OUT) $(LINUX_OUT)/known $(LINUX_OUT)/pv-exit \
		guest-stub/linux/init.sh

$(LINUX_OUT)/%: guest-stub/linux/%.S guest-stub/linux/linux.mk
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)gcc $(LINUX_CFLAGS) -o $@ $<
