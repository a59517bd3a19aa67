/*
 * nsexec: the C stage of `husk init`, run before the Go runtime starts
 * (constructor in nsenter.go); a no-op unless _HUSK_INITPIPE is set. On that
 * socket (protocol: libcontainer/bootstrap/protocol.go) it reads the
 * bootstrap message (parse.c) and, for an exec, the PLAN of the process;
 * enters the v1 cgroups it names, keeps only the fds of the contract,
 * sets the initial CPU affinity and oom_score_adj, opens every namespace
 * path and then setns each (a joined user namespace between the others:
 * see join_namespaces), unshares a user namespace (the parent writes its
 * id maps) and then the others. Then run.c launches: an exec's process
 * (set up here, then forked into the container's pid namespace), or a
 * container's pid 1, which builds the container and then sets up and
 * execs the process itself. fork(2), never a raw clone(2).
 *
 * Errors: die() sends HUSK_SYNC_ERROR "nsexec: <what> <which>: <why>"
 * (stderr if that fails) and exits 1. Each step is logged by debugf to the
 * log pipe, which the parent re-logs under --debug.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/netlink.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bootstrap.h"
#include "nsexec.h"
#include "launch.h"

#define die(fmt, ...) husk_fail("nsexec: " fmt, ##__VA_ARGS__)
#define debugf(fmt, ...) husk_logf("debug", "nsexec: " fmt, ##__VA_ARGS__)

static char *read_bootstrap(size_t *len)
{
	struct nlmsghdr hdr;
	char *buf;

	husk_read(&hdr, sizeof(hdr), "bootstrap message header");
	if (hdr.nlmsg_len < sizeof(hdr) || hdr.nlmsg_len > HUSK_BOOTSTRAP_MAX)
		die("bootstrap message: length %u out of range [%zu, %d]", hdr.nlmsg_len,
		    sizeof(hdr), HUSK_BOOTSTRAP_MAX);
	buf = malloc(hdr.nlmsg_len);
	if (!buf)
		die("bootstrap message: allocate %u bytes: %s", hdr.nlmsg_len, strerror(errno));
	memcpy(buf, &hdr, sizeof(hdr));
	husk_read(buf + sizeof(hdr), hdr.nlmsg_len - sizeof(hdr), "bootstrap message");
	*len = hdr.nlmsg_len;
	return buf;
}

/* ---- the steps ------------------------------------------------------- */

static void write_file(const char *path, const char *data, const char *what)
{
	size_t n = strlen(data);
	ssize_t w;
	int fd;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	w = write(fd, data, n);
	if (w < 0 || (size_t)w != n)
		die("write %s \"%s\" to %s: %s", what, data, path, w < 0 ? strerror(errno) : "short write");
	close(fd);
}

/*
 * Enters the container's v1 cgroups: "0" written to a hierarchy's tasks
 * file moves the writing thread, which, this process being single-
 * threaded, is all of it; and unlike a move by pid it needs no RCU grace
 * period (libcontainer/cgroup: Entry). First thing, so all that follows
 * and all we fork is inside.
 */
static void join_cgroups(const struct husk_bootstrap *b)
{
	char link[64], path[PATH_MAX];
	ssize_t n;
	size_t i;

	for (i = 0; i < b->n_cgroup_tasks; i++) {
		int fd = b->cgroup_tasks[i], saved;

		if (write(fd, "0", 1) == 1) {
			close(fd);
			continue;
		}
		saved = errno;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, path, sizeof(path) - 1);
		path[n < 0 ? 0 : n] = '\0';
		die("join cgroup: write \"0\" to %s (fd %d): %s", n < 0 ? "?" : path, fd, strerror(saved));
	}
	if (b->n_cgroup_tasks)
		debugf("joined %zu cgroup v1 hierarchies", b->n_cgroup_tasks);
}

/*
 * In a user namespace we just entered, our host ids are unmapped until we
 * take ids of the namespace: become its root. EINVAL: 0 is not mapped;
 * EPERM on setgroups: /proc/PID/setgroups is "deny".
 */
static void become_root(const char *where)
{
	if (setresgid(0, 0, 0) < 0 && errno != EINVAL)
		die("setresgid 0 in %s: %s", where, strerror(errno));
	if (setgroups(0, NULL) < 0 && errno != EPERM)
		die("setgroups none in %s: %s", where, strerror(errno));
	if (setresuid(0, 0, 0) < 0 && errno != EINVAL)
		die("setresuid 0 in %s: %s", where, strerror(errno));
}

