#!/usr/bin/env bash
# Runs one image under Bochs, QEMU or QEMU+KVM and turns its serial log into an exit status.
set -uo pipefail

usage() {
	cat <<'EOF'
usage: scripts/run-emu.sh [OPTION]... --iso FILE
       scripts/run-emu.sh [OPTION]... --scenario FILE
       scripts/run-emu.sh [OPTION]... --kernel FILE [--append ARGS] [--module 'FILE ARGS']...

  --emu bochs|qemu|kvm   emulator (default bochs); kvm is QEMU with -enable-kvm -cpu host
  --iso FILE             boot a GRUB ISO (scripts/mkiso.sh)
  --scenario FILE        boot a scenario's kernel and modules (scripts/scenario.sh)
                         by QEMU's multiboot loader (qemu and kvm only); relative
                         files are taken from build/
  --kernel FILE          boot by QEMU's multiboot loader (qemu and kvm only)
  --append ARGS          kernel command line (QEMU puts the kernel path in front)
  --module 'FILE ARGS'   a multiboot module and its string; repeat for more
  --cpus N               processors (default 1)
  --mem MB               memory (default 256)
  --timeout S            seconds before the emulator is killed (default 60, 0 = never)
  --log DIR              keep serial.txt, command.txt, emulator.txt (and bochsrc,
                         bochs.log) in DIR; without it they go to a temporary dir
  --follow               stream the serial log while the emulator runs
  --quiet                do not print the serial log at the end
  --gdb                  QEMU waits for gdb on localhost:1234 (-s -S)

QEMU's loader puts the file's path in front of the kernel command line and
of each module string; GRUB passes only the arguments.

Exit status: the code of the last 'perfvisor: EXIT <code>' line on the serial
port, clamped to 0..255; if there is none: 124 when the timeout struck, 130
when interrupted, 125 when the emulator ended by itself (its own status is
never trusted) or could not be started.
EOF
	exit 125
}

die() {
	echo "run-emu: $*" >&2
	exit 125
}

emu=bochs iso='' scenario='' kernel='' append='' log=''
cpus=1 mem=256 timeout_s=60 follow=0 quiet=0 gdb=0
modules=()
while [ $# -gt 0 ]; do
	case $1 in
	--follow) follow=1 ;;
	--quiet) quiet=1 ;;
	--gdb) gdb=1 ;;
	--emu | --iso | --scenario | --kernel | --append | --module | --cpus | --mem | --timeout | --log)
		[ $# -ge 2 ] || usage
		case $1 in
		--emu) emu=$2 ;;
		--iso) iso=$2 ;;
		--scenario) scenario=$2 ;;
		--kernel) kernel=$2 ;;
		--append) append=$2 ;;
		--module) modules+=("$2") ;;
		--cpus) cpus=$2 ;;
		--mem) mem=$2 ;;
		--timeout) timeout_s=$2 ;;
		--log) log=$2 ;;
		esac
		shift
		;;
	*) usage ;;
	esac
	shift
done

[[ $cpus =~ ^[1-9][0-9]*$ ]] || die "--cpus wants a positive number, not '$cpus'"
[[ $mem =~ ^[1-9][0-9]*$ ]] || die "--mem wants a positive number of MB, not '$mem'"
[[ $timeout_s =~ ^[0-9]+$ ]] || die "--timeout wants seconds, not '$timeout_s'"
case ${iso:+i}${scenario:+s}${kernel:+k} in
i) [ -f "$iso" ] || die "$iso: no such file" ;;
s)
	# shellcheck source=scripts/scenario.sh
	. "$(dirname "$0")/scenario.sh"
	scenario_read "$scenario" build || die "$sc_error"
	kernel=${sc_src[0]}
	append=${sc_args[0]}
	for i in "${!sc_src[@]}"; do
		[ "$i" -eq 0 ] || modules+=("${sc_src[i]}${sc_args[i]:+ ${sc_args[i]}}")
	done
	;;
k) [ -f "$kernel" ] || die "$kernel: no such file" ;;
*) usage ;;
esac

