/*
 * nsexec: the C stage of `husk init`, run before the Go runtime starts
 * (constructor in nsenter.go); a no-op unless _HUSK_INITPIPE is set. On that
 * socket (protocol: libcontainer/bootstrap/protocol.go) it reads the
 * bootstrap message, writes oom_score_adj, opens every namespace path and
 * then setns each in order, unshares a user namespace (the parent writes its
 * id maps) and then the others, and forks: the first process sends the
 * child's pid and exits, the child returns into Go. fork(2), never a raw
 * clone(2): Go >= 1.22 aborts on a cloned process's glibc state (runc #4233).
 *
 * Errors: die() sends HUSK_SYNC_ERROR "nsexec: <what> <which>: <why>"
 * (stderr if that fails) and exits 1. The message's parser is parse.c.
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

#define MAX_MSG (1 << 20) /* bound on the bootstrap message */

/* ---- the init socket ------------------------------------------------- */

static int initpipe = -1;

static int send_all(const void *buf, size_t n)
{
	const char *p = buf;
	ssize_t w;

	while (n > 0) {
		w = send(initpipe, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= w;
	}
	return 0;
}

static int send_frame(uint32_t type, const void *payload, uint32_t len)
{
	uint32_t hdr[2] = {type, len};

	return send_all(hdr, sizeof(hdr)) < 0 ? -1 : send_all(payload, len);
}

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	char msg[1024] = "nsexec: ";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), fmt, ap);
	va_end(ap);
	if (send_frame(HUSK_SYNC_ERROR, msg, strlen(msg)) < 0)
		dprintf(STDERR_FILENO, "%s\n", msg);
	_exit(1);
}

static void read_or_die(void *buf, size_t n, const char *what)
{
	char *p = buf;
	ssize_t r;

	while (n > 0) {
		r = read(initpipe, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("read %s: %s", what, strerror(errno));
		if (r == 0)
			die("read %s: unexpected end of file", what);
		p += r;
		n -= r;
	}
}

static char *read_bootstrap(size_t *len)
{
	struct nlmsghdr hdr;
	char *buf;

	read_or_die(&hdr, sizeof(hdr), "bootstrap message header");
	if (hdr.nlmsg_len < sizeof(hdr) || hdr.nlmsg_len > MAX_MSG)
		die("bootstrap message: length %u out of range [%zu, %d]", hdr.nlmsg_len,
		    sizeof(hdr), MAX_MSG);
	buf = malloc(hdr.nlmsg_len);
	if (!buf)
		die("bootstrap message: allocate %u bytes: %s", hdr.nlmsg_len, strerror(errno));
	memcpy(buf, &hdr, sizeof(hdr));
	read_or_die(buf + sizeof(hdr), hdr.nlmsg_len - sizeof(hdr), "bootstrap message");
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

static void join_namespaces(const struct husk_bootstrap *b)
{
	int fds[HUSK_MAX_NS];
	size_t i;

	for (i = 0; i < b->n_ns; i++) {
		fds[i] = open(b->ns[i].path, O_RDONLY | O_CLOEXEC);
		if (fds[i] < 0)
			die("open %s:%s: %s", b->ns[i].name, b->ns[i].path, strerror(errno));
	}
	for (i = 0; i < b->n_ns; i++) {
		if (setns(fds[i], b->ns[i].flag) < 0)
			die("setns %s:%s: %s", b->ns[i].name, b->ns[i].path, strerror(errno));
		close(fds[i]);
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
	if (send_frame(HUSK_SYNC_USERMAP_PLS, &pid, sizeof(pid)) < 0)
		die("send USERMAP_PLS: %s", strerror(errno));
	read_or_die(ack, sizeof(ack), "USERMAP_ACK");
	if (ack[0] != HUSK_SYNC_USERMAP_ACK || ack[1] != 0)
		die("waiting for USERMAP_ACK: got sync frame type %u with %u bytes", ack[0], ack[1]);
	become_root("the new user namespace");
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

static void unshare_others(const struct husk_bootstrap *b)
{
	uint32_t flags = b->clone_flags & ~CLONE_NEWUSER;
	char names[64];

	if (flags && unshare(flags) < 0)
		die("unshare %s: %s", ns_names(flags, names, sizeof(names)), strerror(errno));
	if ((flags & CLONE_NEWTIME) && b->timens_offsets)
		write_file("/proc/self/timens_offsets", b->timens_offsets, "TIMENS_OFFSETS");
}

/* An exec into a running container (bootstrap.h: HUSK_ENV_INITTYPE). */
static int is_exec(void)
{
	const char *t = getenv(HUSK_ENV_INITTYPE);

	return t && strcmp(t, HUSK_INITTYPE_EXEC) == 0;
}

void husk_nsexec(void)
{
	const char *env = getenv(HUSK_ENV_INITPIPE);
	struct husk_bootstrap b;
	char err[512], *msg, *end;
	size_t len;
	long fd;
	pid_t pid;

	if (!env)
		return;
	errno = 0;
	fd = strtol(env, &end, 10);
	if (*env == '\0' || *end != '\0' || errno || fd < 0 || fd > INT_MAX)
		die("%s=\"%s\": not an fd number", HUSK_ENV_INITPIPE, env);
	initpipe = fd;

	msg = read_bootstrap(&len);
	if (husk_parse_bootstrap(msg, len, &b, err, sizeof(err)) < 0)
		die("bootstrap message: %s", err);
	free(msg);

	if (is_exec() && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		die("prctl PR_SET_DUMPABLE 0: %s", strerror(errno));
	if (b.oom_score_adj)
		write_file("/proc/self/oom_score_adj", b.oom_score_adj, "OOM_SCORE_ADJ");
	join_namespaces(&b);
	if (b.clone_flags & CLONE_NEWUSER)
		unshare_user();
	unshare_others(&b);
	husk_bootstrap_free(&b);

	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid > 0) {
		uint32_t p = pid;

		if (send_frame(HUSK_SYNC_PID, &p, sizeof(p)) < 0) {
			int saved = errno;

			kill(pid, SIGKILL);
			die("send PID %d: %s", pid, strerror(saved));
		}
		_exit(0);
	}
	/* The child: the Go runtime starts here and runs `husk init`. */
}