/*
 * Joins every namespace path in up to three passes: all but user, where an
 * EPERM is left for later when a user namespace is joined too (the target
 * may belong to it: runc's order); then the user namespace; then the rest.
 */
static void join_namespaces(const struct husk_bootstrap *b)
{
	uint32_t pass[3] = {~(uint32_t)CLONE_NEWUSER, CLONE_NEWUSER, 0};
	int fds[HUSK_MAX_NS], user = 0, p;
	size_t i;

	for (i = 0; i < b->n_ns; i++) {
		fds[i] = open(b->ns[i].path, O_RDONLY | O_CLOEXEC);
		if (fds[i] < 0)
			die("open %s:%s: %s", b->ns[i].name, b->ns[i].path, strerror(errno));
		user |= b->ns[i].flag == CLONE_NEWUSER;
	}
	for (p = 0; p < 3; p++)
		for (i = 0; i < b->n_ns; i++) {
			if (fds[i] < 0 || !(b->ns[i].flag & pass[p]))
				continue;
			if (setns(fds[i], b->ns[i].flag) < 0) {
				if (p > 0 || !user || errno != EPERM)
					die("setns %s:%s: %s", b->ns[i].name, b->ns[i].path, strerror(errno));
				pass[2] |= b->ns[i].flag;
				continue;
			}
			debugf("joined %s namespace %s", b->ns[i].name, b->ns[i].path);
			close(fds[i]);
			fds[i] = -1;
			if (b->ns[i].flag == CLONE_NEWUSER)
				become_root("the joined user namespace");
		}
}

/* New user namespace: the parent writes our id maps, then we become root. */
static void unshare_user(void)
{
	uint32_t pid = getpid(), ack[2];

	if (unshare(CLONE_NEWUSER) < 0)
		die("unshare user: %s", strerror(errno));
	if (husk_send_frame(HUSK_SYNC_USERMAP_PLS, &pid, sizeof(pid)) < 0)
		die("send USERMAP_PLS: %s", strerror(errno));
	husk_read(ack, sizeof(ack), "USERMAP_ACK");
	if (ack[0] != HUSK_SYNC_USERMAP_ACK || ack[1] != 0)
		die("waiting for USERMAP_ACK: got sync frame type %u with %u bytes", ack[0], ack[1]);
	become_root("the new user namespace");
	debugf("made user namespace, id maps written by the parent");
}

/* "mnt,uts,pid" for the namespaces in flags. */
static const char *ns_names(uint32_t flags, char *buf, size_t len)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < husk_n_ns_types; i++)
		if ((flags & husk_ns_types[i].flag) && used < len)
			used += snprintf(buf + used, len - used, "%s%s", used ? "," : "",
					 husk_ns_types[i].name);
	return buf;
}

/*
 * timens_offsets is opened before any namespace changes: the kernel checks
 * CAP_SYS_TIME with the opener's credentials, which we lose in a user
 * namespace (and then the file, owned by host root, cannot even be opened).
 */
static void unshare_others(const struct husk_bootstrap *b, int timens_fd)
{
	uint32_t flags = b->clone_flags & ~CLONE_NEWUSER;
	size_t n = b->timens_offsets ? strlen(b->timens_offsets) : 0;
	char names[64];

	if (flags && unshare(flags) < 0)
		die("unshare %s: %s", ns_names(flags, names, sizeof(names)), strerror(errno));
	if (flags)
		debugf("made %s namespaces", ns_names(flags, names, sizeof(names)));
	if (timens_fd < 0)
		return;
	if (write(timens_fd, b->timens_offsets, n) != (ssize_t)n)
		die("write TIMENS_OFFSETS \"%s\" to /proc/self/timens_offsets: %s", b->timens_offsets, strerror(errno));
	close(timens_fd);
	debugf("time offsets set: %s", b->timens_offsets);
}

/* An exec into a running container (bootstrap.h: HUSK_ENV_INITTYPE). */
static int is_exec(void)
{
	const char *t = getenv(HUSK_ENV_INITTYPE);

	return t && strcmp(t, HUSK_INITTYPE_EXEC) == 0;
}

/*
 * Forgets the CPU affinity inherited from husk's caller (`taskset -c 0
 * husk run`): every CPU, which the kernel narrows to the cgroup's cpuset;
 * then process.execCPUAffinity.initial, if any. After the cgroups are
 * joined (joining a cpuset resets it), before any namespace.
 */
