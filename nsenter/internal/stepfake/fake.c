/*
 * The recording fake (fake.h): a kernel (struct husk_kernel) that does
 * nothing but record each call with its arguments and answer as a
 * container's kernel would, so the launcher's steps run in `go test`
 * without root and without changing the test process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/sysmacros.h>

#include "../../kernel.h"
#include "../../launch.h"
#include "../../nsexec.h"
#include "fake.h"

#define PASSWD_FD 110

static char calls[STEPFAKE_MAX_CALLS][STEPFAKE_LINE];
static size_t n_calls, n_made;
static const struct stepfake_conf *conf;
static size_t passwd_off;
static int execve_reached;

static void add(const char *fmt, va_list ap)
{
	if (n_calls < STEPFAKE_MAX_CALLS)
		vsnprintf(calls[n_calls++], STEPFAKE_LINE, fmt, ap);
}

/* Records a call; 1 when it is the one to fail (errno set). */
static int rec(const char *fmt, ...) __attribute__((format(printf, 1, 2), alias("stepfake_rec")));

int stepfake_rec(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add(fmt, ap);
	va_end(ap);
	if ((int)n_made++ == conf->fail_at) {
		errno = conf->fail_errno;
		return 1;
	}
	return 0;
}

/* Records what is not a call the fake may fail: a step's mark, the fork. */
static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add(fmt, ap);
	va_end(ap);
}

static void mark(size_t i, const char *name)
{
	note("#step %zu %s", i, name);
}

static int f_open(const char *path, int flags)
{
	if (rec("open(%s)", path))
		return -1;
	if (strcmp(path, "/etc/passwd") == 0) {
		if (!conf->passwd) {
			errno = ENOENT;
			return -1;
		}
		passwd_off = 0;
		return PASSWD_FD;
	}
	return 100;
}

static int f_access(const char *path, int mode)
{
	return rec("access(%s)", path) ? -1 : 0;
}

/* Whether path is one of conf->dirs. */
static int is_dir(const char *path)
{
	size_t n = strlen(path);

	for (const char *d = conf->dirs; d && *d;) {
		const char *end = strchrnul(d, ':');

		if ((size_t)(end - d) == n && strncmp(d, path, n) == 0)
			return 1;
		d = *end ? end + 1 : end;
	}
	return 0;
}

static int f_openat2(int dirfd, const char *path, struct open_how *how, size_t size)
{
	if (rec("openat2(%d, %s, resolve 0x%llx)", dirfd, path, (unsigned long long)how->resolve))
		return -1;
	return is_dir(path) ? STEPFAKE_DIR_FD : STEPFAKE_TARGET_FD;
}

static int f_close(int fd)
{
	return rec("close(%d)", fd) ? -1 : 0;
}

static ssize_t f_read(int fd, void *buf, size_t n)
{
	size_t left;

	if (rec("read(%d)", fd))
		return -1;
	if (fd != PASSWD_FD || !conf->passwd)
		return 0;
	left = strlen(conf->passwd) - passwd_off;
	if (n > left)
		n = left;
	memcpy(buf, conf->passwd + passwd_off, n);
	passwd_off += n;
	return n;
}

static ssize_t f_write(int fd, const void *buf, size_t n)
{
	return rec("write(%d, %.*s)", fd, (int)n, (const char *)buf) ? -1 : (ssize_t)n;
}

static int f_dup2(int from, int to)
{
	return rec("dup2(%d, %d)", from, to) ? -1 : to;
}

static int f_stat(const char *path, struct stat *st)
{
	if (rec("stat(%s)", path))
		return -1;
	memset(st, 0, sizeof(*st));
	if (strcmp(path, "/dev/null") == 0) {
		st->st_mode = S_IFCHR | 0666;
		st->st_rdev = makedev(1, 3);
		return 0;
	}
	if (conf->exe && strcmp(path, conf->exe) == 0) {
		st->st_mode = S_IFREG | 0755;
		return 0;
	}
	errno = ENOENT;
	return -1;
}

