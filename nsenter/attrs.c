/*
 * The launcher's process attributes (launch.h): CPU affinity, rlimits,
 * umask, session keyring, memory policy, personality, I/O priority,
 * scheduler and LSM exec labels (each a step of launch.c's table). Each is
 * per task in the kernel and survives fork and execve, but for two
 * scheduler cases (see husk_sched_after_fork).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel.h"
#include "launch.h"
#include "nsexec.h"

#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_CLASS_SHIFT 13

/* "[0 2 5]": the bits set in mask, for error messages. */
static const char *list_bits(const uint64_t *mask, size_t words, char *buf, size_t n)
{
	size_t used = snprintf(buf, n, "[");

	for (size_t i = 0; i < words * 64 && used < n - 16; i++)
		if (mask[i / 64] & (1ULL << (i % 64)))
			used += snprintf(buf + used, n - used, "%s%zu", used > 1 ? " " : "", i);
	snprintf(buf + used, n - used, "]");
	return buf;
}

int husk_set_affinity(const char *field, const uint64_t *mask, size_t words, char *err, size_t errlen)
{
	size_t ncpu = words * 64, size = CPU_ALLOC_SIZE(ncpu);
	cpu_set_t *set = CPU_ALLOC(ncpu);
	char list[256];
	int rc;

	if (!set) {
		snprintf(err, errlen, "%s: %s", field, husk_errtext(errno));
		return -1;
	}
	CPU_ZERO_S(size, set);
	for (size_t i = 0; i < ncpu; i++)
		if (mask[i / 64] & (1ULL << (i % 64)))
			CPU_SET_S(i, size, set);
	rc = husk_k->sched_setaffinity(0, size, set);
	CPU_FREE(set);
	if (rc < 0) {
		snprintf(err, errlen, "%s: sched_setaffinity(%s): %s", field,
			 list_bits(mask, words, list, sizeof(list)), husk_errtext(errno));
		return -1;
	}
	return 0;
}

/* Logs the CPU affinity the kernel gave us, as runc's "affinity: 0xMASK"
 * (the first 64 CPUs), prefixed and followed by why; only under --debug,
 * the one reason to ask. */
void husk_log_affinity(const char *prefix, const char *why)
{
	unsigned long long mask = 0;
	cpu_set_t set;

	if (!husk_debug_on())
		return;
	if (sched_getaffinity(0, sizeof(set), &set) < 0) {
		husk_logf("debug", "%saffinity: unknown: sched_getaffinity: %s", prefix, husk_errtext(errno));
		return;
	}
	for (int i = 0; i < 64; i++)
		if (CPU_ISSET(i, &set))
			mask |= 1ULL << i;
	husk_logf("debug", "%saffinity: 0x%llx (%s)", prefix, mask, why);
}

static int set_rlimits(struct husk_launch *l)
{
	const struct husk_plan *p = l->plan;

	for (size_t i = 0; i < p->n_rlimits; i++) {
		const struct husk_plan_rlimit *r = &p->rlimits[i];
		struct rlimit lim = {.rlim_cur = r->soft, .rlim_max = r->hard};

		if (husk_k->setrlimit(r->type, &lim) < 0)
			return husk_launch_errf(l, "process.rlimits[%u]: setrlimit(%u, soft %llu, hard %llu): %s",
						r->index, r->type, (unsigned long long)r->soft,
						(unsigned long long)r->hard, husk_errtext(errno));
	}
	husk_k->umask(p->umask);
	return 0;
}

static int set_mempolicy(struct husk_launch *l)
{
	const struct husk_plan *p = l->plan;
	const struct husk_plan_mempolicy *m = &p->mempolicy;
	char list[256];

	if (husk_k->set_mempolicy(m->mode | m->flags, p->nodes, p->nodes ? p->node_words * 64 + 1 : 0) == 0)
		return 0;
	return husk_launch_errf(l, "linux.memoryPolicy: set_mempolicy(mode %d, flags 0x%x, nodes %s): %s",
				m->mode, m->flags, list_bits(p->nodes, p->node_words, list, sizeof(list)),
				husk_errtext(errno));
}

/* Labels the keyrings this process creates with the process's SELinux
 * label, so the session keyring joined next has it, as runc does. */
static int set_key_label(struct husk_launch *l)
{
	const char *label = l->plan->selinux;
	ssize_t n;

	if (l->lsm_fd[2] < 0)
		return 0;
	n = husk_k->write(l->lsm_fd[2], label, strlen(label));
	husk_k->close(l->lsm_fd[2]);
	l->lsm_fd[2] = -1;
	if (n != (ssize_t)strlen(label))
		return husk_launch_errf(l, "process.selinuxLabel \"%s\": write /proc/self/attr/keycreate: %s", label,
					husk_errtext(errno));
	return 0;
}

