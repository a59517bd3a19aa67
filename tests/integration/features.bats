#!/usr/bin/env bats
# husk features: the OCI features document, and that it tells the truth.

load helpers

@test "features: prints a JSON features document" {
	run -0 husk features
	jq -e '.ociVersionMax == "1.3.0" and (.hooks | index("createRuntime")) and (.linux.namespaces | length) == 8' <<<"$output" >/dev/null ||
		fail "features: $output"
}

@test "features: every listed namespace type is accepted by create" {
	local ns id
	for ns in $(husk features | jq -r '.linux.namespaces[]'); do
		# user needs mappings, time is tested with its offsets elsewhere.
		[ "$ns" = user ] && continue
		id="$(new_id)"
		set_ns "$ns"
		husk create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>"$TEST_DIR/err" || fail "namespace $ns: $(cat "$TEST_DIR/err")"
		husk delete --force "$id" || fail "delete $id"
	done
}

@test "features: every listed mount option is accepted by create" {
	local opts id
	opts="$(husk features | jq -c '[.mountOptions[] | select(. != "remount" and . != "mand" and . != "bind" and . != "rbind")]')"
	id="$(new_id)"
	# One tmpfs per option: each must get past the parser and the kernel.
	update_config --argjson o "$opts" '.mounts += [$o[] | {destination: ("/opt-" + .), type: "tmpfs", source: "tmpfs", options: [.]}]'
	husk create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>"$TEST_DIR/err" || fail "$(cat "$TEST_DIR/err")"
}

@test "features: apparmor and selinux say what the host has" {
	local aa=false se=false
	[ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ] && aa=true
	[ -e /sys/fs/selinux/enforce ] && se=true
	run -0 husk features
	[ "$(jq -r .linux.apparmor.enabled <<<"$output")" = "$aa" ] || fail "apparmor: $output"
	[ "$(jq -r .linux.selinux.enabled <<<"$output")" = "$se" ] || fail "selinux: $output"
	# Idmapped mounts need mount_setattr(2), Linux 5.12.
	local idmap=false major minor
	IFS=. read -r major minor _ <<<"$(uname -r)"
	((major > 5 || (major == 5 && minor >= 12))) && idmap=true
	[ "$(jq -r '.linux.mountExtensions.idmap.enabled' <<<"$output")" = "$idmap" ] || fail "idmap: $output"
}

@test "features: the listed seccomp actions compile" {
	local a id
	id="$(new_id)"
	a="$(husk features | jq -c '[.linux.seccomp.actions[] | select(. != "SCMP_ACT_NOTIFY" and . != "SCMP_ACT_ALLOW")]')"
	update_config --argjson a "$a" '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
		syscalls: [$a | to_entries[] | {names: ["syscall-\(.key)", (["acct", "bpf", "kexec_load", "swapon", "swapoff", "reboot", "pivot_root", "quotactl"][.key])], action: .value}]}'
	husk create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>"$TEST_DIR/err" || fail "$(cat "$TEST_DIR/err")"
}

@test "features: the systemd drivers are supported and the annotations husk acts on are listed" {
	run -0 husk features
	# husk has --systemd-cgroup (system bus; a user's session bus without
	# root), as runc 1.1.5, whose document says the same.
	jq -e '.linux.cgroup.systemd == true and .linux.cgroup.systemdUser == true' <<<"$output" >/dev/null ||
		fail "cgroup: $(jq -c .linux.cgroup <<<"$output")"
	if [ -x /usr/sbin/runc ]; then
		/usr/sbin/runc features | jq -e '.linux.cgroup.systemd == true and .linux.cgroup.systemdUser == true' >/dev/null ||
			fail "runc features disagrees: $(/usr/sbin/runc features | jq -c .linux.cgroup)"
	fi
	# Every config.json annotation husk reads (a trailing "." is a prefix).
	local a
	for a in org.systemd.property. org.criu.config io.husk.cni.network io.husk.cni.hook.network \
		io.husk.cni.ifname io.husk.cni.args io.husk.cni.capabilities; do
		jq -e --arg a "$a" '.potentiallyUnsafeConfigAnnotations | index($a)' <<<"$output" >/dev/null ||
			fail "potentiallyUnsafeConfigAnnotations lacks $a: $(jq -c .potentiallyUnsafeConfigAnnotations <<<"$output")"
	done
}
