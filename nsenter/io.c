/*
 * nsexec's and the launcher's I/O with the parent (nsexec.h): frames on
 * the init socket, error reports, log lines, trace marks, and the fds
 * `husk init` was given. Frames go out with send(MSG_NOSIGNAL) until the
 * launcher loads the seccomp filter, with write(2) after it
 * (husk_frames_by_write): the one syscall a strict profile surely allows.
 * A parent gone by then kills the writer with SIGPIPE, which is what
 * should happen to a launch nobody waits for (ignoring SIGPIPE instead
 * would pass the ignored signal on to the process through execve).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap.h"
#include "nsexec.h"

int husk_initpipe = -1;
int husk_frames_by_write;

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	ssize_t w;

	while (n > 0) {
		w = husk_frames_by_write ? write(fd, p, n) : send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= w;
	}
	return 0;
}

int husk_send_frame(uint32_t type, const void *payload, uint32_t len)
{
	uint32_t hdr[2] = {type, len};

	return write_all(husk_initpipe, hdr, sizeof(hdr)) < 0 ? -1 : write_all(husk_initpipe, payload, len);
}

void husk_fail(const char *fmt, ...)
{
	char msg[8192]; /* a hook's error carries 4 KiB of its output */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (husk_send_frame(HUSK_SYNC_ERROR, msg, strlen(msg)) < 0)
		dprintf(STDERR_FILENO, "%s\n", msg);
	_exit(1);
}

int husk_env_fd(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : -1;
}

/* The parent logs debug lines (--debug: HUSK_ENV_LOGDEBUG set): only
 * then is a debug line written, or anything done only to say it. */
int husk_debug_on(void)
{
	return getenv(HUSK_ENV_LOGDEBUG) != NULL && husk_env_fd(HUSK_ENV_LOGPIPE) >= 0;
}

/*
 * husk_logf: one JSON line (bootstrap.h: HUSK_LOG_LINE_*) on the log pipe;
 * the parent re-logs it to --log in --log-format.
 */
void husk_logf(const char *level, const char *fmt, ...)
{
	char msg[512], line[1200];
	int fd = husk_env_fd(HUSK_ENV_LOGPIPE);
	size_t n;
	va_list ap;

	if (fd < 0 || (strcmp(level, "debug") == 0 && !husk_debug_on()))
		return;
	n = snprintf(line, sizeof(line), HUSK_LOG_LINE_HEAD, level);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *c = msg; *c && n < sizeof(line) - 8; c++) {
		if (*c == '"' || *c == '\\')
			line[n++] = '\\';
		line[n++] = (unsigned char)*c < ' ' ? ' ' : *c;
	}
	memcpy(line + n, HUSK_LOG_LINE_TAIL, sizeof(HUSK_LOG_LINE_TAIL));
	if (write(fd, line, n + sizeof(HUSK_LOG_LINE_TAIL) - 1) < 0)
		return; /* best effort */
}

void husk_read(void *buf, size_t n, const char *what)
{
	char *p = buf;
	ssize_t r;

	while (n > 0) {
		r = read(husk_initpipe, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			husk_fail("nsexec: read %s: %s", what, strerror(errno));
		if (r == 0)
			husk_fail("nsexec: read %s: unexpected end of file", what);
		p += r;
		n -= r;
	}
}

char *husk_read_frame(uint32_t want, uint32_t max, uint32_t *len)
{
	uint32_t hdr[2];
	char *buf;

	husk_read(hdr, sizeof(hdr), "sync frame header");
	if (hdr[0] == HUSK_SYNC_ERROR) /* the parent gave up */
		_exit(1);
	if (hdr[0] != want)
		husk_fail("nsexec: waiting for sync frame %u: got type %u with %u bytes", want, hdr[0], hdr[1]);
	if (hdr[1] > max)
		husk_fail("nsexec: sync frame %u: %u bytes, over the %u-byte limit", want, hdr[1], max);
	buf = malloc(hdr[1] ? hdr[1] : 1);
	if (!buf)
		husk_fail("nsexec: sync frame %u: allocate %u bytes: %s", want, hdr[1], strerror(errno));
	husk_read(buf, hdr[1], "sync frame");
	*len = hdr[1];
	return buf;
}

void husk_expect(uint32_t want)
{
	uint32_t hdr[2];

	husk_read(hdr, sizeof(hdr), "sync frame header");
	if (hdr[0] == HUSK_SYNC_ERROR) /* the parent gave up */
		_exit(1);
	if (hdr[0] != want || hdr[1] != 0)
		husk_fail("nsexec: waiting for sync frame %u: got type %u with %u bytes", want, hdr[0], hdr[1]);
}

/* ---- trace marks (libcontainer/trace: one JSON record per phase) ------- */

void husk_mark(const char *phase)
{
	static long long last;
	int fd = husk_env_fd(HUSK_ENV_TRACEFD);
	struct timespec ts;
	long long t;
	char rec[256];
	int n;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = ts.tv_sec * 1000000000LL + ts.tv_nsec;
	if (!last)
		last = t;
	if (phase && fd >= 0) {
		n = snprintf(rec, sizeof(rec), HUSK_TRACE_RECORD, t, getpid(), phase, (t - last) / 1e6);
		if (write(fd, rec, n) < 0)
			last = t; /* best effort */
	}
	last = t;
}

/* ---- fds --------------------------------------------------------------- */

/* init's own fds, by the variables naming them (bootstrap.h). */
static const char *const own_fd_envs[] = {
	HUSK_ENV_INITPIPE, HUSK_ENV_LOGPIPE, HUSK_ENV_FIFOFD, HUSK_ENV_CONSOLEFD,
	HUSK_ENV_LISTENERFD, HUSK_ENV_TRACEFD,
};
#define N_OWN (sizeof(own_fd_envs) / sizeof(own_fd_envs[0]))

static int is_own(int fd)
{
	for (size_t i = 0; i < N_OWN; i++)
		if (husk_env_fd(own_fd_envs[i]) == fd)
			return 1;
	return 0;
}

/*
 * Only the fds of the contract survive: stdio, the preserved fds
 * (--preserve-fds, LISTEN_FDS) numbered 3 up to the init socket, and
 * init's own, named in its environment and made close-on-exec. Any other
 * fd from the init socket's number up leaked from husk's caller through
 * the parent (CVE-2024-21626: a directory fd there is the host's
 * filesystem for process.cwd /proc/self/fd/N) and is closed. /proc must
 * still be the runtime's.
 */
void husk_close_stray_fds(void)
{
	struct dirent *e;
	DIR *d;

	for (size_t i = 0; i < N_OWN; i++) {
		int fd = husk_env_fd(own_fd_envs[i]);

		if (fd > 2 && fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
			husk_fail("nsexec: mark fd %d (%s) close-on-exec: %s", fd, own_fd_envs[i], strerror(errno));
	}
	d = opendir("/proc/self/fd");
	if (!d)
		husk_fail("nsexec: list my fds: open /proc/self/fd: %s", strerror(errno));
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd < husk_initpipe || fd == dirfd(d))
			continue;
		if (!is_own(fd))
			close(fd);
	}
	closedir(d);
}

/* fork, or fail saying why: a refused fork is one line naming pids.max. */
pid_t husk_fork(void)
{
	pid_t pid = fork();

	if (pid < 0 && errno == EAGAIN)
		husk_fail("nsexec: fork: %s: no room for the process under the container's pids.max (or RLIMIT_NPROC)",
			  strerror(errno));
	if (pid < 0)
		husk_fail("nsexec: fork: %s", strerror(errno));
	return pid;
}