if [ -n "$log" ]; then
	mkdir -p "$log" || die "cannot create $log"
	dir=$(cd "$log" && pwd)
else
	dir=$(mktemp -d)
fi
serial=$dir/serial.txt
# A kept log dir may hold an earlier run's files, from another emulator too.
rm -f "$dir"/{serial.txt,command.txt,emulator.txt,bochsrc,bochs.dbg,bochs.log}

# QEMU's -initrd separates modules with commas; a comma inside is doubled.
qemu_modules() {
	local list='' m
	for m in "${modules[@]}"; do
		list+=${list:+,}${m//,/,,}
	done
	printf '%s' "$list"
}

kvm_checks() {
	local nested=/sys/module/kvm_intel/parameters/nested
	if [ ! -e /dev/kvm ]; then
		die "EMU=kvm: /dev/kvm does not exist (no KVM on this machine); use EMU=bochs"
	fi
	if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
		die "EMU=kvm: /dev/kvm is not readable and writable by $(id -un)" \
			"(join group kvm); use EMU=bochs"
	fi
	if ! grep -qw vmx /proc/cpuinfo; then
		echo "run-emu: WARNING: this CPU has no VMX ('vmx' is not in /proc/cpuinfo), so the" \
			"guest gets no VT-x and perfvisor can only report that; use EMU=bochs for VT-x" >&2
	elif [ -r "$nested" ] && ! grep -qE '^(Y|1)$' "$nested"; then
		echo "run-emu: WARNING: nested VT-x is off (kvm_intel nested=$(cat "$nested"));" \
			"load kvm_intel with nested=1 to give the guest VT-x" >&2
	fi
}

case $emu in
bochs)
	[ -n "$iso" ] || die "Bochs cannot load a kernel directly: boot an ISO (scripts/mkiso.sh)"
	[ $gdb -eq 0 ] || die "--gdb works with QEMU only"
	iso_abs=$(cd "$(dirname "$iso")" && pwd)/$(basename "$iso")
	# reset_on_triple_fault=0: a triple fault must stop the run, not reboot
	# into something that may look like a pass. ignore_bad_msrs=0: unknown
	# MSRs #GP as on hardware. rfb with timeout=0 is headless and does not
	# wait for a viewer (Debian's Bochs has no nogui).
	cat >"$dir/bochsrc" <<EOF
megs: $mem
romimage: file=/usr/share/bochs/BIOS-bochs-latest, options=fastboot
vgaromimage: file=/usr/share/vgabios/vgabios.bin
display_library: rfb, options="timeout=0"
cpu: model=corei7_skylake_x, count=$cpus, ips=50000000, reset_on_triple_fault=0, ignore_bad_msrs=0
boot: cdrom
ata0-master: type=cdrom, path=$iso_abs, status=inserted
com1: enabled=1, mode=file, dev=$serial
port_e9_hack: enabled=1
clock: sync=none, time0=local
log: $dir/bochs.log
panic: action=fatal
error: action=report
info: action=report
debug: action=ignore
speaker: enabled=0
sound: waveoutdrv=dummy, waveindrv=dummy, midioutdrv=dummy
EOF
	# The built-in debugger stops at t=0: continue, then quit at the end.
	printf 'c\nq\n' >"$dir/bochs.dbg"
	cmd=(bochs -q -f "$dir/bochsrc" -rc "$dir/bochs.dbg")
	;;
