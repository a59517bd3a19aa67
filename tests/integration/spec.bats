#!/usr/bin/env bats
# husk spec: a default config.json that husk run runs as is.

load helpers

@test "spec --bundle writes a valid OCI config.json" {
	rm -f "$BUNDLE/config.json"
	run -0 husk spec --bundle "$BUNDLE"
	[ -s "$BUNDLE/config.json" ] || fail "no config.json"
	run -0 jq -e '.ociVersion and .process.args and .root.path and (.linux.namespaces | length > 0)' "$BUNDLE/config.json"
}

@test "spec without --bundle writes config.json in the current dir" {
	local d="$TEST_DIR/cwd"
	mkdir "$d"
	cd "$d"
	run -0 husk spec
	[ -s "$d/config.json" ] || fail "no config.json in $d"
	run -0 jq -e . "$d/config.json"
}

@test "husk run runs the spec as is (sh on a terminal, as runc's spec; exit typed in)" {
	local id
	id="$(new_id)"
	rm -f "$BUNDLE/config.json"
	run -0 husk spec --bundle "$BUNDLE"
	run -0 jq -e '.process.args == ["sh"] and .process.terminal == true' "$BUNDLE/config.json"
	# The pty gets husk's stdin: the shell reads "exit" from it.
	run -0 husk run --bundle "$BUNDLE" "$id" <<<"exit 0"
	assert_no_container "$id"
}

@test "husk run runs the spec with only process.args changed" {
	local id
	id="$(new_id)"
	rm -f "$BUNDLE/config.json"
	run -0 husk spec --bundle "$BUNDLE"
	update_config '.process.args = ["echo", "spec-as-is"]'
	run -0 husk run --bundle "$BUNDLE" "$id" </dev/null
	[ "$output" = "spec-as-is" ] || fail "output: $output"
}
