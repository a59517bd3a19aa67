#!/usr/bin/env bats
# Setup d of the VM lane: Debian 12's kernel booted with security=selinux,
# Debian's reference policy (permissive) and the lane's husk_container
# module (tests/vm/selinux/husk_container.te: container_t,
# container_file_t, which lxc_contexts names). runc 1.1.5 and husk run
# the same checks: the process label of pid 1 and of every exec, the mount
# label in the container's mountinfo, the session keyring's label, also in
# a user namespace, and a labelled process whose execve fails (the cases of
# runc's selinux.bats), a label the policy lacks, and, with SELinux
# enforcing, a write the policy denies to container_t refused.
#
# husk's mount and keyring labels come with issue 37's SELinux work: a husk
# that still refuses linux.mountLabel ("does not label mounts yet") skips
# those tests, saying so.

load lsm_helpers

LABEL=system_u:system_r:container_t:s0:c1,c2
LABEL2=system_u:system_r:container_t:s0:c3,c4
MOUNT_LABEL=system_u:object_r:container_file_t:s0:c1,c2

setup_file() {
	[ "${HUSK_VM_SETUP:-}" = d ] || skip "SELinux guest only (setup d; this is '${HUSK_VM_SETUP:-not a guest}')"
}

teardown() {
	# A test that turned enforcing on leaves the guest permissive.
	[ "$(cat /sys/fs/selinux/enforce 2>/dev/null)" != 1 ] || setenforce 0
	lsm_teardown
}

# needs_husk_mount_labels skips a test of husk's mount and keyring labels
# (issue 37's SELinux work) when this husk predates them: it refuses
# linux.mountLabel, saying it does not label mounts yet.
needs_husk_mount_labels() {
	local out
	update_config --arg l "$MOUNT_LABEL" '.linux.mountLabel = $l'
	set_args true
	out="$(husk run --bundle "$BUNDLE" "$(new_id)" 2>&1 </dev/null)" && return 0
	[[ "$out" != *"does not label mounts yet"* ]] ||
		skip "this husk predates issue 37's SELinux labels (it refuses linux.mountLabel: $out); needs branch lsm37"
	fail "husk run with linux.mountLabel: $out"
}

@test "selinux: the guest runs SELinux (permissive) with Debian's reference policy and the container types" {
	selinuxenabled || fail "SELinux is not enabled"
	[ "$(getenforce)" = Permissive ] || fail "getenforce: $(getenforce)"
	assert_contains "$(cat /sys/kernel/security/lsm)" selinux
	assert_contains "$(cat /etc/selinux/default/contexts/lxc_contexts)" container_t
	local c
	# selinuxfs's context file refuses a context the loaded policy lacks.
	for c in "$LABEL" "$MOUNT_LABEL" system_u:object_r:container_ro_file_t:s0; do
		printf '%s' "$c" >/sys/fs/selinux/context || fail "the policy has no $c"
	done
	! printf '%s' system_u:system_r:husk_no_such_t:s0 >/sys/fs/selinux/context 2>/dev/null ||
		fail "selinuxfs accepted a type the policy lacks"
	# The image was labelled when built (setfiles before mkfs.ext4 -d).
	c="$(stat -c %C /usr/sbin/runc)"
	[[ "$c" == system_u:object_r:*_t:s0 && "$c" != *unlabeled_t* ]] || fail "runc is labelled '$c'"
}

# check_process_label RUNTIME: process.selinuxLabel on pid 1 and an exec;
# exec --process-label gives another.
check_process_label() {
	local r="$1" id
	id="$(new_id)"
	update_config --arg l "$LABEL" '.process.selinuxLabel = $l'
	start_labelled "$r" "$id" "$LABEL"
	exec_attr_is "$r" "$LABEL2" --process-label "$LABEL2" "$id" cat /proc/self/attr/current
	pid_attr_is "$r" "$CTR_PID" "$LABEL"
	rt "$r" delete --force "$id"
}

@test "selinux (runc): process.selinuxLabel labels pid 1 and every exec; exec --process-label another" {
	check_process_label runc
}

@test "selinux (husk): process.selinuxLabel labels pid 1 and every exec; exec --process-label another" {
	check_process_label husk
}

# check_mount_label RUNTIME: linux.mountLabel is the context= of the
# container's tmpfs mounts (/dev, /dev/shm) in its mountinfo.
check_mount_label() {
	local r="$1" id m
	id="$(new_id)"
	update_config --arg l "$LABEL" --arg m "$MOUNT_LABEL" '.process.selinuxLabel = $l | .linux.mountLabel = $m'
	set_args cat /proc/self/mountinfo
	run rt "$r" run --bundle "$BUNDLE" "$id"
	[ "$status" -eq 0 ] || fail "$r run with linux.mountLabel: $output"
	for m in /dev /dev/shm; do
		echo "$output" | awk -v m="$m" '$5 == m' | grep -qF "context=\"$MOUNT_LABEL\"" ||
			fail "$r: $m is not mounted with context=\"$MOUNT_LABEL\": $(echo "$output" | awk -v m="$m" '$5 == m')"
	done
}

@test "selinux (runc): linux.mountLabel is the context= of /dev and /dev/shm" {
	check_mount_label runc
}

@test "selinux (husk): linux.mountLabel is the context= of /dev and /dev/shm" {
	needs_husk_mount_labels
	check_mount_label husk
}