static void set_initial_affinity(const struct husk_bootstrap *b)
{
	uint64_t all[16];
	char err[512];

	memset(all, 0xff, sizeof(all));
	if (husk_set_affinity("reset the CPU affinity inherited from husk's caller", all, 16, err, sizeof(err)) < 0)
		husk_fail("%s", err);
	if (b->affinity && husk_set_affinity("process.execCPUAffinity.initial", b->affinity,
					     b->affinity_words, err, sizeof(err)) < 0)
		husk_fail("%s", err);
	/* runc's "affinity: 0xMASK" at nsexec's start: the initial CPUs. */
	husk_log_affinity("nsexec: ", b->affinity ? "process.execCPUAffinity.initial, after a reset of the CPU "
						    "affinity inherited from husk's caller"
						  : "reset the CPU affinity inherited from husk's caller to every CPU of "
						    "the container's cpuset");
}

static void setup_namespaces(const struct husk_bootstrap *b, int timens_fd)
{
	join_namespaces(b);
	if (b->clone_flags & CLONE_NEWUSER)
		unshare_user();
	unshare_others(b, timens_fd);
}

void husk_nsexec(void)
{
	const char *env = getenv(HUSK_ENV_INITPIPE);
	struct husk_bootstrap b;
	struct husk_plan plan;
	struct husk_launch l;
	char err[512], *msg, *end;
	int timens_fd = -1, exec = is_exec();
	size_t len;
	uint32_t plan_len;
	long fd;
	pid_t pid;

	if (!env)
		return;
	errno = 0;
	fd = strtol(env, &end, 10);
	if (*env == '\0' || *end != '\0' || errno || fd < 0 || fd > INT_MAX)
		die("%s=\"%s\": not an fd number", HUSK_ENV_INITPIPE, env);
	husk_initpipe = fd;
	husk_mark(NULL);
	/* Our image is mapped: the parent may now seal the binary's view
	 * against exec (sealed sooner, the kernel's mapping of our segments
	 * would fail, and kill us, after execve's point of no return). */
	if (husk_send_frame(HUSK_SYNC_HELLO, NULL, 0) < 0)
		die("send HELLO: %s", strerror(errno));
	debugf("=> nsexec container setup: %s", exec ? "an exec" : "a container's init");

	msg = read_bootstrap(&len);
	if (husk_parse_bootstrap(msg, len, &b, err, sizeof(err)) < 0)
		die("bootstrap message: %s", err);
	free(msg);
	/* The process comes right after the bootstrap message. */
	msg = husk_read_frame(HUSK_SYNC_PLAN, HUSK_PLAN_MAX, &plan_len);
	if (husk_parse_plan(msg, plan_len, &plan, err, sizeof(err)) < 0)
		die("PLAN: %s", err);
	free(msg);
	husk_launch_init(&l, &plan, exec);
	join_cgroups(&b);
	/* An exec never shows in the container with more than the process
	 * will have: non-dumpable, and invisible until it forks. */
	if (exec && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		die("prctl PR_SET_DUMPABLE 0: %s", strerror(errno));
	husk_close_stray_fds(); /* /proc is still the runtime's */
	set_initial_affinity(&b);
	if (b.oom_score_adj)
		write_file("/proc/self/oom_score_adj", b.oom_score_adj, "OOM_SCORE_ADJ");
	if (exec && husk_launch_open(&l) < 0)
		husk_fail("%s", l.err);
	if ((b.clone_flags & CLONE_NEWTIME) && b.timens_offsets) {
		timens_fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
		if (timens_fd < 0)
			die("open /proc/self/timens_offsets: %s", strerror(errno));
	}
	setup_namespaces(&b, timens_fd);
	husk_bootstrap_free(&b);
	debugf("<= nsexec container setup: %s", exec ? "the launcher sets the process up here, then forks it"
						      : "forking the container's pid 1");
	if (exec)
		husk_run_exec(&l);

	/*
	 * A container's init. Non-dumpable from here (after the parent wrote
	 * a new user namespace's id maps to /proc/<pid>/, which it could not
	 * do to a non-dumpable process as an unprivileged user): the
	 * container's pid 1 is an exec'd image of the runtime's
	 * user namespace, so a process in the container cannot ptrace them
	 * or open its /proc files, unless it has CAP_SYS_PTRACE there.
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		die("prctl PR_SET_DUMPABLE 0: %s", strerror(errno));
	pid = husk_fork();
	if (pid > 0) {
		uint32_t p = pid;

		debugf("forked init, pid %d (in the parent's pid namespace)", pid);
		if (husk_send_frame(HUSK_SYNC_PID, &p, sizeof(p)) < 0) {
			int saved = errno;

			kill(pid, SIGKILL);
			die("send PID %d: %s", pid, strerror(saved));
		}
		_exit(0);
	}
	husk_run_init(&l);
}