static int f_fstat(int fd, struct stat *st)
{
	if (rec("fstat(%d)", fd))
		return -1;
	memset(st, 0, sizeof(*st));
	if (fd >= 0 && fd <= 2) {
		st->st_mode = S_IFIFO | 0600;
		st->st_uid = conf->stdio_uid;
	} else if (fd == STEPFAKE_PTY_SLAVE_FD) {
		st->st_mode = S_IFCHR | 0620;
		st->st_rdev = makedev(136, 3);
	} else if (fd == STEPFAKE_DIR_FD) {
		st->st_mode = S_IFDIR | 0755;
	} else if (fd == STEPFAKE_DEV_NULL_FD) {
		st->st_mode = S_IFCHR | 0666;
		st->st_rdev = makedev(1, 3);
	} else {
		st->st_mode = S_IFREG | 0644;
		st->st_size = fd == PASSWD_FD && conf->passwd ? strlen(conf->passwd) : 0;
	}
	return 0;
}

static int f_fstatfs(int fd, struct statfs *fs)
{
	if (rec("fstatfs(%d)", fd))
		return -1;
	memset(fs, 0, sizeof(*fs));
	fs->f_type = fd == STEPFAKE_PTY_SLAVE_FD ? DEVPTS_SUPER_MAGIC : PROC_SUPER_MAGIC;
	if (fd == STEPFAKE_TARGET_FD && conf->not_procfs)
		fs->f_type = TMPFS_MAGIC;
	return 0;
}

static int f_fchown(int fd, uid_t uid, gid_t gid)
{
	return rec("fchown(%d, %u)", fd, uid) ? -1 : 0;
}

static int f_faccessat2(int dirfd, const char *path, int mode, int flags)
{
	return rec("faccessat2(%s)", path) ? -1 : 0;
}

static int f_ioctl(int fd, unsigned long req, void *arg)
{
	const char *name = req == TIOCSPTLCK ? "TIOCSPTLCK" : req == TIOCGPTN ? "TIOCGPTN" :
			   req == TIOCGPTPEER ? "TIOCGPTPEER" : req == TIOCSWINSZ ? "TIOCSWINSZ" :
			   req == TIOCSCTTY ? "TIOCSCTTY" : "?";

	if (req == TIOCSWINSZ) {
		const struct winsize *ws = arg;

		if (rec("ioctl(%d, %s, %ux%u)", fd, name, ws->ws_row, ws->ws_col))
			return -1;
		return 0;
	}
	if (rec("ioctl(%d, %s)", fd, name))
		return -1;
	if (req == TIOCGPTN)
		*(unsigned int *)arg = 3;
	return req == TIOCGPTPEER ? STEPFAKE_PTY_SLAVE_FD : 0;
}

static int f_tcgetattr(int fd, struct termios *t)
{
	if (rec("tcgetattr(%d)", fd))
		return -1;
	memset(t, 0, sizeof(*t));
	t->c_oflag = OPOST | ONLCR;
	return 0;
}

static int f_tcsetattr(int fd, int act, const struct termios *t)
{
	return rec("tcsetattr(%d, onlcr %d)", fd, !!(t->c_oflag & ONLCR)) ? -1 : 0;
}

static ssize_t f_sendmsg(int fd, const struct msghdr *m, int flags)
{
	struct cmsghdr *c = m->msg_control ? CMSG_FIRSTHDR((struct msghdr *)m) : NULL;
	int passed = -1;

	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(&passed, CMSG_DATA(c), sizeof(int));
	if (rec("sendmsg(%d, fd %d, %.*s)", fd, passed, (int)m->msg_iov->iov_len, (const char *)m->msg_iov->iov_base))
		return -1;
	return m->msg_iov->iov_len;
}

static int f_chdir(const char *path)
{
	return rec("chdir(%s)", path) ? -1 : 0;
}

static int f_fchdir(int fd)
{
	return rec("fchdir(%d)", fd) ? -1 : 0;
}

static long f_getcwd(char *buf, size_t n)
{
	if (rec("getcwd()"))
		return -1;
	snprintf(buf, n, "%s", conf->getcwd);
	return strlen(buf) + 1;
}

static pid_t f_setsid(void)
{
	return rec("setsid()") ? -1 : 1;
}

static int f_setrlimit(int resource, const struct rlimit *r)
{
	return rec("setrlimit(%d, %llu, %llu)", resource, (unsigned long long)r->rlim_cur,
		   (unsigned long long)r->rlim_max) ? -1 : 0;
}