# check_keyring RUNTIME run|exec [userns]: the container's session keyring
# carries its process label (runc's selinux.bats: "session keyring security
# label", and "+ userns": the container in a user namespace of its own).
check_keyring() {
	local r="$1" how="$2" id
	id="$(new_id)"
	cp "$HUSK_TOOLS_DIR/keylabel" "$BUNDLE/rootfs/bin/keylabel"
	update_config --arg l "$LABEL" '.process.selinuxLabel = $l'
	if [ "${3:-}" = userns ]; then
		set_ns user
		update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
			| .linux.gidMappings = [{"containerID": 0, "hostID": 200000, "size": 65536}]'
	fi
	if [ "$how" = run ]; then
		set_args /bin/keylabel
		run rt "$r" run --bundle "$BUNDLE" "$id"
	else
		set_args sleep 600
		rt_run_d "$r" "$id"
		run rt "$r" exec "$id" /bin/keylabel
	fi
	[ "$status" -eq 0 ] || fail "$r $how keylabel: $output"
	echo "$r $how: $output"
	# runc names the keyring _ses.ID; its label is the process's.
	[[ "$output" == "_ses"*" $LABEL" ]] || fail "$r $how: the session keyring is '$output', not labelled $LABEL"
}

@test "selinux (runc): the session keyring has the process label, in run and exec" {
	check_keyring runc run
	check_keyring runc exec
}

@test "selinux (husk): the session keyring has the process label, in run and exec" {
	needs_husk_mount_labels
	check_keyring husk run
	check_keyring husk exec
}

@test "selinux (runc): the session keyring has the process label in a user namespace, in run and exec" {
	requires_userns
	check_keyring runc run userns
	check_keyring runc exec userns
}

@test "selinux (husk): the session keyring has the process label in a user namespace, in run and exec" {
	requires_userns
	needs_husk_mount_labels
	check_keyring husk run userns
	check_keyring husk exec userns
}

# runc's selinux.bats "execve error + custom selinux label": a labelled
# process whose execve fails (a script naming an interpreter that does not
# exist) is reported as that execve's error, the container not started.
@test "selinux (runc, husk): a labelled process whose execve fails: the start fails with the exec error, nothing left" {
	local r id
	update_config --arg l "$LABEL" '.process.selinuxLabel = $l | .root.readonly = false'
	printf '#!/husk-no-such-interpreter foo\nsh\n' >"$BUNDLE/rootfs/run.sh"
	chmod +x "$BUNDLE/rootfs/run.sh"
	set_args /run.sh
	for r in runc husk; do
		id="$(new_id)"
		run rt "$r" run --bundle "$BUNDLE" "$id"
		echo "$r: $output"
		[ "$status" -ne 0 ] || fail "$r ran /run.sh"
		assert_contains "${output,,}" /run.sh "no such file or directory"
		run rt "$r" state "$id"
		[ "$status" -ne 0 ] || fail "$r kept the container: $output"
	done
	[ -z "$(ls -A "$HUSK_ROOT" 2>/dev/null)" ] || fail "husk left state: $(ls -A "$HUSK_ROOT")"
}

@test "selinux (runc, husk): a process label the policy lacks fails the start, nothing left; husk names the field and the label" {
	local r id bad=system_u:system_r:husk_no_such_t:s0
	update_config --arg l "$bad" '.process.selinuxLabel = $l'
	set_args true
	for r in runc husk; do
		id="$(new_id)"
		run rt "$r" run --bundle "$BUNDLE" "$id"
		echo "$r: $output"
		[ "$status" -ne 0 ] || fail "$r ran a container labelled $bad"
		run rt "$r" state "$id"
		[ "$status" -ne 0 ] || fail "$r kept the container: $output"
	done
	run rt husk run --bundle "$BUNDLE" "$(new_id)"
	assert_contains "$output" process.selinuxLabel
	assert_contains "$output" "$bad"
	[ -z "$(ls -A "$HUSK_ROOT" 2>/dev/null)" ] || fail "husk left state: $(ls -A "$HUSK_ROOT")"
}

# check_confined RUNTIME: a container labelled container_t:s0:c1,c2 writes
# its own file (container_file_t:s0:c1,c2) and, only while SELinux is
# permissive, a file of shadow_t, which the lane's module lets container_t
# read but not write: enforcing refuses that write, for runc as for husk.
check_confined() {
	local r="$1"
	update_config --arg l "$LABEL" '.process.selinuxLabel = $l | .root.readonly = false'
	echo >"$BUNDLE/rootfs/mine"
	echo >"$BUNDLE/rootfs/other"
	chcon system_u:object_r:container_file_t:s0:c1,c2 "$BUNDLE/rootfs/mine"
	chcon system_u:object_r:shadow_t:s0 "$BUNDLE/rootfs/other"
	# The exit status says it (an enforcing guest may close the stdio the
	# container inherits): 3 its own file refused, 4 the shadow_t one written.
	set_args sh -c 'echo x >>/mine || exit 3; echo x >>/other 2>/dev/null && exit 4; exit 0'
	run rt "$r" run --bundle "$BUNDLE" "$(new_id)"
	[ "$status" -eq 4 ] || fail "$r, permissive: status $status, want 4 (both written): $output"
	setenforce 1
	run rt "$r" run --bundle "$BUNDLE" "$(new_id)"
	setenforce 0
	if [ "$status" -ne 0 ]; then
		dmesg | grep -i avc | tail -20
		fail "$r, enforcing: status $status, want 0 (its own file written, shadow_t's refused): $output"
	fi
	dmesg | grep -F 'tcontext=system_u:object_r:shadow_t:s0' | grep -q 'permissive=0' ||
		fail "$r: no denial of the shadow_t write in the kernel's log"
}

@test "selinux (runc): enforcing, the label confines: container_t writes its own file, not a shadow_t one" {
	check_confined runc
}

@test "selinux (husk): enforcing, the label confines: container_t writes its own file, not a shadow_t one" {
	check_confined husk
}
