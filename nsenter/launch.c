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
 * Order: the pty (exec), the controlling tty (init), attributes (attrs.c),
 * the filter early without noNewPrivileges (loading it then needs
 * CAP_SYS_ADMIN, and it then applies to the rest of the setup, as in
 * runc), cwd as root (cwd.c: inside the root only), credentials
 * (creds.c), cwd again as the user,
 * HOME and the PATH lookup (lookup.c), the filter last with
 * noNewPrivileges (without it, the setup after the early filter runs
 * under it, as in runc: openat, openat2, fchdir and getcwd for the cwd
 * (cwd.c; chdir where openat2 is refused), prctl, setgroups, setresgid,
 * setresuid, capset, openat, fstat and read of /etc/passwd, stat and
 * faccessat2). After
 * the last step the launch makes only these syscalls, which a profile
 * must allow: an exec's launcher clone (the fork), close, write and read
 * (frames, its pipes to the forked process), sendmsg (a listener),
 * exit_group; the forked process close, read, setsid, ioctl (a
 * terminal), sched_setattr (SCHED_DEADLINE or SCHED_FLAG_RESET_ON_FORK),
 * execve (write, rt_sigprocmask and exit_group when it fails: run.c's
 * exec_failed); a container's pid 1 sendmsg (a listener), write, close,
 * openat (exec.fifo), execve (the same three when it fails). A
 * profile that kills on any of them kills the launcher, single-threaded,
 * at once: the parent names seccomp (libcontainer/launch/spawn.go).
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
}

/* Opens /proc/self/attr/<name> for writing; it must be on a procfs. */
static int open_attr(struct husk_launch *l, const char *name, const char *field)
{
	char path[64];
	struct statfs fs;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/attr/%s", name);
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return husk_launch_errf(l, "%s: open %s: %s", field, path, husk_errtext(errno));
	if (fstatfs(fd, &fs) < 0 || fs.f_type != PROC_SUPER_MAGIC) {
		close(fd);
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
	if (p->selinux && p->keyring && access("/proc/self/attr/keycreate", F_OK) == 0 &&
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
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, p->seccomp_flags, &prog);
	if (fd < 0)
		return husk_launch_errf(l, "linux.seccomp: seccomp(SET_MODE_FILTER, flags 0x%x): %s",
					p->seccomp_flags, husk_errtext(errno));
	if (p->seccomp_flags & SECCOMP_FILTER_FLAG_NEW_LISTENER)
		l->notify_fd = fd;
	husk_frames_by_write = 1;
	return 0;
}

/* The process's stdio is the slave of a new pty (exec with a terminal). */
static int open_tty(struct husk_launch *l)
{
	int slave = husk_pty_send(l->console_fd, &l->plan->tty, l->plan->uid, l->err, sizeof(l->err));

	if (slave < 0)
		return -1;
	for (int fd = 0; fd <= 2; fd++)
		if (dup2(slave, fd) < 0)
			return husk_launch_errf(l, "process.terminal: dup the pty slave onto fd %d: %s", fd,
						husk_errtext(errno));
	close(slave);
	close(l->console_fd);
	l->console_fd = -1;
	return 0;
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
	if (setsid() < 0)
		return husk_launch_errf(l, "setsid: %s", husk_errtext(errno));
	return 0;
}

int husk_launch_prepare(struct husk_launch *l)
{
	const struct husk_plan *p = l->plan;
	int cwd_done;

	if (p->has_tty && (p->tty.flags & HUSK_TTY_OPEN) && open_tty(l) < 0)
		return -1;
	if (!l->forks && new_session(l) < 0)
		return -1;
	if (husk_set_attrs(l) < 0)
		return -1;
	/* Room for the listener's message with the pid put in: no malloc
	 * (brk, mmap) once the filter is in. */
	if (p->listener_msg && !(l->listener_buf = malloc(p->listener_len + 16 * HUSK_PLAN_MAX_HOLES)))
		return husk_launch_errf(l, "linux.seccomp.listenerPath: %s", husk_errtext(errno));
	if (p->filter && !p->no_new_privs && load_seccomp(l) < 0)
		return -1;
	if ((cwd_done = husk_enter_cwd(l, 0)) < 0)
		return -1;
	if (husk_set_credentials(l) < 0)
		return -1;
	if (!cwd_done && husk_enter_cwd(l, 1) < 0)
		return -1;
	if (p->fill_home && husk_fill_home(l) < 0)
		return -1;
	if (husk_look_path(l) < 0)
		return -1;
	if (p->filter && p->no_new_privs && load_seccomp(l) < 0)
		return -1;
	return 0;
}

int husk_launch_listener(struct husk_launch *l, int listener_fd, pid_t pid)
{
	const struct husk_plan *p = l->plan;
	char cbuf[CMSG_SPACE(sizeof(int))] = {0}, *msg = l->listener_buf;
	struct iovec iov;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	size_t len = p->listener_len, sent = 0;

	if (!p->listener_msg)
		return 0;
	if (l->notify_fd < 0 || listener_fd < 0)
		return husk_launch_errf(l, "linux.seccomp.listenerPath: the filter made no listener fd to send");
	len = 0;
	for (size_t i = 0, from = 0; i <= p->n_listener_holes; i++) {
		size_t to = i < p->n_listener_holes ? p->listener_holes[i] : p->listener_len;

		memcpy(msg + len, p->listener_msg + from, to - from);
		len += to - from;
		if (i < p->n_listener_holes)
			len += snprintf(msg + len, 16, "%d", (int)pid);
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
		ssize_t n = sendmsg(listener_fd, &mh, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return husk_launch_errf(l, "linux.seccomp.listenerPath: send the notify fd: %s",
						husk_errtext(errno));
		sent += n;
		mh.msg_control = NULL;
		mh.msg_controllen = 0;
	}
	return 0;
}

int husk_launch_after_fork(struct husk_launch *l)
{
	if (new_session(l) < 0)
		return -1;
	if (husk_sched_after_fork(l->plan) && husk_set_scheduler(l) < 0)
		return -1;
	return 0;
}

int husk_launch_exec(struct husk_launch *l)
{
	execve(l->exe, l->plan->argv, l->plan->envp);
	return husk_launch_errf(l, "exec \"%s\": %s", l->exe, husk_errtext(errno));
}
