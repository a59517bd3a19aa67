/*
 * The container's pseudo-terminal (launch.h). husk_pty_send is the one
 * way husk makes a pty, for an exec (the launcher, in the container's
 * mount namespace) and for a container's init (its pid 1, which binds the
 * slave onto /dev/console: husk_bind_console; without a mount namespace
 * of its own, pid 1 before its chroot: build.c). The
 * master goes over the console socket with SCM_RIGHTS, named "/dev/ptmx"
 * as runc names it; the launcher makes the slave the process's stdio and
 * controlling terminal.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <termios.h>
#include <unistd.h>

#include "kernel.h"
#include "launch.h"

#define PTMX "/dev/ptmx"

static int fail(char *err, size_t errlen, int close1, int close2, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int fail(char *err, size_t errlen, int close1, int close2, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	if (close1 >= 0)
		husk_k->close(close1);
	if (close2 >= 0)
		husk_k->close(close2);
	errno = saved;
	return -1;
}

/* The slave of master: through the master (TIOCGPTPEER), which cannot be
 * fooled by what is at a path (Linux >= 4.13), and it must be a devpts
 * file. */
static int open_slave(int master, char *err, size_t errlen)
{
	struct statfs fs;
	struct stat st;
	int fd = husk_k->ioctl(master, TIOCGPTPEER, (void *)(long)(O_RDWR | O_NOCTTY | O_CLOEXEC));

	if (fd < 0)
		return fail(err, errlen, -1, -1, "open the pty slave (TIOCGPTPEER): %s", husk_errtext(errno));
	if (husk_k->fstatfs(fd, &fs) < 0 || fs.f_type != DEVPTS_SUPER_MAGIC || husk_k->fstat(fd, &st) < 0 ||
	    !S_ISCHR(st.st_mode))
		return fail(err, errlen, fd, -1, "the pty slave of %s is not a devpts terminal", PTMX);
	return fd;
}

static int send_master(int sock, int master, char *err, size_t errlen)
{
	char name[] = PTMX, cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {.iov_base = name, .iov_len = strlen(name)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &master, sizeof(int));
	if (husk_k->sendmsg(sock, &msg, MSG_NOSIGNAL) < 0)
		return fail(err, errlen, -1, -1, "send the pty master over the console socket: %s",
			    husk_errtext(errno));
	return 0;
}

int husk_pty_send(int sock, const struct husk_plan_tty *tty, uint32_t uid, char *err, size_t errlen)
{
	struct termios t;
	char why[256];
	int unlock = 0, master, slave;
	unsigned int n;

	master = husk_k->open(PTMX, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0)
		return fail(err, errlen, -1, -1, "process.terminal: open %s: %s", PTMX, husk_errtext(errno));
	if (husk_k->ioctl(master, TIOCSPTLCK, &unlock) < 0 || husk_k->ioctl(master, TIOCGPTN, &n) < 0)
		return fail(err, errlen, master, -1, "process.terminal: %s is not a pty multiplexer: %s", PTMX,
			    husk_errtext(errno));
	slave = open_slave(master, why, sizeof(why));
	if (slave < 0)
		return fail(err, errlen, master, -1, "process.terminal: %s", why);
	if (tty->flags & HUSK_TTY_SIZE) {
		struct winsize ws = {.ws_row = tty->rows, .ws_col = tty->cols};

		if (husk_k->ioctl(master, TIOCSWINSZ, &ws) < 0)
			return fail(err, errlen, master, slave, "process.consoleSize: set the console size to %ux%u: %s",
				    tty->rows, tty->cols, husk_errtext(errno));
	}
	/* As runc: no "\r\n" for every "\n" the process prints. */
	if (husk_k->tcgetattr(slave, &t) < 0 || (t.c_oflag &= ~ONLCR, husk_k->tcsetattr(slave, TCSANOW, &t) < 0))
		return fail(err, errlen, master, slave, "process.terminal: clear ONLCR on /dev/pts/%u: %s", n,
			    husk_errtext(errno));
	/* The devpts makes the slave root's; the process must own its tty. */
	if (husk_k->fchown(slave, uid, -1) < 0)
		return fail(err, errlen, master, slave, "process.terminal: chown /dev/pts/%u to %u: %s", n, uid,
			    husk_errtext(errno));
	if (send_master(sock, master, why, sizeof(why)) < 0)
		return fail(err, errlen, master, slave, "process.terminal: %s", why);
	husk_k->close(master);
	return slave;
}

