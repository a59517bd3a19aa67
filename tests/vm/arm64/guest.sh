#!/bin/sh
# guest.sh: husk-smoke.service's command in the arm64 guest (systemd is
# PID 1): marks the boot, runs smoke.sh (TAP) and prints its result, which
# the host (run.sh) reads from the serial console, and powers the guest off.
echo "HUSK-ARM64-BOOTED $(cut -d' ' -f1 /proc/uptime)s $(uname -m) $(uname -r)"
rc=0
sh /husk-vm/smoke.sh || rc=$?
echo "HUSK-ARM64-RESULT rc=$rc"
# Off at once (reboot(2), as busybox's poweroff -f): the disk is a
# throwaway snapshot, there is nothing to stop cleanly.
systemctl poweroff --force --force
