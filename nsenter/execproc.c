/*
 * execproc: the process of a `husk exec`, set up and exec'd in C by
 * nsexec's forked child, already in the container's namespaces and
 * cgroups, without the Go runtime (no threads to fit under pids.max, no
 * second runtime boot). The parent planned and checked every value
 * (libcontainer/execplan.go) and keeps the Go init for anything this file
 * does not do (a terminal, a seccomp listener, LSM labels, scheduler, ...).
 *
 * The order and the error texts are the Go init's
 * (libcontainer/initproc/process.go): CPU affinity reset, rlimits, umask,
 * the seccomp filter before the user switch (without no_new_privs, as it
 * then needs CAP_SYS_ADMIN), cwd as root, bounding set, groups and ids with
 * capabilities kept, capability sets, ambient, no_new_privs, cwd again as
 * the user, HOME, the PATH lookup, READY, the late filter, execve. Errors
 * before READY go to the parent as an ERROR frame (husk_fail); after it,
 * to stderr. The process stays non-dumpable (nsexec) until execve.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "execproc.h"
#include "nsexec.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* strerror as Go words it: "no such file or directory". */
static const char *errtext(int err)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "%s", strerror(err));
	if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
		buf[0] += 'a' - 'A';
	return buf;
}

/* ---- trace marks (libcontainer/trace: one JSON record per phase) ------- */

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* mark records that phase ended now, when the parent passed a trace file. */
static void mark(const char *phase)
{
	static long long last;
	const char *env = getenv("_HUSK_TRACE_FD");
	long long t = now_ns();
	char rec[256];
	int n;

	if (!last)
		last = t;
	if (phase && env && *env) {
		n = snprintf(rec, sizeof(rec), "{\"t\":%lld,\"pid\":%d,\"proc\":\"init\",\"phase\":\"%s\",\"ms\":%.6f}\n",
			     t, getpid(), phase, (t - last) / 1e6);
		if (write(atoi(env), rec, n) < 0)
			last = t; /* best effort */
	}
	last = t;
}

/* ---- fds ------------------------------------------------------------- */

static int env_fd(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : -1;
}

static int is_own(int fd, const int *own, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (own[i] == fd)
			return 1;
	return 0;
}

void husk_close_stray_fds(int initpipe)
{
	int own[] = {initpipe, env_fd(HUSK_ENV_LOGPIPE), env_fd("_HUSK_TRACE_FD")};
	size_t n = sizeof(own) / sizeof(own[0]);
	struct dirent *e;
	DIR *d;

	for (size_t i = 0; i < n; i++)
		if (own[i] > 2 && fcntl(own[i], F_SETFD, FD_CLOEXEC) < 0)
			husk_fail("nsexec: mark fd %d close-on-exec: %s", own[i], errtext(errno));
	d = opendir("/proc/self/fd");
	if (!d)
		husk_fail("nsexec: list my fds: open /proc/self/fd: %s", errtext(errno));
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd < initpipe || fd == dirfd(d))
			continue;
		if (!is_own(fd, own, n))
			close(fd);
	}
	closedir(d);
}

/* ---- limits, filter, credentials -------------------------------------- */

static void reset_affinity(void)
{
	cpu_set_t all;

	memset(&all, 0xff, sizeof(all));
	if (sched_setaffinity(0, sizeof(all), &all) < 0)
		husk_fail("reset the CPU affinity inherited from husk's caller: sched_setaffinity: %s",
			  errtext(errno));
	if (getenv(HUSK_ENV_LOGPIPE) && sched_getaffinity(0, sizeof(all), &all) == 0)
		husk_logf("debug", "CPU affinity set to the cgroup's CPUs: %d CPUs", CPU_COUNT(&all));
}

static void set_rlimits(const struct husk_exec_plan *p)
{
	for (size_t i = 0; i < p->n_rlimits; i++) {
		const struct husk_plan_rlimit *r = &p->rlimits[i];
		struct rlimit lim = {.rlim_cur = r->soft, .rlim_max = r->hard};

		if (setrlimit(r->type, &lim) < 0)
			husk_fail("process.rlimits[%u]: setrlimit(%u, soft %llu, hard %llu): %s", r->index,
				  r->type, (unsigned long long)r->soft, (unsigned long long)r->hard,
				  errtext(errno));
	}
	umask(p->umask);
}

