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
 * (stderr if that fails) and exits 1. The parser returns -1 and error text.
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

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define MAX_MSG (1 << 20) /* bound on the bootstrap message */

static const struct {
	const char *name;
	int flag;
} ns_types[] = {
	{"user", CLONE_NEWUSER}, {"mnt", CLONE_NEWNS},  {"uts", CLONE_NEWUTS},
	{"ipc", CLONE_NEWIPC},   {"pid", CLONE_NEWPID}, {"net", CLONE_NEWNET},
	{"cgroup", CLONE_NEWCGROUP}, {"time", CLONE_NEWTIME},
};
#define N_NS_TYPES (sizeof(ns_types) / sizeof(ns_types[0]))
#define ALL_NS_FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | \
		      CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP | CLONE_NEWTIME)

/* ---- parser ---------------------------------------------------------- */

static int __attribute__((format(printf, 3, 4)))
errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Adds NS_PATHS entry "name:path" (entry is modified) to b->ns. */
static int add_ns(struct husk_bootstrap *b, char *entry, char *err, size_t errlen)
{
	char *colon = strchr(entry, ':');
	size_t i;

	if (b->n_ns == HUSK_MAX_NS)
		return errf(err, errlen, "NS_PATHS: more than %d entries", HUSK_MAX_NS);
	if (!colon || colon == entry || colon[1] == '\0')
		return errf(err, errlen, "NS_PATHS: entry \"%s\" is not name:path", entry);
	*colon = '\0';
	for (i = 0; i < N_NS_TYPES; i++) {
		if (strcmp(entry, ns_types[i].name) == 0) {
			b->ns[b->n_ns].name = ns_types[i].name;
			b->ns[b->n_ns].flag = ns_types[i].flag;
			b->ns[b->n_ns].path = colon + 1;
			b->n_ns++;
			return 0;
		}
	}
	return errf(err, errlen, "NS_PATHS: unknown namespace \"%s\" in \"%s:%s\"",
		    entry, entry, colon + 1);
}

static int split_ns_paths(struct husk_bootstrap *b, char *err, size_t errlen)
{
	char *rest = b->ns_paths;

	if (*rest == '\0')
		return 0;
	while (rest)
		if (add_ns(b, strsep(&rest, ","), err, errlen) < 0)
			return -1;
	return 0;
}

/* Stores a string attribute: one trailing NUL is allowed, no other NUL. */
static int parse_string(struct husk_bootstrap *b, uint16_t type, const char *p, size_t n,
			char *err, size_t errlen)
{
	const char *name;
	char **dst;

	switch (type) {
	case HUSK_ATTR_NS_PATHS: name = "NS_PATHS"; dst = &b->ns_paths; break;
	case HUSK_ATTR_UIDMAP: name = "UIDMAP"; dst = &b->uid_map; break;
	case HUSK_ATTR_GIDMAP: name = "GIDMAP"; dst = &b->gid_map; break;
	case HUSK_ATTR_OOM_SCORE_ADJ: name = "OOM_SCORE_ADJ"; dst = &b->oom_score_adj; break;
	case HUSK_ATTR_TIMENS_OFFSETS: name = "TIMENS_OFFSETS"; dst = &b->timens_offsets; break;
	default: return errf(err, errlen, "unknown attribute type %u", type);
	}
	if (*dst)
		return errf(err, errlen, "attribute %s appears twice", name);
	if (n > 0 && p[n - 1] == '\0')
		n--;
	if (memchr(p, '\0', n))
		return errf(err, errlen, "attribute %s: NUL byte inside the string", name);
	*dst = strndup(p, n);
	if (!*dst)
		return errf(err, errlen, "attribute %s: %s", name, strerror(errno));
	return 0;
}

