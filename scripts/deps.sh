#!/usr/bin/env bash
# Installs the Debian packages perfvisor needs and builds newlib once for the guests.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

packages=(gcc make binutils python3 bochs bochsbios vgabios bochs-term grub-pc-bin grub-common
	  xorriso mtools qemu-system-x86 newlib-source gnuplot-nox clang libclang-rt-14-dev)

newlib_tar=/usr/src/newlib/newlib-3.3.0.tar.xz
newlib_prefix=$root/build/newlib
newlib_work=$root/build/newlib-build
newlib_stamp=$newlib_prefix/.done
newlib_log=$newlib_work/build.log

# Guests run at CPL0 with their own SSE state at 1 MiB: small code model, no red zone (interrupt
# frames land on the same stack), nothing that needs a hosted runtime.
newlib_cflags="-O2 -ffreestanding -fno-pic -fno-pie -mno-red-zone -fno-stack-protector"
newlib_cflags+=" -mcmodel=small"
newlib_options=(--target=x86_64-elf --disable-multilib --disable-newlib-supplied-syscalls
		--disable-libgloss --enable-newlib-io-long-long --enable-newlib-io-c99-formats)
# The stamp records how newlib was built, so a change of flags rebuilds it.
newlib_id="newlib-3.3.0 ${newlib_options[*]} $newlib_cflags"

install_packages()
{
	local installed missing=() p sudo=()

	# One dpkg-query for all keeps the common case fast; unknown names only go to stderr.
	installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null || true)
	for p in "${packages[@]}"; do
		grep -qx "$p install ok installed" <<<"$installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0

	[ "$(id -u)" -ne 0 ] && sudo=(sudo)
	# Say what and how before sudo asks for a password.
	echo "deps: missing Debian packages: ${missing[*]}"
	echo "deps: installing them with: ${sudo[*]}${sudo:+ }apt-get update;" \
	     "${sudo[*]}${sudo:+ }apt-get install ${missing[*]}"
	[ ${#sudo[@]} -eq 0 ] || echo "deps: sudo may ask for your password to do that"
	"${sudo[@]}" apt-get update -qq
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
}

# Runs one build step with its output in the log, saying every 15 s that it is still going.
newlib_step()
{
	local name=$1 pid waited=0
	shift

	echo "deps: newlib: $name"
	"$@" >>"$newlib_log" 2>&1 &
	pid=$!
	while ! wait_up_to 15 "$pid"; do
		waited=$((waited + 15))
		echo "deps: newlib: $name, ${waited}s"
	done
	if ! wait "$pid"; then
		echo "deps: newlib $name failed, last lines of $newlib_log:" >&2
		tail -n 30 "$newlib_log" >&2
		exit 1
	fi
}

# Succeeds as soon as process $2 has ended, fails if it still runs after $1 seconds.
wait_up_to()
{
	local i

	for ((i = 0; i < $1 * 5; i++)); do
		kill -0 "$2" 2>/dev/null || return 0
		sleep 0.2
	done
	return 1
}

build_newlib()
{
	[ -f "$newlib_stamp" ] && [ "$(cat "$newlib_stamp")" = "$newlib_id" ] && return 0

	echo "deps: building newlib (a minute or more), log in ${newlib_log#"$root"/}"
	# Start clean: a half-finished earlier attempt leaves state configure would trust.
	rm -rf "$newlib_work" "$newlib_prefix"
	mkdir -p "$newlib_work/obj"
	tar -xJf "$newlib_tar" -C "$newlib_work"

	cd "$newlib_work/obj"
	newlib_step configure ../newlib-salsa/configure --prefix="$newlib_prefix" \
		"${newlib_options[@]}" CC_FOR_TARGET=gcc AS_FOR_TARGET=as AR_FOR_TARGET=ar \
		LD_FOR_TARGET=ld RANLIB_FOR_TARGET=ranlib NM_FOR_TARGET=nm \
		CFLAGS_FOR_TARGET="$newlib_cflags"
	newlib_step compile make -j2 all-target-newlib
	newlib_step install make install-target-newlib

	# Written last: its presence means the whole build and install finished.
	echo "$newlib_id" >"$newlib_stamp"
	echo "deps: newlib installed in ${newlib_prefix#"$root"/}"
}

install_packages
build_newlib