static mode_t f_umask(mode_t mask)
{
	rec("umask(%04o)", mask); /* cannot fail */
	return 022;
}

static long f_keyctl(int op, unsigned long arg2)
{
	return rec("keyctl(%d, %lu)", op, arg2) ? -1 : 0;
}

static long f_set_mempolicy(int mode, const void *nodes, unsigned long maxnode)
{
	return rec("set_mempolicy(%d, %lu)", mode, maxnode) ? -1 : 0;
}

static long f_personality(unsigned long persona)
{
	return rec("personality(0x%lx)", persona) ? -1 : 0;
}

static long f_ioprio_set(int which, int who, int ioprio)
{
	return rec("ioprio_set(%d, %d, %d)", which, who, ioprio) ? -1 : 0;
}

static int f_sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set)
{
	unsigned long long first = 0;

	for (int i = 0; i < 64; i++)
		if (CPU_ISSET_S(i, size, set))
			first |= 1ULL << i;
	return rec("sched_setaffinity(0x%llx)", first) ? -1 : 0;
}

static long f_sched_setattr(pid_t pid, const void *attr, unsigned int flags)
{
	const struct {
		uint32_t size, policy;
		uint64_t flags;
		int32_t nice;
		uint32_t priority;
		uint64_t runtime, deadline, period;
	} *a = attr;

	return rec("sched_setattr(policy %u, priority %u, nice %d, flags 0x%llx, runtime %llu)", a->policy,
		   a->priority, a->nice, (unsigned long long)a->flags, (unsigned long long)a->runtime) ? -1 : 0;
}

static long f_seccomp(unsigned int op, unsigned int flags, const void *args)
{
	const struct sock_fprog *prog = args;

	if (rec("seccomp(%u, 0x%x, %u instructions)", op, flags, prog->len))
		return -1;
	return flags & SECCOMP_FILTER_FLAG_NEW_LISTENER ? STEPFAKE_NOTIFY_FD : 0;
}

static const char *prctl_name(int op, unsigned long a2)
{
	switch (op) {
	case PR_CAPBSET_READ: return "PR_CAPBSET_READ";
	case PR_CAPBSET_DROP: return "PR_CAPBSET_DROP";
	case PR_SET_KEEPCAPS: return "PR_SET_KEEPCAPS";
	case PR_SET_NO_NEW_PRIVS: return "PR_SET_NO_NEW_PRIVS";
	case PR_CAP_AMBIENT: return a2 == PR_CAP_AMBIENT_RAISE ? "PR_CAP_AMBIENT_RAISE" : "PR_CAP_AMBIENT_CLEAR_ALL";
	}
	return "?";
}

static int f_prctl(int op, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5)
{
	unsigned long arg = op == PR_CAP_AMBIENT ? a3 : a2;

	if (rec("prctl(%s, %lu)", prctl_name(op, a2), arg))
		return -1;
	return op == PR_CAPBSET_READ ? 1 : 0; /* every capability is in the bounding set */
}

static int f_setgroups(size_t n, const gid_t *groups)
{
	char list[256] = "";
	size_t used = 0;

	for (size_t i = 0; i < n && used < sizeof(list) - 16; i++)
		used += snprintf(list + used, sizeof(list) - used, "%s%u", i ? " " : "", groups[i]);
	return rec("setgroups([%s])", list) ? -1 : 0;
}

static int f_setresgid(gid_t r, gid_t e, gid_t s)
{
	return rec("setresgid(%u, %u, %u)", r, e, s) ? -1 : 0;
}

static int f_setresuid(uid_t r, uid_t e, uid_t s)
{
	return rec("setresuid(%u, %u, %u)", r, e, s) ? -1 : 0;
}

static long f_capset(void *hdr, void *data)
{
	const struct {
		uint32_t effective, permitted, inheritable;
	} *d = data;

	return rec("capset(effective 0x%llx, permitted 0x%llx, inheritable 0x%llx)",
		   (unsigned long long)d[0].effective | (unsigned long long)d[1].effective << 32,
		   (unsigned long long)d[0].permitted | (unsigned long long)d[1].permitted << 32,
		   (unsigned long long)d[0].inheritable | (unsigned long long)d[1].inheritable << 32) ? -1 : 0;
}