static int parse(const char *buf, size_t len, struct husk_bootstrap *b, char *err, size_t errlen)
{
	int have_flags = 0;
	struct nlmsghdr hdr;
	struct nlattr a;
	size_t off;

	if (len < sizeof(hdr))
		return errf(err, errlen, "message of %zu bytes is shorter than its %zu-byte header",
			    len, sizeof(hdr));
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.nlmsg_type != HUSK_BOOTSTRAP_MSG)
		return errf(err, errlen, "message type %u, want %u", hdr.nlmsg_type, HUSK_BOOTSTRAP_MSG);
	if (hdr.nlmsg_len < sizeof(hdr) || hdr.nlmsg_len > len)
		return errf(err, errlen, "header says %u bytes, message has %zu", hdr.nlmsg_len, len);
	len = hdr.nlmsg_len;

	for (off = NLMSG_HDRLEN; off < len; off += NLA_ALIGN(a.nla_len)) {
		if (len - off < NLA_HDRLEN)
			return errf(err, errlen, "truncated attribute header at offset %zu", off);
		memcpy(&a, buf + off, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > len - off)
			return errf(err, errlen, "attribute %u at offset %zu: length %u runs past the end of the %zu-byte message",
				    a.nla_type, off, a.nla_len, len);
		if (a.nla_type != HUSK_ATTR_CLONE_FLAGS) {
			if (parse_string(b, a.nla_type, buf + off + NLA_HDRLEN, a.nla_len - NLA_HDRLEN,
					 err, errlen) < 0)
				return -1;
			continue;
		}
		if (have_flags++)
			return errf(err, errlen, "attribute CLONE_FLAGS appears twice");
		if (a.nla_len - NLA_HDRLEN != sizeof(uint32_t))
			return errf(err, errlen, "attribute CLONE_FLAGS: %u bytes, want 4",
				    a.nla_len - NLA_HDRLEN);
		memcpy(&b->clone_flags, buf + off + NLA_HDRLEN, sizeof(uint32_t));
	}

	if (b->clone_flags & ~ALL_NS_FLAGS)
		return errf(err, errlen, "CLONE_FLAGS 0x%x: unknown bits 0x%x", b->clone_flags,
			    b->clone_flags & ~ALL_NS_FLAGS);
	return b->ns_paths ? split_ns_paths(b, err, errlen) : 0;
}

int husk_parse_bootstrap(const char *buf, size_t len, struct husk_bootstrap *out,
			 char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (parse(buf, len, out, err, errlen) == 0)
		return 0;
	husk_bootstrap_free(out);
	return -1;
}

void husk_bootstrap_free(struct husk_bootstrap *b)
{
	free(b->ns_paths);
	free(b->uid_map);
	free(b->gid_map);
	free(b->oom_score_adj);
	free(b->timens_offsets);
	memset(b, 0, sizeof(*b));
}

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

/*
 * debugf: one step, as a JSON line {"level":"debug","msg":"nsexec: ..."} on
 * the log pipe; the parent re-logs it to --log in --log-format when --debug.
 */
static void __attribute__((format(printf, 1, 2))) debugf(const char *fmt, ...)
{
	char msg[512], line[1200] = "{\"level\":\"debug\",\"msg\":\"nsexec: ";
	const char *env = getenv(HUSK_ENV_LOGPIPE);
	size_t n = strlen(line);
	va_list ap;

	if (!env)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *c = msg; *c && n < sizeof(line) - 8; c++) {
		if (*c == '"' || *c == '\\')
			line[n++] = '\\';
		line[n++] = (unsigned char)*c < ' ' ? ' ' : *c;
	}
	memcpy(line + n, "\"}\n", 4);
	if (write(atoi(env), line, n + 3) < 0)
		return; /* best effort */
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
	if (send_frame(HUSK_SYNC_USERMAP_PLS, &pid, sizeof(pid)) < 0)
		die("send USERMAP_PLS: %s", strerror(errno));
	read_or_die(ack, sizeof(ack), "USERMAP_ACK");
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
	for (i = 0; i < N_NS_TYPES; i++)
		if ((flags & ns_types[i].flag) && used < len)
			used += snprintf(buf + used, len - used, "%s%s", used ? "," : "", ns_types[i].name);
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

void husk_nsexec(void)
{
	const char *env = getenv(HUSK_ENV_INITPIPE);
	struct husk_bootstrap b;
	char err[512], *msg, *end;
	int timens_fd = -1;
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
	if ((b.clone_flags & CLONE_NEWTIME) && b.timens_offsets) {
		timens_fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
		if (timens_fd < 0)
			die("open /proc/self/timens_offsets: %s", strerror(errno));
	}
	join_namespaces(&b);
	if (b.clone_flags & CLONE_NEWUSER)
		unshare_user();
	unshare_others(&b, timens_fd);
	husk_bootstrap_free(&b);

	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid > 0) {
		uint32_t p = pid;

		debugf("forked init, pid %d (in the parent's pid namespace)", pid);
		if (send_frame(HUSK_SYNC_PID, &p, sizeof(p)) < 0) {
			int saved = errno;

			kill(pid, SIGKILL);
			die("send PID %d: %s", pid, strerror(saved));
		}
		_exit(0);
	}
	/* The child: the Go runtime starts here and runs `husk init`. */
}
