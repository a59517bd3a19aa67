/*
 * The launcher (launch.h): sets a planned process up in runc's order and
 * execs it. nsexec.c drives it: for an exec, nsexec's first process runs
 * prepare while it is still invisible to the container (in the runtime's
 * pid namespace), then forks the process, which only execs; for a
 * container's init, the container's pid 1 runs every step and execs once
 * `start` opens exec.fifo. Either way the process that holds the
 * runtime's privileges is single-threaded, and the seccomp filter is in
 * place before anything of the launch is visible in the container.
 *
 * Order: the table husk_steps below (docs/architecture.md, "One
 * launcher", says why each step is where it is). After the filter and
 * its listener the launch makes only the syscalls that doc lists, which
 * a profile must allow; a profile that kills on any of them kills the
 * launcher, single-threaded, at once: the parent names seccomp
 * (libcontainer/launch/spawn.go). Every kernel call of the steps goes
 * through husk_k (kernel.h), the seam their tests (internal/stepfake)
 * replace with a recording fake.
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
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "kernel.h"
#include "launch.h"
#include "nsexec.h"

int husk_launch_errf(struct husk_launch *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->err, sizeof(l->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* strerror as Go words it: "no such file or directory". */
const char *husk_errtext(int err)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "%s", strerror(err));
	if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
		buf[0] += 'a' - 'A';
	return buf;
}

void husk_launch_init(struct husk_launch *l, struct husk_plan *p, int forks)
{
	memset(l, 0, sizeof(*l));
	l->plan = p;
	l->forks = forks;
	l->lsm_fd[0] = l->lsm_fd[1] = l->lsm_fd[2] = l->notify_fd = l->console_fd = -1;
	l->dev_null_fd = -1;
}

/* Opens /proc/self/attr/<name> for writing; it must be on a procfs. */
static int open_attr(struct husk_launch *l, const char *name, const char *field)
{
	char path[64];
	struct statfs fs;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/attr/%s", name);
	fd = husk_k->open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return husk_launch_errf(l, "%s: open %s: %s", field, path, husk_errtext(errno));
	if (husk_k->fstatfs(fd, &fs) < 0 || fs.f_type != PROC_SUPER_MAGIC) {
		husk_k->close(fd);
		return husk_launch_errf(l, "%s: %s is not on a procfs", field, path);
	}
	return fd;
}

int husk_launch_open(struct husk_launch *l)
{
	const struct husk_plan *p = l->plan;

	if (p->apparmor) {
		l->apparmor_attr = "apparmor/exec";
		l->lsm_fd[0] = open_attr(l, l->apparmor_attr, "process.apparmorProfile");
		if (l->lsm_fd[0] < 0) /* kernels before 5.1 have only the shared file */
			l->lsm_fd[0] = open_attr(l, l->apparmor_attr = "exec", "process.apparmorProfile");
		if (l->lsm_fd[0] < 0)
			return -1;
	}
	if (p->selinux && (l->lsm_fd[1] = open_attr(l, "exec", "process.selinuxLabel")) < 0)
		return -1;
	/* The session keyring gets the process label (runc's SetKeyLabel); a
	 * kernel without attr/keycreate has no keyring labels to set. */
	if (p->selinux && p->keyring && husk_k->access("/proc/self/attr/keycreate", F_OK) == 0 &&
	    (l->lsm_fd[2] = open_attr(l, "keycreate", "process.selinuxLabel")) < 0)
		return -1;
	return 0;
}

