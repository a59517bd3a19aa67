#!/usr/bin/env bats
# linux.maskedPaths as runc applies them: a path listed twice is masked
# once; all masked directories share one read-only tmpfs (one superblock,
# not one per path); a masked file is the host's /dev/null whatever the
# image's /dev/null is; a path that does not exist, or dangles, is skipped.
# (The attacks on masking are in tests/security/cve-2025-31133.bats.)

load helpers

@test "linux.maskedPaths: a path listed twice is masked once" {
	update_config '.linux.maskedPaths = ["/proc/timer_list", "/proc/acpi", "/proc/timer_list", "/proc/acpi/", "/proc/acpi"]'
	set_args sh -c 'for p in /proc/timer_list /proc/acpi; do echo "$p $(awk -v p=$p '"'"'$5 == p'"'"' /proc/self/mountinfo | wc -l)"; done'
	run -0 husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	echo "$output"
	[ "${lines[0]}" = "/proc/timer_list 1" ] || fail "timer_list: ${lines[0]}"
	[ "${lines[1]}" = "/proc/acpi 1" ] || fail "acpi: ${lines[1]}"
}

@test "linux.maskedPaths: all masked directories share one read-only tmpfs" {
	update_config '.linux.maskedPaths = ["/proc/acpi", "/proc/scsi", "/sys/firmware", "/proc/timer_list", "/sys/devices/virtual/powercap", "/proc/driver"]'
	# For each masked directory that exists: its mountinfo major:minor (the
	# superblock), its type and its options.
	set_args sh -c 'for p in /proc/acpi /proc/scsi /sys/firmware /sys/devices/virtual/powercap /proc/driver; do
		awk -v p=$p '"'"'$5 == p { print $3, $6, $(NF-2) }'"'"' /proc/self/mountinfo
	done; touch /proc/acpi/x 2>/dev/null && echo WRITABLE; echo end'
	run -0 husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	echo "$output"
	[ "${lines[-1]}" = end ] || fail "probe failed"
	! grep -q WRITABLE <<<"$output" || fail "a masked directory is writable"
	local n devs
	n="$(grep -c tmpfs <<<"$output")"
	[ "$n" -ge 2 ] || skip "fewer than two of the masked directories exist here"
	devs="$(grep tmpfs <<<"$output" | awk '{print $1}' | sort -u | wc -l)"
	[ "$devs" -eq 1 ] || fail "the masked directories are on $devs tmpfs superblocks, want one"
	! grep tmpfs <<<"$output" | grep -vq '^[^ ]* ro,' || fail "a masked directory's tmpfs is not read-only"
}

@test "linux.maskedPaths: a masked file is the character device 1:3 even when the image's /dev/null is not" {
	update_config '.mounts = [.mounts[] | select(.destination | startswith("/dev") | not)]'
	rm -f "$BUNDLE/rootfs/dev/null"
	echo "not null" >"$BUNDLE/rootfs/dev/null"
	update_config '.linux.maskedPaths = ["/proc/timer_list"]'
	set_args sh -c 'stat -c "%F %t:%T" /proc/timer_list; wc -c </proc/timer_list'
	run -0 husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	echo "$output"
	[ "${lines[0]}" = "character special file 1:3" ] || fail "mask: ${lines[0]}"
	[ "${lines[1]}" = 0 ] || fail "masked file reads ${lines[1]} bytes"
}

@test "linux.maskedPaths: a path that does not exist or dangles is skipped" {
	ln -s /nowhere "$BUNDLE/rootfs/dangling"
	update_config '.linux.maskedPaths += ["/dangling", "/no/such/path", "/proc/no-such-file"]'
	set_args sh -c 'readlink /dangling'
	run -0 husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	[ "$output" = /nowhere ] || fail "the dangling symlink changed: $output"
}
