/*
 * What belongs to a container's namespaces rather than to its process
 * (launch.h): the host name and the domain name (its UTS namespace), the
 * sysctls (linux.sysctl). Pid 1's steps after the read-only /dev and "/"
 * and before the read-only paths, in runc's order: a read-only
 * /proc/sys would refuse the sysctls.
 *
 * A sysctl is written through the container's /proc, never by a path
 * (CVE-2025-52881: a write meant for the container's procfs must never
 * land on a file the image chose): /proc is opened without following a
 * symlink and checked to be a procfs; the sysctl's file is opened from
 * that fd by openat2 without a symlink, without leaving it and without
 * crossing into another mount (a bind over a /proc/sys file, such as a
 * mask, is refused, never written through), and is checked to be on
 * procfs itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>

#include "kernel.h"
#include "launch.h"

#define WHY HUSK_WHY

static int set_name(struct husk_launch *l, const char *field, const char *call, const char *name,
		    int (*set)(const char *, size_t))
{
	char q[WHY];

	if (set(name, strlen(name)) < 0)
		return husk_launch_errf(l, "%s: %s %s: %s", field, call, husk_quote(name, q, sizeof(q)),
					husk_errtext(errno));
	return 0;
}

int husk_set_hostname(struct husk_launch *l)
{
	return set_name(l, "hostname", "sethostname", l->plan->hostname, husk_k->sethostname);
}

int husk_set_domainname(struct husk_launch *l)
{
	return set_name(l, "domainname", "setdomainname", l->plan->domainname, husk_k->setdomainname);
}

/* Fails unless fd is on a procfs: "not on procfs (filesystem magic ...)". */
static int on_procfs(int fd, char *why)
{
	struct statfs fs;

	if (husk_k->fstatfs(fd, &fs) < 0)
		return husk_whyf(why, "fstatfs: %s", husk_errtext(errno));
	if (fs.f_type != PROC_SUPER_MAGIC)
		return husk_whyf(why, "not on procfs (filesystem magic %#lx)", (unsigned long)fs.f_type);
	return 0;
}

/* Writes value to /proc/name, reached from the checked procfs fd proc. */
static int write_proc(int proc, const char *name, const char *value, char *why)
{
	struct open_how how = {.flags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV};
	char sub[WHY];
	int fd = husk_k->openat2(proc, name, &how, sizeof(how)), r = 0;

	if (fd < 0)
		return husk_whyf(why, "open /proc/%.200s: openat2: %s", name, husk_errtext(errno));
	if (on_procfs(fd, sub) < 0)
		r = husk_whyf(why, "/proc/%.200s: %.200s", name, sub);
	else if (husk_k->write(fd, value, strlen(value)) < 0)
		r = husk_whyf(why, "write /proc/%.200s: %s", name, husk_errtext(errno));
	husk_k->close(fd);
	return r;
}

/* The container's /proc, which must be a procfs. */
static int open_proc(char *why)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	char sub[WHY];
	int fd = husk_k->openat2(AT_FDCWD, "/proc", &how, sizeof(how));

	if (fd < 0)
		return husk_whyf(why, "open /proc: openat2: %s", husk_errtext(errno));
	if (on_procfs(fd, sub) < 0) {
		husk_k->close(fd);
		return husk_whyf(why, "/proc: %.400s", sub);
	}
	return fd;
}

/* Each sysctl, in the order the parent planned them (by key). */
int husk_write_sysctls(struct husk_launch *l)
{
	const struct husk_plan *p = l->plan;
	char why[WHY], name[HUSK_PLAN_MAX_SYSCTL + 8], qk[WHY], qv[WHY];
	int proc = -1, r = 0;

	for (size_t i = 0; i < p->n_sysctls && r == 0; i++) {
		const char *key = p->sysctl[2 * i], *value = p->sysctl[2 * i + 1];

		/* "sys/" and the key, its dots as slashes: kernel.shmmax is
		 * /proc/sys/kernel/shmmax. */
		snprintf(name, sizeof(name), "sys/%s", key);
		for (char *c = name + 4; *c; c++)
			if (*c == '.')
				*c = '/';
		if ((proc < 0 && (proc = open_proc(why)) < 0) || write_proc(proc, name, value, why) < 0)
			r = husk_launch_errf(l, "linux.sysctl[%s]: write %s: %s", husk_quote(key, qk, sizeof(qk)),
					     husk_quote(value, qv, sizeof(qv)), why);
	}
	if (proc >= 0)
		husk_k->close(proc);
	return r;
}
