#!/usr/bin/env bats
# Device nodes outside the allow list: a container process that makes a
# node (mknod is not refused by the kernel to a root with CAP_MKNOD) must
# not be able to open it. The host's disk and memory stay out of reach.

load helpers

# with_mknod: the process may mknod (CAP_MKNOD), so only the device
# cgroup stands between it and a node it made.
with_mknod() {
	update_config '.root.readonly = false | .process.capabilities |= with_entries(.value += ["CAP_MKNOD"])'
}

@test "devices: nodes outside the allow list cannot be opened, whoever made them" {
	with_mknod
	local disk
	disk="$(lsblk -ndo MAJ:MIN 2>/dev/null | head -1 | tr -d ' ')"
	[ -n "$disk" ] || disk=8:0
	set_args sh -c "
		mknod /tmp/disk b ${disk%:*} ${disk#*:} 2>&1 || echo 'mknod disk refused'
		[ -b /tmp/disk ] && head -c 512 /tmp/disk >/dev/null 2>&1 && echo 'READ the host disk'
		[ -b /tmp/disk ] && (echo x >>/tmp/disk) 2>/dev/null && echo 'WROTE the host disk'
		mknod /tmp/mem c 1 1 2>&1 || echo 'mknod mem refused'
		[ -c /tmp/mem ] && head -c 16 /tmp/mem >/dev/null 2>&1 && echo 'READ /dev/mem'
		mknod /tmp/kmsg c 1 11 2>&1 || echo 'mknod kmsg refused'
		[ -c /tmp/kmsg ] && (echo husk-attack >/tmp/kmsg) 2>/dev/null && echo 'WROTE /dev/kmsg'
		ls -l /tmp
		head -c 1 /dev/null && echo 'allowed /dev/null opens'
		echo done"
	run husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	echo "$output"
	[ "$status" -eq 0 ] || fail "run failed: $output"
	assert_contains "$output" done 'allowed /dev/null opens'
	! grep -q '^READ\|^WROTE' <<<"$output" || fail "a device outside the allow list was opened"
	! dmesg 2>/dev/null | grep -q husk-attack || fail "the container wrote the host's kernel log"
}

@test "devices: a device in the allow list but with read-only access cannot be written" {
	with_mknod
	update_config '.linux.resources.devices += [{allow: true, type: "c", major: 1, minor: 11, access: "r"}]'
	set_args sh -c "mknod /tmp/kmsg c 1 11 && ls -l /tmp/kmsg; (echo husk-attack-ro >/tmp/kmsg) 2>/dev/null && echo WROTE; echo done"
	run husk run --bundle "$BUNDLE" "$(new_id)" </dev/null
	echo "$output"
	assert_contains "$output" done '/tmp/kmsg'
	! grep -q '^WROTE' <<<"$output" || fail "a read-only allowed device was written"
	! dmesg 2>/dev/null | grep -q husk-attack-ro || fail "the container wrote the host's kernel log"
}