/* Installs the filter; returns -1 with errno set. */
static int load_seccomp(const struct husk_exec_plan *p)
{
	struct sock_fprog prog = {.len = p->n_filter, .filter = p->filter};

	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, p->seccomp_flags, &prog) < 0 ? -1 : 0;
}

#define SECCOMP_ERR "linux.seccomp: seccomp(SET_MODE_FILTER, flags 0x%x): %s"

static void drop_bounding(const struct husk_plan_caps *c)
{
	for (uint32_t v = 0; v <= c->last_cap; v++) {
		if (c->bounding & (1ULL << v))
			continue;
		int in = prctl(PR_CAPBSET_READ, v, 0, 0, 0);

		if (in < 0)
			husk_fail("process.capabilities.bounding: read capability %u from the bounding set: %s",
				  v, errtext(errno));
		if (in && prctl(PR_CAPBSET_DROP, v, 0, 0, 0) < 0)
			husk_fail("process.capabilities.bounding: drop capability %u from the bounding set: %s",
				  v, errtext(errno));
	}
}

/* setgroups; an empty list where /proc/self/setgroups is "deny" is what
 * the process already has (a user namespace mapped without newgidmap). */
static int set_groups(const struct husk_exec_plan *p)
{
	char buf[8] = "";
	int fd, saved;

	if (setgroups(p->n_groups, p->groups) == 0)
		return 0;
	saved = errno;
	if (p->n_groups == 0 && saved == EPERM && (fd = open("/proc/self/setgroups", O_RDONLY | O_CLOEXEC)) >= 0) {
		ssize_t r = read(fd, buf, sizeof(buf) - 1);

		close(fd);
		if (r >= 4 && strncmp(buf, "deny", 4) == 0)
			return 0;
	}
	errno = saved;
	return -1;
}

static void fail_groups(const struct husk_exec_plan *p, int err)
{
	char list[512] = "[";
	size_t n = 1;

	for (size_t i = 0; i < p->n_groups && n < sizeof(list) - 16; i++)
		n += snprintf(list + n, sizeof(list) - n, "%s%u", i ? " " : "", (unsigned)p->groups[i]);
	snprintf(list + n, sizeof(list) - n, "]");
	husk_fail("process.user.additionalGids: setgroups %s: %s", list, errtext(err));
}

static void set_capabilities(const struct husk_plan_caps *c)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2];

	for (int i = 0; i < 2; i++) {
		data[i].effective = c->effective >> (32 * i);
		data[i].permitted = c->permitted >> (32 * i);
		data[i].inheritable = c->inheritable >> (32 * i);
	}
	if (syscall(SYS_capset, &hdr, data) < 0)
		husk_fail("process.capabilities: capset: %s", errtext(errno));
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && (errno != EINVAL || c->ambient))
		husk_fail("process.capabilities: clear the ambient set: %s", errtext(errno));
	for (uint32_t v = 0; v <= c->last_cap; v++)
		if ((c->ambient & (1ULL << v)) && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, v, 0, 0) < 0)
			husk_logf("warning", "can't raise ambient capability %u (it must also be permitted and inheritable): %s",
				  v, errtext(errno));
}