/* Installs the filter; keeps the listener fd, if it makes one. */
static int load_seccomp(struct husk_launch *l)
{
	const struct husk_plan *p = l->plan;
	struct sock_fprog prog = {.len = p->n_filter, .filter = (struct sock_filter *)p->filter};
	long fd;

	husk_logf("debug", "seccomp filter flags: %u, %zu instructions: loading it%s", p->seccomp_flags,
		  p->n_filter, p->no_new_privs ? " last, after the credentials" : "");
	fd = husk_k->seccomp(SECCOMP_SET_MODE_FILTER, p->seccomp_flags, &prog);
	if (fd < 0)
		return husk_launch_errf(l, "linux.seccomp: seccomp(SET_MODE_FILTER, flags 0x%x): %s",
					p->seccomp_flags, husk_errtext(errno));
	if (p->seccomp_flags & SECCOMP_FILTER_FLAG_NEW_LISTENER)
		l->notify_fd = fd;
	husk_frames_by_write = 1;
	return 0;
}

/* The slave of a new pty, its master sent over the console socket. */
static int make_pty(struct husk_launch *l)
{
	return husk_pty_send(l->console_fd, &l->plan->tty, l->plan->uid, l->err, sizeof(l->err));
}

/* The process's stdio is slave (exec with a terminal; the console). */
static int use_tty(struct husk_launch *l, int slave)
{
	for (int fd = 0; fd <= 2; fd++)
		if (husk_k->dup2(slave, fd) < 0)
			return husk_launch_errf(l, "process.terminal: dup the pty slave onto fd %d: %s", fd,
						husk_errtext(errno));
	husk_k->close(slave);
	husk_k->close(l->console_fd);
	l->console_fd = -1;
	return 0;
}

static int open_tty(struct husk_launch *l)
{
	int slave = make_pty(l);

	return slave < 0 ? -1 : use_tty(l, slave);
}

/* A container's console, as runc's setupConsole: the pty made in the
 * container, its slave bound onto /dev/console, then the stdio. */
static int open_console(struct husk_launch *l)
{
	char why[HUSK_WHY];
	int slave = make_pty(l);

	if (slave < 0)
		return -1;
	if (husk_bind_console(slave, why, sizeof(why)) < 0) {
		husk_k->close(slave);
		return husk_launch_errf(l, "process.terminal: %s", why);
	}
	return use_tty(l, slave);
}

/*
 * The process leads a session of its own, as in runc: with a terminal,
 * the pty is its controlling tty. A session led from outside the
 * container's pid namespace is one CRIU cannot checkpoint.
 */
static int new_session(struct husk_launch *l)
{
	if (l->plan->has_tty)
		return husk_take_ctty(l->err, sizeof(l->err));
	if (husk_k->setsid() < 0)
		return husk_launch_errf(l, "setsid: %s", husk_errtext(errno));
	return 0;
}

/* cwd again, as the user, when root could not enter it (cwd.c). */
static int chdir_as_user(struct husk_launch *l)
{
	return husk_enter_cwd(l, 1) < 0 ? -1 : 0;
}

static int enter_cwd(struct husk_launch *l)
{
	int r = husk_enter_cwd(l, 0);

	if (r < 0)
		return -1;
	l->cwd_done = r;
	return 0;
}

/* Room for the listener's message with the pid put in: no malloc (brk,
 * mmap) between the filter and the hand-over. */
static int listener_room(struct husk_launch *l)
{
	if (!(l->listener_buf = malloc(l->plan->listener_len + 16 * HUSK_PLAN_MAX_HOLES)))
		return husk_launch_errf(l, "linux.seccomp.listenerPath: %s", husk_errtext(errno));
	return 0;
}

/*
 * Hands the filter's listener fd, with the message (the pid put in its
 * holes), to the listener, then closes both: right after the filter, as
 * runc, before any syscall the filter could give the listener to answer
 * (which would block the launcher on its own notification).
 */
