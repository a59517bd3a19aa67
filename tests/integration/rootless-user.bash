#!/usr/bin/env bash
# The user of the rootless suites (rootless.bats, tests/vm/suites/
# rootless-v2.bats): made by setup_file with subordinate ids of its own
# and removed by teardown_file, with everything it still runs.

# rl_user_create makes the user and exports RL_USER, RL_UID, RL_GID,
# RL_HOME, RL_SUB_START (its 65536 subordinate uids and gids), RL_BIN (its
# own copy of husk: the repository may sit under a directory only root can
# walk, /root in CI) and RL_XDG (/run/user/UID, not made here).
rl_user_create() {
	command -v useradd >/dev/null || skip "no useradd"
	command -v runuser >/dev/null || skip "no runuser (util-linux)"
	export RL_USER="huskrl$$"
	export RL_HOME
	RL_HOME="$(mktemp -d "${TMPDIR:-/tmp}/husk-rl-home.XXXXXX")"
	# Subordinate ids for this user only: past every range already given.
	export RL_SUB_START
	RL_SUB_START="$(cat /etc/subuid /etc/subgid 2>/dev/null | awk -F: 'BEGIN{m=200000} {e=$2+$3; if (e>m) m=e} END{print int((m+65535)/65536)*65536}')"
	useradd --no-create-home --home-dir "$RL_HOME" --shell /bin/sh --user-group \
		-K SUB_UID_COUNT=0 -K SUB_GID_COUNT=0 "$RL_USER"
	usermod --add-subuids "$RL_SUB_START-$((RL_SUB_START + 65535))" \
		--add-subgids "$RL_SUB_START-$((RL_SUB_START + 65535))" "$RL_USER"
	chown "$RL_USER:$RL_USER" "$RL_HOME"
	export RL_UID RL_GID
	RL_UID="$(id -u "$RL_USER")"
	RL_GID="$(id -g "$RL_USER")"
	export RL_BIN="$RL_HOME/bin/husk"
	mkdir -p "$RL_HOME/bin"
	cp "$HUSK_BIN" "$RL_BIN"
	chmod 0755 "$RL_HOME" "$RL_HOME/bin" "$RL_BIN"
	export RL_XDG="/run/user/$RL_UID"
}

# rl_user_remove kills whatever the user still runs (podman's pause
# process, a test's leftovers: only this file's user owns them) and
# removes it, its ranges, its home and RL_XDG.
rl_user_remove() {
	[ -n "${RL_USER:-}" ] || return 0
	local p
	for p in $(pgrep -u "$RL_USER"); do kill -KILL "$p" 2>/dev/null || true; done
	sleep 0.2
	usermod --del-subuids "$RL_SUB_START-$((RL_SUB_START + 65535))" \
		--del-subgids "$RL_SUB_START-$((RL_SUB_START + 65535))" "$RL_USER" 2>/dev/null || true
	userdel "$RL_USER" 2>/dev/null || true
	rm -rf "$RL_XDG" "$RL_HOME"
}

# as_user CMD...: run CMD as the test user, with its own environment.
as_user() {
	runuser -u "$RL_USER" -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$RL_HOME" \
		USER="$RL_USER" LOGNAME="$RL_USER" XDG_RUNTIME_DIR="$RL_XDG" "$@"
}

# uhusk ARGS...: husk as the test user, with its default --root.
uhusk() {
	as_user timeout -k 5 "$HUSK_TIMEOUT" "$RL_BIN" "$@"
}

# rl_bundle: the test's bundle with the user's own `husk spec --rootless`
# (the rootfs stays root's).
rl_bundle() {
	chmod 0777 "$BUNDLE"
	rm -f "$BUNDLE/config.json"
	uhusk spec --rootless --bundle "$BUNDLE" || fail "husk spec --rootless as $RL_USER failed"
	update_config '.process.terminal = false'
}

# rl_teardown deletes the user's containers, then fails when anything is
# left in its state root ($RL_XDG/husk), after removing it.
rl_teardown() {
	local id left=""
	for id in $(uhusk list -q 2>/dev/null); do
		uhusk delete --force "$id" >/dev/null 2>&1 || true
	done
	if [ -d "$RL_XDG/husk" ] && [ -n "$(ls -A "$RL_XDG/husk")" ]; then
		left="$(ls -A "$RL_XDG/husk" | tr '\n' ' ')"
		rm -rf "${RL_XDG:?}/husk/"*
	fi
	[ -z "$left" ] || fail "left in $RL_XDG/husk: $left"
}