static int f_execve(const char *path, char *const argv[], char *const envp[])
{
	char args[256] = "";
	size_t used = 0;

	for (size_t i = 0; argv[i] && used < sizeof(args) - 16; i++)
		used += snprintf(args + used, sizeof(args) - used, "%s%s", i ? " " : "", argv[i]);
	if (rec("execve(%s, [%s])", path, args))
		return -1;
	execve_reached = 1;
	errno = 0;
	return -1;
}

/* The mount calls, recorded (the mounts' own fake, mountfake.c, models
 * them on its file tree for its runs). */
static int f_open_tree(int dirfd, const char *path, unsigned int flags)
{
	if (rec("open_tree(%d%s)", dirfd, flags & AT_RECURSIVE ? ", recursive" : ""))
		return -1;
	return STEPFAKE_CLONE_FD;
}

static int f_move_mount(int from, int to)
{
	return rec("move_mount(%d, %d)", from, to) ? -1 : 0;
}

static int f_mount_setattr(int fd, const char *path, unsigned int flags, struct mount_attr *attr, size_t size)
{
	return rec("mount_setattr(%d, 0x%llx%s)", fd, (unsigned long long)attr->attr_set,
		   flags & AT_RECURSIVE ? ", recursive" : "") ? -1 : 0;
}

static int f_fsopen(const char *fstype)
{
	return rec("fsopen(%s)", fstype) ? -1 : STEPFAKE_FS_FD;
}

static int f_fsconfig(int fd, unsigned int cmd, const char *key, const char *value)
{
	if (key)
		return rec("fsconfig(%d, %s=%s)", fd, key, value) ? -1 : 0;
	return rec("fsconfig(%d, create)", fd) ? -1 : 0;
}

static int f_fsmount(int fd, unsigned int attrs)
{
	return rec("fsmount(%d, 0x%x)", fd, attrs) ? -1 : STEPFAKE_MOUNT_FD;
}

static int f_mount_bind(const char *from, const char *to)
{
	return rec("mount_bind(%s, %s)", from, to) ? -1 : 0;
}

static int f_sethostname(const char *name, size_t n)
{
	return rec("sethostname(%.*s)", (int)n, name) ? -1 : 0;
}

static int f_setdomainname(const char *name, size_t n)
{
	return rec("setdomainname(%.*s)", (int)n, name) ? -1 : 0;
}

static int f_mount(const char *source, const char *target, const char *fstype, unsigned long flags, const char *data)
{
	return rec("mount(%s, %s, %s, 0x%lx, %s)", source, target, fstype, flags, data) ? -1 : 0;
}

static int f_pivot_root(const char *new_root, const char *put_old)
{
	return rec("pivot_root(%s, %s)", new_root, put_old) ? -1 : 0;
}

static int f_umount2(const char *target, int flags)
{
	return rec("umount2(%s, 0x%x)", target, flags) ? -1 : 0;
}

static int f_chroot(const char *path)
{
	return rec("chroot(%s)", path) ? -1 : 0;
}

static const struct husk_kernel fake_kernel = {
	.open = f_open, .access = f_access, .openat2 = f_openat2, .close = f_close, .read = f_read,
	.write = f_write, .dup2 = f_dup2, .stat = f_stat, .fstat = f_fstat, .fstatfs = f_fstatfs,
	.fchown = f_fchown, .faccessat2 = f_faccessat2, .ioctl = f_ioctl, .tcgetattr = f_tcgetattr,
	.tcsetattr = f_tcsetattr, .sendmsg = f_sendmsg, .chdir = f_chdir, .fchdir = f_fchdir,
	.getcwd = f_getcwd, .setsid = f_setsid, .setrlimit = f_setrlimit, .umask = f_umask,
	.keyctl = f_keyctl, .set_mempolicy = f_set_mempolicy, .personality = f_personality,
	.ioprio_set = f_ioprio_set, .sched_setaffinity = f_sched_setaffinity,
	.sched_setattr = f_sched_setattr, .seccomp = f_seccomp, .prctl = f_prctl,
	.setgroups = f_setgroups, .setresgid = f_setresgid, .setresuid = f_setresuid,
	.capset = f_capset, .execve = f_execve, .step = mark,
	.mount = f_mount, .mount_bind = f_mount_bind, .sethostname = f_sethostname, .setdomainname = f_setdomainname,
	/* mountfake.c */
	.openat = stepfake_openat, .mkdirat = stepfake_mkdirat, .mknodat = stepfake_mknodat,
	.readlinkat = stepfake_readlinkat, .fsopen = f_fsopen, .fsconfig = f_fsconfig,
	.fsmount = f_fsmount, .open_tree = f_open_tree, .move_mount = f_move_mount,
	.mount_setattr = f_mount_setattr, .fstatat = stepfake_fstatat, .getdents64 = stepfake_getdents64,
	.symlinkat = stepfake_symlinkat, .fchownat = stepfake_fchownat, .fchmodat = stepfake_fchmodat,
	.fchmod = stepfake_fchmod, .utimensat = stepfake_utimensat, .fsetxattr = stepfake_fsetxattr,
	.unlinkat = stepfake_unlinkat, .pivot_root = f_pivot_root, .umount2 = f_umount2,
	.chroot = f_chroot,
};

