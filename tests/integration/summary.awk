# summary.awk: pass bats' TAP stream through unchanged and end it with the
# summary line bats' pretty formatter prints ("68 tests, 0 failures",
# then ", N skipped" and ", N not run" when there are any), so CI logs are
# plain TAP yet end with the verdict. The Makefile runs this with pipefail,
# so the exit status stays bats'.
{ print; fflush() }
/^1\.\.[0-9]+$/ { planned = substr($0, 4) + 0 }
/^ok / { seen++; if ($0 ~ / # skip( |$)/) skipped++ }
/^not ok / { seen++; failures++ }
END {
	count = planned > seen ? planned : seen
	line = sprintf("%d test%s, %d failure%s", count, count == 1 ? "" : "s",
		failures, failures == 1 ? "" : "s")
	if (skipped > 0) line = line sprintf(", %d skipped", skipped)
	if (count > seen) line = line sprintf(", %d not run", count - seen)
	printf "\n%s\n", line
}
