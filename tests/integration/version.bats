#!/usr/bin/env bats
# --version and the global flags.

load helpers

@test "--version prints runc's five lines: version, commit, spec, go, libseccomp" {
	run -0 husk --version
	[ "${#lines[@]}" -eq 5 ] || fail "want 5 lines, got ${#lines[@]}: $output"
	[[ "${lines[0]}" == "husk version "?* ]] || fail "line 1: ${lines[0]}"
	[[ "${lines[1]}" == "commit: "?* ]] || fail "line 2: ${lines[1]}"
	[[ "${lines[2]}" == "spec: "?* ]] || fail "line 3: ${lines[2]}"
	[[ "${lines[3]}" =~ ^go:\ go[0-9]+\.[0-9]+ ]] || fail "line 4: ${lines[3]}"
	[[ "${lines[4]}" =~ ^libseccomp:\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "line 5: ${lines[4]}"
}

@test "--version names the runtime-spec version husk implements" {
	run -0 husk --version
	[[ "${lines[2]}" =~ ^spec:\ [0-9]+\.[0-9]+\.[0-9]+ ]] || fail "line 3: ${lines[2]}"
}

@test "--version prints the repository's VERSION file" {
	local want
	want=$(cat "$BATS_TEST_DIRNAME/../../VERSION")
	run -0 husk --version
	[ "${lines[0]}" = "husk version $want" ] || fail "line 1: ${lines[0]}, VERSION says $want"
}

@test "--version: the libseccomp line is the library features reports" {
	run -0 husk --version
	local lib="${lines[4]#libseccomp: }"
	run -0 husk features
	run -0 jq -r '.annotations["io.github.seccomp.libseccomp.version"]' <<<"$output"
	[ "$output" = "$lib" ] || fail "features says $output, --version says $lib"
}

@test "--log F --log-format json: a failing create writes an error record" {
	local id log="$TEST_DIR/husk.log"
	id="$(new_id)"
	update_config '.linux.namespaces += [{"type": "netwrk"}]'
	run ! husk --log "$log" --log-format json create --bundle "$BUNDLE" "$id" </dev/null
	[ -s "$log" ] || fail "log file $log is empty or missing"
	# Every line is a JSON object ...
	run -0 jq -e -s 'length > 0 and all(type == "object")' "$log"
	# ... and one error record names the cause.
	run -0 jq -r -s 'map(select(.level == "error")) | .[].msg' "$log"
	[ -n "$output" ] || fail "no \"level\":\"error\" record in: $(cat "$log")"
	assert_contains "$output" netwrk
	assert_no_container "$id"
}

@test "--log F --log-format text writes the error too" {
	local id log="$TEST_DIR/husk.log"
	id="$(new_id)"
	update_config '.linux.namespaces += [{"type": "netwrk"}]'
	run ! husk --log "$log" --log-format text create --bundle "$BUNDLE" "$id" </dev/null
	[ -s "$log" ] || fail "log file $log is empty or missing"
	assert_contains "$(cat "$log")" netwrk
}

# Linking with --wrap=main (package onep) fails the probe go uses to pick
# linker flags, so the Makefile gives them itself; without compressed debug
# sections husk grows by 5 MB.
@test "the husk binary's debug sections are compressed, as go links them" {
	command -v readelf >/dev/null || skip "no readelf (binutils) to read the section flags"
	run -0 readelf -S -W "$HUSK_BIN"
	grep -q ' \.debug_info ' <<<"$output" || skip "$HUSK_BIN has no debug info (built with -w)"
	# The Flg column: C is SHF_COMPRESSED.
	grep -Eq ' \.debug_info .* C +[0-9]+ +[0-9]+ +[0-9]+$' <<<"$output" ||
		fail ".debug_info of $HUSK_BIN is not compressed: $(grep ' \.debug_info ' <<<"$output")"
}
