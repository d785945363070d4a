#!/bin/bash
# Builds perfvisor's Linux guest from Debian's packages: the kernel (bzImage) and an initramfs.
#
# mkguest.sh OUT KNOWN PROFILE PV_EXIT INIT
#   OUT      the output folder (build/linux): OUT/vmlinuz and OUT/initrd.gz are the result
#   KNOWN    the known-count program (guest-stub/linux/known.S, built static)
#   PROFILE  the known-cost functions to sample (guest-stub/linux/profile.S, built static)
#   PV_EXIT  the exit-port program (guest-stub/linux/pv-exit.S, built static)
#   INIT     the /init script
# Packages come through apt only (`apt-get download`, unpacked with `dpkg-deb -x` under OUT):
# the host's /boot and its installed packages stay as they are, except that perf's shared
# libraries, when the host lacks any, are installed by apt as linux-perf's dependencies.
set -euo pipefail

out=$1 known=$2 profile=$3 pv_exit=$4 init=$5
debs=$out/debs pkgs=$out/pkgs root=$out/initramfs

say() { echo "linux-guest: $*"; }

# apt-get update and install need root, as in scripts/deps.sh; the downloads do not.
sudo=()
[ "$(id -u)" -ne 0 ] && sudo=(sudo)

# apt-cache knows nothing before the first `apt-get update` on a fresh machine.
if ! apt-cache show linux-image-amd64 >/dev/null 2>&1; then
	say "apt-get update (no package lists yet)"
	"${sudo[@]}" apt-get update -qq
fi
# linux-image-amd64 is a metapackage: the kernel is in the versioned package it depends on.
kpkg=$(apt-cache depends linux-image-amd64 |
	awk '$1 == "Depends:" && $2 ~ /^linux-image-/ {print $2; exit}')
[ -n "$kpkg" ] || { say "linux-image-amd64 depends on no linux-image-* package"; exit 1; }
say "kernel package: $kpkg (from linux-image-amd64)"

mkdir -p "$debs"
chosen=()
for p in "$kpkg" busybox-static linux-perf; do
	if ! compgen -G "$debs/${p}_*.deb" >/dev/null; then
		say "apt-get download $p"
		# As root apt warns that its _apt user cannot write here; the download works.
		(cd "$debs" && { apt-get download -q "$p" 2>&1 |
			grep -v "couldn't be accessed by user '_apt'" || true; })
		compgen -G "$debs/${p}_*.deb" >/dev/null || { say "download of $p failed"; exit 1; }
	fi
	# Older versions may lie beside it (a second run downloads nothing): take the newest.
	have=("$debs/${p}"_*.deb)
	chosen+=("$(printf '%s\n' "${have[@]}" | sort -V | tail -1)")
	say "package: $(basename "${chosen[-1]}")"
done

rm -rf "$pkgs"
mkdir -p "$pkgs"
for d in "${chosen[@]}"; do
	say "unpack $(basename "$d")"
	dpkg-deb -x "$d" "$pkgs"
done

kernels=("$pkgs"/boot/vmlinuz-*)
vmlinuz=${kernels[0]}
cp "$vmlinuz" "$out/vmlinuz"
say "kernel: $out/vmlinuz ($(basename "$vmlinuz"), $(stat -c %s "$out/vmlinuz") bytes)"

perf=$pkgs/usr/bin/perf
# ldd resolves against the host: what it cannot find, apt installs from perf's dependencies.
if ldd "$perf" | grep -q "not found"; then
	read -ra deps <<<"$(dpkg-deb -f "${chosen[2]}" Depends |
		tr ',' '\n' | sed 's/([^)]*)//; s/|.*//; s/:any//; s/ //g' | tr '\n' ' ')"
	say "perf's libraries missing on this host; apt-get install ${deps[*]}"
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends "${deps[@]}" >/dev/null
fi
if ldd "$perf" | grep "not found"; then
	say "perf still lacks the libraries above"
	exit 1
fi

rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,etc,lib64,usr/bin}
cp "$pkgs/bin/busybox" "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
cp "$perf" "$root/usr/bin/perf"
ln -s ../usr/bin/perf "$root/bin/perf"
nlib=0
for lib in $(ldd "$perf" | awk '/=>/ {print $3} !/=>/ && $1 ~ /^\// {print $1}'); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
	nlib=$((nlib + 1))
done
say "perf with $nlib shared libraries (ldd)"
cp "$known" "$root/bin/known"
cp "$profile" "$root/bin/profile"
cp "$pv_exit" "$root/bin/pv-exit"
cp "$init" "$root/init"
chmod 755 "$root/init" "$root/bin/known" "$root/bin/profile" "$root/bin/pv-exit"

# Packed by the guest's own busybox: its cpio writes newc, owned by root, no host cpio needed.
bb=$(realpath "$root/bin/busybox")
(cd "$root" && find . | LC_ALL=C sort | "$bb" cpio -o -H newc -R 0:0 2>/dev/null) |
	gzip -9 >"$out/initrd.gz"
say "initramfs: $out/initrd.gz ($(stat -c %s "$out/initrd.gz") bytes, cpio newc + gzip)"
