/*
 * The launcher's credentials (launch.h): the bounding set first (it needs
 * CAP_SETPCAP), then stdio made the user's, then groups and ids with capabilities kept across the
 * uid change, then the capability sets and the ambient set, then
 * no_new_privs. The parent checked every value (libcontainer/launch).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel.h"
#include "launch.h"
#include "nsexec.h"

/* The capabilities by number, named as in config.json (and as
 * libcontainer/caps names them: TestCapNames checks). */
static const char *const cap_names[] = {
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW",
	"CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
	"CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN",
	"CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON",
	"CAP_BPF", "CAP_CHECKPOINT_RESTORE",
};

const char *husk_cap_name(uint32_t v, char *buf, size_t n)
{
	if (v < sizeof(cap_names) / sizeof(cap_names[0]))
		return cap_names[v];
	snprintf(buf, n, "cap(%u)", v);
	return buf;
}

static int drop_bounding(struct husk_launch *l)
{
	const struct husk_plan_caps *c = &l->plan->caps;

	char name[16];

	for (uint32_t v = 0; v <= c->last_cap; v++) {
		if (c->bounding & (1ULL << v))
			continue;
		int in = husk_k->prctl(PR_CAPBSET_READ, v, 0, 0, 0);

		if (in < 0)
			return husk_launch_errf(l, "process.capabilities.bounding: read %s from the bounding set: %s",
						husk_cap_name(v, name, sizeof(name)), husk_errtext(errno));
		if (in && husk_k->prctl(PR_CAPBSET_DROP, v, 0, 0, 0) < 0)
			return husk_launch_errf(l, "process.capabilities.bounding: drop %s from the bounding set: %s",
						husk_cap_name(v, name, sizeof(name)), husk_errtext(errno));
	}
	return 0;
}

/*
 * setgroups. In a user namespace whose setgroups is "deny" (mapped by an
 * unprivileged user without newgidmap) it is refused even for an empty
 * list, which is what the process has already: EPERM for none is fine.
 * (A launcher with CAP_SETGID gets EPERM from nothing else.)
 */
static int set_groups(struct husk_launch *l)
{
	const struct husk_plan *p = l->plan;
	char list[512] = "[";
	size_t n = 1;

	if (husk_k->setgroups(p->n_groups, (const gid_t *)p->groups) == 0 || (p->n_groups == 0 && errno == EPERM))
		return 0;
	for (size_t i = 0; i < p->n_groups && n < sizeof(list) - 16; i++)
		n += snprintf(list + n, sizeof(list) - n, "%s%u", i ? " " : "", p->groups[i]);
	snprintf(list + n, sizeof(list) - n, "]");
	return husk_launch_errf(l, "process.user.additionalGids: setgroups %s: %s", list, husk_errtext(errno));
}

static int set_capabilities(struct husk_launch *l)
{
	const struct husk_plan_caps *c = &l->plan->caps;
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2];
	char name[16];

	for (int i = 0; i < 2; i++) {
		data[i].effective = c->effective >> (32 * i);
		data[i].permitted = c->permitted >> (32 * i);
		data[i].inheritable = c->inheritable >> (32 * i);
	}
	if (husk_k->capset(&hdr, data) < 0)
		return husk_launch_errf(l, "process.capabilities: capset: %s", husk_errtext(errno));
	if (husk_k->prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && (errno != EINVAL || c->ambient))
		return husk_launch_errf(l, "process.capabilities: clear the ambient set: %s", husk_errtext(errno));
	/* The parent left out, with runc's warning, what cannot be raised;
	 * what the kernel still refuses gets the same words, as in runc. */
	for (uint32_t v = 0; v <= c->last_cap; v++)
		if ((c->ambient & (1ULL << v)) && husk_k->prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, v, 0, 0) < 0)
			husk_logf("warning", "can't raise ambient capability %s: %s (process.capabilities.ambient)",
				  husk_cap_name(v, name, sizeof(name)), husk_errtext(errno));
	return 0;
}

/*
 * The process's stdio becomes its user's, as in runc and crun, so that a
 * process not run as root can reopen /dev/stdout (a pipe's inode is its
 * creator's, mode 0600). Only the owner, as runc: the gid a mount
 * prefers stays. Not /dev/null; not one already the user's. Errors that
 * say the file cannot be the user's (an id or owner not mapped in the
 * user namespace, a read-only /dev) leave it, as runc does.
 */
static int chown_stdio(struct husk_launch *l)
{
	struct stat null = {0}, st;

	/* A root without /dev/null (husk runs one; runc makes it) has none to skip. */
	if (husk_k->stat("/dev/null", &null) < 0 && errno != ENOENT)
		return husk_launch_errf(l, "process.user.uid: stat /dev/null: %s", husk_errtext(errno));
	for (int fd = 0; fd <= 2; fd++) {
		if (husk_k->fstat(fd, &st) < 0)
			return husk_launch_errf(l, "process.user.uid: fstat stdio fd %d: %s", fd, husk_errtext(errno));
		if (st.st_uid == l->plan->uid || (null.st_rdev && st.st_rdev == null.st_rdev))
			continue;
		if (husk_k->fchown(fd, l->plan->uid, -1) < 0 && errno != EINVAL && errno != EPERM && errno != EROFS)
			return husk_launch_errf(l, "process.user.uid: chown stdio fd %d to %u: %s", fd, l->plan->uid,
						husk_errtext(errno));
	}
	return 0;
}

int husk_set_credentials(struct husk_launch *l)
{
	const struct husk_plan *p = l->plan;

	if (drop_bounding(l) < 0)
		return -1;
	if (husk_k->prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return husk_launch_errf(l, "prctl(PR_SET_KEEPCAPS): %s", husk_errtext(errno));
	if (chown_stdio(l) < 0)
		return -1;
	if (set_groups(l) < 0)
		return -1;
	if (husk_k->setresgid(p->gid, p->gid, p->gid) < 0)
		return husk_launch_errf(l, "process.user.gid: setresgid %u: %s", p->gid, husk_errtext(errno));
	if (husk_k->setresuid(p->uid, p->uid, p->uid) < 0)
		return husk_launch_errf(l, "process.user.uid: setresuid %u: %s", p->uid, husk_errtext(errno));
	if (husk_k->prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		return husk_launch_errf(l, "prctl(PR_SET_KEEPCAPS, 0): %s", husk_errtext(errno));
	if (set_capabilities(l) < 0)
		return -1;
	if (p->no_new_privs && husk_k->prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return husk_launch_errf(l, "process.noNewPrivileges: prctl: %s", husk_errtext(errno));
	return 0;
}