static int hand_over_listener(struct husk_launch *l)
{
	const struct husk_plan *p = l->plan;
	int listener_fd = husk_env_fd(HUSK_ENV_LISTENERFD);
	char cbuf[CMSG_SPACE(sizeof(int))] = {0}, *msg = l->listener_buf;
	struct iovec iov;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	size_t len = 0, sent = 0;

	if (l->notify_fd < 0 || listener_fd < 0)
		return husk_launch_errf(l, "linux.seccomp.listenerPath: the filter made no listener fd to send");
	for (size_t i = 0, from = 0; i <= p->n_listener_holes; i++) {
		size_t to = i < p->n_listener_holes ? p->listener_holes[i] : p->listener_len;

		memcpy(msg + len, p->listener_msg + from, to - from);
		len += to - from;
		if (i < p->n_listener_holes)
			len += snprintf(msg + len, 16, "%d", (int)l->pid);
		from = to;
	}
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &l->notify_fd, sizeof(int));
	/* A stream socket may take the message in parts; the fd goes with
	 * the first. */
	while (sent < len) {
		iov.iov_base = msg + sent;
		iov.iov_len = len - sent;
		ssize_t n = husk_k->sendmsg(listener_fd, &mh, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return husk_launch_errf(l, "linux.seccomp.listenerPath: send the notify fd: %s",
						husk_errtext(errno));
		sent += n;
		mh.msg_control = NULL;
		mh.msg_controllen = 0;
	}
	husk_k->close(l->notify_fd);
	l->notify_fd = -1;
	husk_k->close(listener_fd);
	return 0;
}

static int fork_process(struct husk_launch *l)
{
	return l->fork(l);
}

/* ---- when each step applies ---- */

static int opens_pty(const struct husk_launch *l)
{
	return l->plan->has_tty && (l->plan->tty.flags & HUSK_TTY_OPEN);
}

static int is_init(const struct husk_launch *l)
{
	return !l->forks;
}

static int exec_opens_pty(const struct husk_launch *l)
{
	return l->forks && opens_pty(l);
}

/* A container's init with a mount namespace of its own makes its
 * console; without one, the build made the pty before its chroot. */
static int init_opens_console(const struct husk_launch *l)
{
	return is_init(l) && l->plan->has_rootfs && opens_pty(l);
}

/*
 * An exec forks before its scheduler when the scheduler cannot be set
 * before a fork (husk_sched_after_fork), and before its filter when the
 * filter has a listener: the listener's message names the process's
 * pid, known only once forked, and the fd goes to it before anything
 * else the filter sees. Else it forks last, the whole setup done out of
 * the container's sight.
 */
static int forks_early(const struct husk_launch *l)
{
	return l->forks && (l->plan->listener_msg || husk_sched_after_fork(l->plan));
}

static int forks_late(const struct husk_launch *l)
{
	return l->forks && !forks_early(l);
}

static int has_sched(const struct husk_launch *l)
{
	return l->plan->has_sched;
}

static int has_labels(const struct husk_launch *l)
{
	return l->plan->apparmor || l->plan->selinux;
}

static int has_listener(const struct husk_launch *l)
{
	return l->plan->listener_msg != NULL;
}

static int filter_early(const struct husk_launch *l)
{
	return l->plan->filter && !l->plan->no_new_privs;
}

static int filter_late(const struct husk_launch *l)
{
	return l->plan->filter && l->plan->no_new_privs;
}

static int listener_early(const struct husk_launch *l)
{
	return filter_early(l) && has_listener(l);
}

static int listener_late(const struct husk_launch *l)
{
	return filter_late(l) && has_listener(l);
}

static int cwd_as_user(const struct husk_launch *l)
{
	return !l->cwd_done;
}

static int fills_home(const struct husk_launch *l)
{
	return l->plan->fill_home;
}

/* The rootfs's last steps: a container's init with a mount namespace
 * of its own only (the parent plans ROOTFS only for one). */
static int has_rootfs(const struct husk_launch *l)
{
	return is_init(l) && l->plan->has_rootfs;
}

static int masks_paths(const struct husk_launch *l)
{
	return has_rootfs(l) && l->plan->n_masked;
}

/* The UTS names and sysctls: a container's init only. */
static int has_hostname(const struct husk_launch *l)
{
	return is_init(l) && l->plan->has_uts && l->plan->hostname[0];
}

