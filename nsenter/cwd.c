/*
 * The launcher's cwd (launch.h): process.cwd (or `exec --cwd`) entered
 * inside the container's root only. The launcher enters it first with
 * every capability it still has, so a path that leads out of the root
 * would put the process in the host's filesystem: /proc/PID/cwd or
 * /proc/PID/root of a host process, seen by a container without a pid
 * namespace of its own or with the host's /proc bound in, or an fd's
 * /proc/self/fd/N (CVE-2024-21626). The path is resolved by openat2 from
 * the root with RESOLVE_IN_ROOT (".." and symlinks stay in it) and
 * RESOLVE_NO_MAGICLINKS (no /proc magic link is followed), entered with
 * fchdir, and then checked as runc checks it: getcwd must give a path
 * under the root. A kernel or filter without openat2 (ENOSYS, EPERM)
 * gets runc's way: chdir, then the same check.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel.h"
#include "launch.h"

/* Opens cwd inside the root: an O_PATH fd, or -1 with errno. */
static int open_in_root(const char *cwd)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int root = husk_k->open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), fd, err;

	if (root < 0)
		return -1;
	fd = husk_k->openat2(root, cwd, &how, sizeof(how));
	err = errno;
	husk_k->close(root);
	errno = err;
	return fd;
}

/* The process's cwd must be under its root: getcwd says "(unreachable)"
 * when it is not (and fails with ENOENT in some kernels). */
static int verify_cwd(struct husk_launch *l)
{
	char buf[4200];

	if (husk_k->getcwd(buf, sizeof(buf)) < 0)
		return husk_launch_errf(l, "process.cwd: chdir \"%s\": getcwd: %s", l->plan->cwd,
					husk_errtext(errno));
	if (buf[0] != '/')
		return husk_launch_errf(l, "process.cwd: chdir \"%s\": current working directory is outside of "
					   "container mount namespace root -- possible container breakout detected",
					l->plan->cwd);
	return 0;
}

int husk_enter_cwd(struct husk_launch *l, int as_user)
{
	const char *cwd = l->plan->cwd;
	int fd = open_in_root(cwd), rc, err;

	if (fd >= 0) {
		rc = husk_k->fchdir(fd);
		husk_k->close(fd);
	} else if (errno == ENOSYS || errno == EPERM) {
		rc = husk_k->chdir(cwd);
	} else {
		rc = -1;
	}
	if (rc == 0)
		return verify_cwd(l) < 0 ? -1 : 1;
	err = errno;
	if (!as_user && (err == EACCES || err == EPERM))
		return 0;
	return husk_launch_errf(l, "process.cwd: chdir \"%s\": %s%s", cwd, husk_errtext(err),
				err == ELOOP ? " (or a /proc magic link, such as /proc/PID/cwd: refused, it may lead "
						 "out of the container's root)" : "");
}
