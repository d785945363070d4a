#!/usr/bin/env bash
# Builds a GRUB-bootable ISO from a scenario file (multiboot and module lines).
set -euo pipefail
# shellcheck source=scripts/scenario.sh
. "$(dirname "$0")/scenario.sh"

usage() {
	cat <<'EOF'
usage: scripts/mkiso.sh [-b BUILD_DIR] [-f] SCENARIO OUT.iso

SCENARIO: see scripts/scenario.sh. Relative files are taken from BUILD_DIR
(default: build). OUT.iso is left alone when it is newer than SCENARIO, every
file it names and these scripts; -f rebuilds it anyway.
EOF
	exit 2
}

die() {
	echo "mkiso: $*" >&2
	exit 1
}

build_dir=build
force=0
while getopts b:fh opt; do
	case $opt in
	b) build_dir=$OPTARG ;;
	f) force=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || usage
scenario=$1
out=$2
scenario_read "$scenario" "$build_dir" || die "$sc_error"

if [ $force -eq 0 ] && [ -f "$out" ]; then
	stale=0
	for f in "$scenario" "$0" "$(dirname "$0")/scenario.sh" "${sc_src[@]}"; do
		[ "$f" -nt "$out" ] && stale=1
	done
	if [ $stale -eq 0 ]; then
		echo "mkiso: $out is up to date"
		exit 0
	fi
fi

# Files go under /boot/ with the path the scenario gives (absolute ones by
# their base name); GRUB passes the kernel and modules only their arguments,
# so these names are never seen by the kernel.
dests=()
entries=()
for i in "${!sc_src[@]}"; do
	if [[ ${sc_file[i]} == /* ]]; then
		dest=/boot/$(basename "${sc_file[i]}")
	else
		dest=/boot/${sc_file[i]}
	fi
	for j in "${!dests[@]}"; do
		[ "${dests[j]}" != "$dest" ] || [ "${sc_src[j]}" = "${sc_src[i]}" ] ||
			die "$scenario: ${sc_src[i]} and ${sc_src[j]} would both be $dest on the ISO"
	done
	dests+=("$dest")

	entry="	${sc_kind[i]} $dest"
	read -ra args <<<"${sc_args[i]}"
	for arg in "${args[@]}"; do
		# Quoted, GRUB's script lexer leaves $, ;, { and the like alone.
		if [[ $arg =~ ^[A-Za-z0-9_./=:,+@%-]+$ ]]; then
			entry+=" $arg"
		else
			entry+=" '$arg'"
		fi
	done
	entries+=("$entry")
done

echo "mkiso: building $out from $scenario"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/iso
mkdir -p "$stage/boot/grub"
for i in "${!sc_src[@]}"; do
	mkdir -p "$(dirname "$stage${dests[i]}")"
	cp "${sc_src[i]}" "$stage${dests[i]}"
done
{
	# No serial terminal: COM1 belongs to the kernel's log.
	echo "set timeout=0"
	echo "menuentry 'perfvisor: $(basename "$scenario")' {"
	printf '%s\n' "${entries[@]}"
	echo "}"
} >"$stage/boot/grub/grub.cfg"

mkdir -p "$(dirname "$out")"
# Only the GRUB modules needed to read the CD and load multiboot: a small
# ISO that GRUB gets through quickly in Bochs.
if ! grub-mkrescue -o "$out.tmp" \
	--install-modules="multiboot iso9660 biosdisk normal configfile" \
	--locales= --fonts= --themes= "$stage" >"$work/mkrescue.log" 2>&1; then
	cat "$work/mkrescue.log" >&2
	rm -f "$out.tmp"
	die "grub-mkrescue failed for $scenario"
fi
mv "$out.tmp" "$out"
echo "mkiso: wrote $out ($(($(stat -c %s "$out") / 1024)) KiB)"
