/*
 * build.c: pid 1 builds the container's root from CONFIG's payload
 * (bootstrap.h: struct husk_build_head), as runc's init does before it
 * finishes the container.
 */
#ifndef HUSK_NSENTER_BUILD_H
#define HUSK_NSENTER_BUILD_H

#include <stdint.h>
#include <stddef.h>

#include "launch.h"

/* What pid 1 takes from the build: the container's root (an O_PATH fd
 * of "/" once built), the pty slave made without a mount namespace, the
 * host's /dev/null clone (maskedPaths), and, before a chroot, pid 1's
 * fd directory on the host's /proc (to reopen exec.fifo through when the
 * root has no procfs); -1 each when there is none. */
struct husk_built {
	int root, slave, dev_null, host_fd_dir;
};

/* Reads CONFIG and builds the root; console is the console socket when
 * pid 1 makes the pty before a chroot (no mount namespace), else -1.
 * Never returns on failure: the reason goes to the parent (husk_fail). */
void husk_build_root(struct husk_launch *l, int console, struct husk_built *out);

/* MOUNT_SOURCE: mounts[i]'s source opened by the parent (an fd), or -1
 * with its error in err. */
int husk_ask_source(void *ctx, uint32_t i, char *err, size_t errlen);

#endif
