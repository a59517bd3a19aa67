#!/usr/bin/env bats
# Writes to masked and read-only paths: a container process (root, with
# the default capabilities) cannot write through a mask or a read-only
# path, nor undo them. The host's sysctls stay as they were.

load helpers

TARGET=kernel.printk_ratelimit_burst

@test "masked and read-only paths: writes and attempts to undo them fail, the host is unchanged" {
	save_sysctl "$TARGET"
	before="$(sysctl -n "$TARGET")"
	hostname_before="$(cat /proc/sys/kernel/hostname)"
	set_args sh -c '
		echo 1 >/proc/sys/kernel/printk_ratelimit_burst 2>/dev/null && echo "WROTE /proc/sys"
		echo h >/proc/sysrq-trigger 2>/dev/null && echo "WROTE sysrq-trigger"
		echo x >/proc/timer_list 2>/dev/null; head -c 1 /proc/timer_list | grep -q . && echo "READ timer_list"
		touch /proc/acpi/x 2>/dev/null && echo "WROTE in /proc/acpi"
		ls -A /proc/acpi /sys/firmware 2>/dev/null | grep -v : | grep -q . && echo "LISTED a masked directory"
		umount /proc/timer_list 2>/dev/null && echo "UNMASKED timer_list"
		umount /proc/acpi 2>/dev/null && echo "UNMASKED acpi"
		mount -o remount,rw /proc/sys 2>/dev/null && echo "REMOUNTED /proc/sys rw"
		mount -t proc proc /mnt 2>/dev/null && echo "MOUNTED a fresh proc"
		echo done'
	run husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	echo "$output"
	assert_contains "$output" done
	! grep -q '^[A-Z]' <<<"$output" || fail "the container got through a mask or read-only path"
	[ "$(sysctl -n "$TARGET")" = "$before" ] || fail "host $TARGET changed"
	[ "$(cat /proc/sys/kernel/hostname)" = "$hostname_before" ] || fail "the host's hostname changed"
}
