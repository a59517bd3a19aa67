/*
 * The launcher's environment steps (launch.h): HOME from the container's
 * /etc/passwd when the parent asked (process.env had none, or an empty
 * one), and the file to exec: argv[0] looked up in the process's PATH as
 * a shell would, as the process's user.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel.h"
#include "launch.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* What the launcher reads of /etc/passwd at most: more than any real
 * one, so that a huge file cannot keep it busy; and a line as long as
 * runc's reader takes (bufio.Scanner's 64 KiB). */
#define PASSWD_MAX (64 << 20)
#define PASSWD_LINE_MAX 65536

/*
 * Opens path to read it only if it is a regular file of at most max
 * bytes: O_NONBLOCK, so that a FIFO cannot block the open, and O_NOCTTY;
 * a device (/dev/zero) is refused before any read (opening it is no more
 * than the container's own processes may do: the devices cgroup applies
 * to the launcher too). Returns the fd; -2 when the file cannot be
 * opened, or is /dev/null (a masked path: empty, as runc reads it): the
 * caller goes on without it, as runc does; -1 with l->err naming field
 * and path when it is not a file to read.
 */
static int open_bounded(struct husk_launch *l, const char *path, off_t max, const char *field)
{
	struct stat st;
	int fd = husk_k->open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return -2;
	if (husk_k->fstat(fd, &st) < 0) {
		husk_k->close(fd);
		return husk_launch_errf(l, "%s: %s: fstat: %s", field, path, husk_errtext(errno));
	}
	if (S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3) {
		husk_k->close(fd);
		return -2;
	}
	if (!S_ISREG(st.st_mode)) {
		husk_k->close(fd);
		return husk_launch_errf(l, "%s: %s: not a regular file", field, path);
	}
	if (st.st_size > max) {
		husk_k->close(fd);
		return husk_launch_errf(l, "%s: %s: larger than %lld bytes (%lld)", field, path, (long long)max,
					(long long)st.st_size);
	}
	return fd;
}

/* The home (field 6) of a passwd line if its uid (field 3) is uid and
 * the home is not empty, else NULL. */
static const char *home_in(char *line, const char *uid)
{
	char *field[7] = {0}, *rest = line;
	int n = 0;

	while (n < 7 && rest)
		field[n++] = strsep(&rest, ":");
	return n >= 6 && strcmp(field[2], uid) == 0 && field[5][0] ? field[5] : NULL;
}

/* The home of uid in /etc/passwd, "/" without one, into the env's
 * "HOME=" entry (the parent put exactly one there). The file is read in
 * bounds (open_bounded, PASSWD_LINE_MAX): an image's /etc/passwd that is
 * /dev/zero, a FIFO or huge fails the launch naming it. */
int husk_fill_home(struct husk_launch *l)
{
	struct husk_plan *p = l->plan;
	char buf[PASSWD_LINE_MAX + 1], uid[16], *start, *nl;
	const char *home = NULL;
	size_t have = 0, total = 0, lineno = 1;
	int fd = open_bounded(l, "/etc/passwd", PASSWD_MAX, "process.user");
	ssize_t n = 1;

	if (fd == -1)
		return -1;
	snprintf(uid, sizeof(uid), "%u", p->uid);
	while (fd >= 0 && !home && n > 0) {
		n = husk_k->read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR) {
			n = 1;
			continue;
		}
		if (n < 0 || (total += n) > PASSWD_MAX) {
			husk_k->close(fd);
			return husk_launch_errf(l, "process.user: /etc/passwd: %s", n < 0 ? husk_errtext(errno)
											  : "grew past its size limit");
		}
		have += n;
		buf[have] = '\0';
		for (start = buf; !home && (nl = memchr(start, '\n', buf + have - start)); start = nl + 1, lineno++) {
			*nl = '\0';
			home = home_in(start, uid);
		}
		if (!home && n == 0 && start < buf + have) /* the last line, without a newline */
			home = home_in(start, uid);
		if (home)
			break;
		have -= start - buf;
		memmove(buf, start, have);
		if (have == sizeof(buf) - 1) {
			husk_k->close(fd);
			return husk_launch_errf(l, "process.user: /etc/passwd: line %zu longer than %d bytes", lineno,
						PASSWD_LINE_MAX);
		}
	}
	snprintf(l->home, sizeof(l->home), "HOME=%s", home ? home : "/");
	if (fd >= 0)
		husk_k->close(fd);
	for (size_t i = 0; i < p->envc; i++)
		if (strcmp(p->envp[i], "HOME=") == 0) {
			p->envp[i] = l->home;
			break;
		}
	return 0;
}

/*
 * 0 when path is a file the process may execute, else -1 and why. It asks
 * with the effective ids and capabilities (AT_EACCESS), as execve will: a
 * user with CAP_DAC_OVERRIDE may run a binary it cannot read. ENOSYS or
 * EPERM: faccessat2 refused by the filter; execve will decide.
 */
static int executable(const char *path, char *why, size_t n)
{
	struct stat st;

	if (husk_k->stat(path, &st) < 0) {
		snprintf(why, n, "stat %s: %s", path, husk_errtext(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(why, n, "is a directory");
		return -1;
	}
	if (husk_k->faccessat2(AT_FDCWD, path, X_OK, AT_EACCESS) < 0 && errno != ENOSYS &&
	    errno != EPERM) {
		snprintf(why, n, "%s", husk_errtext(errno));
		return -1;
	}
	return 0;
}

int husk_look_path(struct husk_launch *l)
{
	const struct husk_plan *p = l->plan;
	const char *name = p->path ? p->path : p->argv[0], *path = NULL;
	char why[512], dirs[4096], *rest = dirs, *dir;

	if (strchr(name, '/')) {
		if (executable(name, why, sizeof(why)) < 0)
			return husk_launch_errf(l, "exec: \"%s\": %s", name, why);
		l->exe = name;
		return 0;
	}
	for (size_t i = 0; i < p->envc; i++)
		if (strncmp(p->envp[i], "PATH=", 5) == 0)
			path = p->envp[i] + 5;
	snprintf(dirs, sizeof(dirs), "%s", path && *path ? path : DEFAULT_PATH);
	while ((dir = strsep(&rest, ":"))) {
		size_t dl = strlen(dir);

		if (dl == 0)
			dir = ".", dl = 1;
		snprintf(l->found, sizeof(l->found), "%s%s%s", dir, dir[dl - 1] == '/' ? "" : "/", name);
		if (executable(l->found, why, sizeof(why)) == 0) {
			l->exe = l->found;
			return 0;
		}
	}
	return husk_launch_errf(l, "exec: \"%s\": executable file not found in $PATH", name);
}