/*
 * Joins a new anonymous session keyring: as in runc, a container's process
 * never shares its caller's. Not one joined by name: joining "_ses" (or
 * runc's "_ses.<container id>") takes any keyring of that name its
 * caller may search, one a container made searchable and planted keys in
 * included. So each process, init's and every exec's, has its own (runc's
 * execs share init's). ENOSYS: a kernel without keys.
 */
static int join_keyring(struct husk_launch *l)
{
	if (husk_k->keyctl(KEYCTL_JOIN_SESSION_KEYRING, 0) < 0 && errno != ENOSYS)
		return husk_launch_errf(l, "join a new session keyring: %s", husk_errtext(errno));
	return 0;
}

/* Writes the exec labels to the attribute files husk_launch_open opened. */
int husk_set_labels(struct husk_launch *l)
{
	const struct husk_plan *p = l->plan;
	char buf[4200];
	int n;

	if (p->apparmor) {
		n = snprintf(buf, sizeof(buf), "exec %s", p->apparmor);
		if (husk_k->write(l->lsm_fd[0], buf, n) != n)
			return husk_launch_errf(l, "process.apparmorProfile \"%s\": write /proc/self/attr/%s: %s",
						p->apparmor, l->apparmor_attr, husk_errtext(errno));
	}
	if (p->selinux) {
		n = strlen(p->selinux);
		if (husk_k->write(l->lsm_fd[1], p->selinux, n) != n)
			return husk_launch_errf(l, "process.selinuxLabel \"%s\": write /proc/self/attr/exec: %s",
						p->selinux, husk_errtext(errno));
	}
	for (int i = 0; i < 3; i++)
		if (l->lsm_fd[i] >= 0) {
			husk_k->close(l->lsm_fd[i]);
			l->lsm_fd[i] = -1;
		}
	return 0;
}

/*
 * A SCHED_DEADLINE task cannot fork (EAGAIN), and SCHED_FLAG_RESET_ON_FORK
 * is lost by one: an exec forks before its scheduler then (launch.c's
 * fork step), and the forked process sets it, still privileged.
 */
int husk_sched_after_fork(const struct husk_plan *p)
{
	return p->has_sched && (p->sched.policy == SCHED_DEADLINE || (p->sched.flags & SCHED_FLAG_RESET_ON_FORK));
}

int husk_set_scheduler(struct husk_launch *l)
{
	const struct husk_plan_sched *s = &l->plan->sched;
	/* struct sched_attr, SCHED_ATTR_SIZE_VER0 */
	struct {
		uint32_t size, policy;
		uint64_t flags;
		int32_t nice;
		uint32_t priority;
		uint64_t runtime, deadline, period;
	} attr = {
		.size = sizeof(attr), .policy = s->policy, .flags = s->flags, .nice = s->nice,
		.priority = s->priority, .runtime = s->runtime, .deadline = s->deadline, .period = s->period,
	};
	int err;

	if (husk_k->sched_setattr(0, &attr, 0) == 0)
		return 0;
	err = errno;
	/* runc's words: with a cpuset, EPERM is most likely the kernel
	 * refusing SCHED_DEADLINE to a task not allowed every CPU. */
	return husk_launch_errf(l, "process.scheduler: sched_setattr(policy %u, priority %u, nice %d): %s%s",
				s->policy, s->priority, s->nice, husk_errtext(err),
				err == EPERM && s->cpuset ? ": process scheduler can't be used together with AllowedCPUs"
							     " (linux.resources.cpu.cpus)" : "");
}

/*
 * rlimits, umask, keyring, memory policy, personality, I/O priority, the
 * final CPU affinity (before the scheduler, a step of its own: a
 * SCHED_DEADLINE task may not change it), in that order.
 */
int husk_set_attrs(struct husk_launch *l)
{
	const struct husk_plan *p = l->plan;

	if (set_rlimits(l) < 0)
		return -1;
	if (p->keyring && (set_key_label(l) < 0 || join_keyring(l) < 0))
		return -1;
	if (p->has_mempolicy && set_mempolicy(l) < 0)
		return -1;
	if (p->has_personality && husk_k->personality(p->personality) < 0)
		return husk_launch_errf(l, "linux.personality: personality(0x%x): %s", p->personality,
					husk_errtext(errno));
	if (p->has_ioprio &&
	    husk_k->ioprio_set(IOPRIO_WHO_PROCESS, 0, p->ioprio.class << IOPRIO_CLASS_SHIFT | p->ioprio.priority) < 0)
		return husk_launch_errf(l, "process.ioPriority: ioprio_set(class %d, priority %d): %s",
					p->ioprio.class, p->ioprio.priority, husk_errtext(errno));
	if (p->affinity) {
		if (husk_set_affinity("process.execCPUAffinity.final", p->affinity, p->affinity_words, l->err,
				      sizeof(l->err)) < 0)
			return -1;
		husk_log_affinity("", "process.execCPUAffinity.final");
	}
	return 0;
}