#define CONSOLE "/dev/console"

/* Opens /dev/console as an O_PATH fd without following any symlink,
 * making an empty file there if there is nothing; it must be a file or a
 * character device. */
static int open_console_target(char *err, size_t errlen)
{
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	struct open_how make = {.flags = O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, .mode = 0666,
				.resolve = RESOLVE_NO_SYMLINKS};
	struct stat st;
	int fd = husk_k->openat2(AT_FDCWD, CONSOLE, &how, sizeof(how));

	if (fd < 0 && errno == ENOENT) {
		int made = husk_k->openat2(AT_FDCWD, CONSOLE, &make, sizeof(make));

		if (made < 0)
			return fail(err, errlen, -1, -1, "create %s: %s", CONSOLE, husk_errtext(errno));
		husk_k->close(made);
		fd = husk_k->openat2(AT_FDCWD, CONSOLE, &how, sizeof(how));
	}
	if (fd < 0 && errno == ELOOP)
		return fail(err, errlen, -1, -1, "%s is a symlink, or lies under one", CONSOLE);
	if (fd < 0)
		return fail(err, errlen, -1, -1, "open %s: %s", CONSOLE, husk_errtext(errno));
	if (husk_k->fstat(fd, &st) < 0)
		return fail(err, errlen, fd, -1, "stat %s: %s", CONSOLE, husk_errtext(errno));
	if (S_ISLNK(st.st_mode))
		return fail(err, errlen, fd, -1, "%s is a symlink", CONSOLE);
	if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
		return fail(err, errlen, fd, -1, "%s is not a file or a character device (mode %#o)", CONSOLE,
			    st.st_mode);
	return fd;
}

/*
 * Binds the pty slave onto /dev/console. Both ends are fds
 * (CVE-2025-52565): the target is opened without following any symlink
 * (one there is refused: the mount would land wherever it points), the
 * source is a clone of the slave fd's mount, not its path re-resolved.
 * When the slave's devpts is not a mount of this namespace (a ptmx node
 * of another instance), open_tree refuses (EINVAL): the slave, through
 * its fd, is bound onto the target, through its fd.
 */
int husk_bind_console(int slave, char *err, size_t errlen)
{
	char from[32], to[32];
	int target = open_console_target(err, errlen), src;

	if (target < 0)
		return -1;
	src = husk_k->open_tree(slave, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (src < 0 && errno == EINVAL) {
		snprintf(from, sizeof(from), "/proc/self/fd/%d", slave);
		snprintf(to, sizeof(to), "/proc/self/fd/%d", target);
		if (husk_k->mount_bind(from, to) < 0)
			return fail(err, errlen, target, -1, "bind the pty slave onto %s: %s", CONSOLE, husk_errtext(errno));
		husk_k->close(target);
		return 0;
	}
	if (src < 0)
		return fail(err, errlen, target, -1, "clone the mount of the pty slave: %s", husk_errtext(errno));
	if (husk_k->move_mount(src, target) < 0)
		return fail(err, errlen, target, src, "bind the pty slave onto %s: %s", CONSOLE, husk_errtext(errno));
	husk_k->close(src);
	husk_k->close(target);
	return 0;
}

int husk_take_ctty(char *err, size_t errlen)
{
	if (husk_k->setsid() < 0)
		return fail(err, errlen, -1, -1, "process.terminal: setsid: %s", husk_errtext(errno));
	if (husk_k->ioctl(0, TIOCSCTTY, NULL) < 0)
		return fail(err, errlen, -1, -1, "process.terminal: make the pty the controlling terminal: %s",
			    husk_errtext(errno));
	return 0;
}