qemu | kvm)
	cmd=(qemu-system-x86_64 -display none -no-reboot
		-device "isa-debug-exit,iobase=0xf4,iosize=0x04"
		-serial "file:$serial" -smp "$cpus" -m "$mem")
	if [ "$emu" = kvm ]; then
		kvm_checks
		cmd+=(-enable-kvm -cpu host)
	fi
	if [ -n "$iso" ]; then
		cmd+=(-cdrom "$iso" -boot d)
	else
		cmd+=(-kernel "$kernel" -append "$append")
		[ ${#modules[@]} -eq 0 ] || cmd+=(-initrd "$(qemu_modules)")
	fi
	[ $gdb -eq 0 ] || cmd+=(-s -S)
	;;
*)
	die "unknown emulator '$emu' (bochs, qemu or kvm)"
	;;
esac

# Bochs's RFB display binds the first free port of 5900-5949, but two Bochs that
# start together both bind 5900, one fails listen() and then cannot rebind its
# socket to any other port, and exits. Starts are serialized: each waits until
# the previous one has claimed its port (or given up) before starting.
exec {rfb_lock_fd}>"${TMPDIR:-/tmp}/perfvisor-bochs-rfb.lock"
[ "$emu" != bochs ] || flock "$rfb_lock_fd"
rfb_claimed() {
	local i
	[ "$emu" = bochs ] && for i in $(seq 100); do
		grep -q -e 'listening for connections' -e 'RFB could not bind' \
			"$dir/bochs.log" 2>/dev/null && break
		kill -0 $emu_pid 2>/dev/null || break
		sleep 0.05
	done
	exec {rfb_lock_fd}>&-
}

printf '%q ' timeout -k 5 "$timeout_s" "${cmd[@]}" >"$dir/command.txt"
echo >>"$dir/command.txt"
: >"$serial"
rm -f "$dir/bochs.log"
[ $gdb -eq 0 ] || echo "run-emu: QEMU waits for gdb on localhost:1234" >&2

# timeout runs the emulator in its own process group, out of reach of the
# terminal's Ctrl-C: pass interruptions on ourselves.
# The emulator must not inherit the lock, or it would hold it to its end.
timeout -k 5 "$timeout_s" "${cmd[@]}" </dev/null >"$dir/emulator.txt" 2>&1 {rfb_lock_fd}>&- &
emu_pid=$!
rfb_claimed
interrupted=0
trap 'interrupted=1; kill -TERM $emu_pid 2>/dev/null' INT TERM
tail_pid=
if [ $follow -eq 1 ]; then
	tail -n +1 -s 0.2 --pid=$emu_pid -f "$serial" &
	tail_pid=$!
fi
wait $emu_pid
emu_status=$?
# A signal interrupts wait before the emulator has gone: wait for it again.
while kill -0 $emu_pid 2>/dev/null; do
	wait $emu_pid
	emu_status=$?
done
trap - INT TERM
[ -z "$tail_pid" ] || wait "$tail_pid"
[ $follow -eq 1 ] || [ $quiet -eq 1 ] || cat "$serial"

verdict_line='^perfvisor: EXIT \(-\{0,1\}[0-9]\{1,\}\)[[:space:]]*$'
code=$(tr -d '\r' <"$serial" | sed -n "s/$verdict_line/\\1/p" | tail -n 1)
if [ -z "$code" ]; then
	if [ $interrupted -eq 1 ]; then
		echo "run-emu: no verdict line (interrupted)" >&2
		status=130
	elif [ $emu_status -eq 124 ]; then
		echo "run-emu: no verdict line (timeout)" >&2
		status=124
	else
		echo "run-emu: no verdict line (emulator ended)" >&2
		tail -n 5 "$dir/emulator.txt" | sed 's/^/run-emu: emulator said: /' >&2
		status=125
	fi
else
	digits=$(sed 's/^-//; s/^0*//' <<<"$code")
	if [[ $code == -* ]]; then
		status=0
	elif [ ${#digits} -gt 3 ] || [ "${digits:-0}" -gt 255 ]; then
		status=255
	else
		status=${digits:-0}
	fi
	echo "run-emu: verdict $code (exit status $status)" >&2
	# The hypervisor is meant to leave the emulator itself (ports 0xF4, 0x8900).
	[ $emu_status -ne 124 ] ||
		echo "run-emu: the emulator did not end by itself after the verdict (timeout)" >&2
fi
if [ -n "$log" ]; then
	echo "run-emu: logs in $dir" >&2
else
	rm -rf "$dir"
fi
exit "$status"
