/*
 * The container's pseudo-terminal (launch.h). husk_pty_send is the one
 * way husk makes a pty, for an exec (the launcher, in the container's
 * mount namespace) and for a container's init (Go init calls it through
 * nsenter.OpenPty, then binds the slave onto /dev/console). The master
 * goes over the console socket with SCM_RIGHTS, named "/dev/ptmx" as
 * runc names it; the launcher makes the slave the process's stdio and
 * controlling terminal.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
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

int husk_take_ctty(char *err, size_t errlen)
{
	if (husk_k->setsid() < 0)
		return fail(err, errlen, -1, -1, "process.terminal: setsid: %s", husk_errtext(errno));
	if (husk_k->ioctl(0, TIOCSCTTY, NULL) < 0)
		return fail(err, errlen, -1, -1, "process.terminal: make the pty the controlling terminal: %s",
			    husk_errtext(errno));
	return 0;
}