static int has_domainname(const struct husk_launch *l)
{
	return is_init(l) && l->plan->has_uts && l->plan->domainname[0];
}

static int has_sysctls(const struct husk_launch *l)
{
	return is_init(l) && l->plan->n_sysctls;
}

static int has_readonly_paths(const struct husk_launch *l)
{
	return has_rootfs(l) && l->plan->n_rdonly;
}

static int has_readonly_dev(const struct husk_launch *l)
{
	return has_rootfs(l) && (l->plan->rootfs_flags & HUSK_ROOTFS_RO_DEV);
}

static int has_readonly_root(const struct husk_launch *l)
{
	return has_rootfs(l) && (l->plan->rootfs_flags & HUSK_ROOTFS_RO_ROOT);
}

/*
 * The launcher's steps, in order (docs/architecture.md, "One launcher",
 * states it with runc's; TestStepsMatchDoc checks both and the order's
 * constraints). A NULL applies: always. The last, exec, is run by
 * husk_launch_exec, after a container's init waited for start.
 */
const struct husk_step husk_steps[] = {
	{"console", init_opens_console, open_console},
	{"readonly-dev", has_readonly_dev, husk_readonly_dev},
	{"readonly-root", has_readonly_root, husk_readonly_root},
	{"hostname", has_hostname, husk_set_hostname},
	{"domainname", has_domainname, husk_set_domainname},
	{"sysctls", has_sysctls, husk_write_sysctls},
	{"readonly-paths", has_readonly_paths, husk_readonly_paths},
	{"masked-paths", masks_paths, husk_mask_paths},
	{"pty", exec_opens_pty, open_tty},
	{"session", is_init, new_session},
	{"attributes", NULL, husk_set_attrs},
	{"fork", forks_early, fork_process},
	{"session", forks_early, new_session},
	{"scheduler", has_sched, husk_set_scheduler},
	{"labels", has_labels, husk_set_labels},
	{"listener-room", has_listener, listener_room},
	{"filter", filter_early, load_seccomp},
	{"listener", listener_early, hand_over_listener},
	{"cwd", NULL, enter_cwd},
	{"credentials", NULL, husk_set_credentials},
	{"cwd-as-user", cwd_as_user, chdir_as_user},
	{"home", fills_home, husk_fill_home},
	{"path", NULL, husk_look_path},
	{"filter", filter_late, load_seccomp},
	{"listener", listener_late, hand_over_listener},
	{"fork", forks_late, fork_process},
	{"session", forks_late, new_session},
	{"exec", NULL, husk_launch_exec},
};
const size_t husk_n_steps = sizeof(husk_steps) / sizeof(husk_steps[0]);

/*
 * Runs every step that applies but the last (exec). Each is logged under
 * --debug before it runs; while a listener fd is not handed over yet,
 * after (the log's write may be a syscall the filter notifies).
 */
int husk_launch_prepare(struct husk_launch *l)
{
	for (size_t i = 0; i + 1 < husk_n_steps; i++) {
		const struct husk_step *s = &husk_steps[i];
		int quiet = l->notify_fd >= 0;

		if (s->applies && !s->applies(l))
			continue;
		if (husk_k->step)
			husk_k->step(i, s->name);
		if (!quiet)
			husk_logf("debug", "launcher step %zu: %s%s", i + 1, s->name, l->forked ? " (forked)" : "");
		if (s->run(l) < 0)
			return -1;
		if (quiet)
			husk_logf("debug", "launcher step %zu: %s (done)%s", i + 1, s->name, l->forked ? " (forked)" : "");
	}
	return 0;
}

int husk_launch_exec(struct husk_launch *l)
{
	husk_k->execve(l->exe, l->plan->argv, l->plan->envp);
	return husk_launch_errf(l, "exec \"%s\": %s", l->exe, husk_errtext(errno));
}