const struct husk_kernel *stepfake_kernel(void)
{
	return &fake_kernel;
}

void stepfake_begin(const struct stepfake_conf *c)
{
	conf = c;
	n_calls = n_made = 0;
}

/* An exec's fork step: the fake goes on as the forked process. Recorded,
 * never failed: a fork that fails ends the launch in run.c (husk_fail),
 * not in a step. */
static int fake_fork(struct husk_launch *l)
{
	note("fork()");
	l->forked = 1;
	l->pid = STEPFAKE_FORKED_PID;
	return 0;
}

int stepfake_run(const char *plan, size_t len, int forks, const struct stepfake_conf *c, char *err, size_t errlen)
{
	struct husk_plan p;
	struct husk_launch l;
	char fd[16];
	int rc;

	if (husk_parse_plan(plan, len, &p, err, errlen) < 0)
		return -2;
	conf = c;
	n_calls = n_made = 0;
	execve_reached = 0;
	/* No log pipe: husk_logf writes nothing. */
	unsetenv(HUSK_ENV_LOGPIPE);
	snprintf(fd, sizeof(fd), "%d", STEPFAKE_LISTENER_FD);
	setenv(HUSK_ENV_LISTENERFD, fd, 1);
	husk_k = &fake_kernel;
	husk_launch_init(&l, &p, forks);
	l.fork = fake_fork;
	l.pid = forks ? 0 : STEPFAKE_INIT_PID;
	if (!forks && p.n_masked)
		l.dev_null_fd = STEPFAKE_DEV_NULL_FD; /* the build's clone */
	if (p.has_tty && (p.tty.flags & HUSK_TTY_OPEN))
		l.console_fd = STEPFAKE_CONSOLE_FD;
	rc = husk_launch_open(&l);
	if (rc == 0)
		rc = husk_launch_prepare(&l);
	if (rc == 0) {
		mark(husk_n_steps - 1, husk_steps[husk_n_steps - 1].name);
		husk_launch_exec(&l);
		rc = execve_reached ? 0 : -1;
	}
	husk_k = &husk_real_kernel;
	unsetenv(HUSK_ENV_LISTENERFD);
	snprintf(err, errlen, "%s", rc < 0 ? l.err : "");
	free(l.listener_buf);
	husk_plan_free(&p);
	return rc;
}

/* How many of k's calls are NULL (the step mark left out): a call added
 * to struct husk_kernel must be in the real kernel and in the fake. */
static int missing(const struct husk_kernel *k)
{
	struct husk_kernel c = *k;
	void (*calls[sizeof(c) / sizeof(void (*)(void))])(void);
	int n = 0;

	c.step = NULL;
	memcpy(calls, &c, sizeof(calls));
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		n += calls[i] == NULL;
	return n - 1; /* the step mark */
}

int stepfake_missing(int real)
{
	return missing(real ? &husk_real_kernel : &fake_kernel);
}

size_t stepfake_n_calls(void)
{
	return n_calls;
}

const char *stepfake_call(size_t i)
{
	return calls[i];
}

size_t stepfake_n_steps(void)
{
	return husk_n_steps;
}

const char *stepfake_step_name(size_t i)
{
	return husk_steps[i].name;
}