static void set_credentials(const struct husk_exec_plan *p)
{
	drop_bounding(&p->caps);
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		husk_fail("prctl(PR_SET_KEEPCAPS): %s", errtext(errno));
	if (set_groups(p) < 0)
		fail_groups(p, errno);
	if (setresgid(p->gid, p->gid, p->gid) < 0)
		husk_fail("process.user.gid: setresgid %u: %s", p->gid, errtext(errno));
	if (setresuid(p->uid, p->uid, p->uid) < 0)
		husk_fail("process.user.uid: setresuid %u: %s", p->uid, errtext(errno));
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		husk_fail("prctl(PR_SET_KEEPCAPS, 0): %s", errtext(errno));
	set_capabilities(&p->caps);
	if (p->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		husk_fail("process.noNewPrivileges: prctl: %s", errtext(errno));
}

/* ---- cwd, environment, PATH -------------------------------------------- */

/* The home of uid in the container's /etc/passwd, "/" without one. */
static void fill_home(struct husk_exec_plan *p)
{
	static char entry[4096];
	char line[4096], uid[16];
	const char *home = "/";
	FILE *f = fopen("/etc/passwd", "re");

	snprintf(uid, sizeof(uid), "%u", p->uid);
	while (f && fgets(line, sizeof(line), f)) {
		char *field[7] = {0}, *rest = line;
		int n = 0;

		line[strcspn(line, "\n")] = '\0';
		while (n < 7 && rest)
			field[n++] = strsep(&rest, ":");
		if (n >= 6 && strcmp(field[2], uid) == 0 && field[5][0]) {
			home = field[5];
			break;
		}
	}
	snprintf(entry, sizeof(entry), "HOME=%s", home);
	if (f)
		fclose(f);
	for (size_t i = 0; i < p->envc; i++)
		if (strcmp(p->envp[i], "HOME=") == 0) {
			p->envp[i] = entry;
			return;
		}
}

/* 0 when path is a file the process may execute, else -1 and why. */
static int executable(const char *path, char *why, size_t n)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		snprintf(why, n, "stat %s: %s", path, errtext(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(why, n, "is a directory");
		return -1;
	}
	if (syscall(SYS_faccessat2, AT_FDCWD, path, X_OK, AT_EACCESS) < 0 && errno != ENOSYS &&
	    errno != EPERM) {
		snprintf(why, n, "%s", errtext(errno));
		return -1;
	}
	return 0;
}

/* The binary to exec, as the Go init's lookPath finds it. */
static const char *look_path(const struct husk_exec_plan *p)
{
	static char found[4096];
	const char *name = p->argv[0], *path = NULL;
	char why[512], dirs[4096], *rest = dirs, *dir;

	if (strchr(name, '/')) {
		if (executable(name, why, sizeof(why)) < 0)
			husk_fail("exec: \"%s\": %s", name, why);
		return name;
	}
	for (size_t i = 0; i < p->envc; i++)
		if (strncmp(p->envp[i], "PATH=", 5) == 0)
			path = p->envp[i] + 5;
	snprintf(dirs, sizeof(dirs), "%s", path && *path ? path : DEFAULT_PATH);
	while ((dir = strsep(&rest, ":"))) {
		size_t dl = strlen(dir);

		if (dl == 0)
			dir = ".", dl = 1;
		snprintf(found, sizeof(found), "%s%s%s", dir, dir[dl - 1] == '/' ? "" : "/", name);
		if (executable(found, why, sizeof(why)) == 0)
			return found;
	}
	husk_fail("exec: \"%s\": executable file not found in $PATH", name);
}

/* 1 when cwd was entered as root; 0 when only the user may (EACCES, EPERM). */
static int chdir_before_user(const char *cwd)
{
	if (chdir(cwd) == 0)
		return 1;
	if (errno == EACCES || errno == EPERM)
		return 0;
	husk_fail("process.cwd: chdir \"%s\": %s", cwd, errtext(errno));
}

void husk_exec_process(struct husk_exec_plan *p, int initpipe)
{
	int late = p->filter && p->no_new_privs, cwd_done;
	const char *path;

	mark(NULL);
	reset_affinity();
	set_rlimits(p);
	if (p->filter && !late && load_seccomp(p) < 0)
		husk_fail(SECCOMP_ERR, p->seccomp_flags, errtext(errno));
	if (p->filter && !late)
		husk_logf("debug", "seccomp filter loaded: %zu instructions, flags 0x%x", p->n_filter, p->seccomp_flags);
	cwd_done = chdir_before_user(p->cwd);
	set_credentials(p);
	if (!cwd_done && chdir(p->cwd) < 0)
		husk_fail("process.cwd: chdir \"%s\": %s", p->cwd, errtext(errno));
	if (p->fill_home)
		fill_home(p);
	path = look_path(p);
	/* The last log line: after READY the parent may be gone (exec -d),
	 * and a write to its closed log pipe would kill us with SIGPIPE. */
	if (late) /* it cannot log once it is in: no syscall but execve */
		husk_logf("debug", "seccomp filter loaded last, right before execve: %zu instructions, flags 0x%x",
			  p->n_filter, p->seccomp_flags);
	husk_logf("debug", "execve \"%s\" (set up in C, without Go)", path);
	mark("ready");
	if (husk_send_frame(HUSK_SYNC_READY, NULL, 0) < 0)
		husk_fail("send READY: %s", errtext(errno));
	close(initpipe);
	mark("execve");
	if (late && load_seccomp(p) < 0) {
		dprintf(STDERR_FILENO, "husk init: " SECCOMP_ERR "\n", p->seccomp_flags, errtext(errno));
		_exit(1);
	}
	execve(path, p->argv, p->envp);
	dprintf(STDERR_FILENO, "husk init: exec \"%s\": %s\n", path, errtext(errno));
	_exit(127);
}
