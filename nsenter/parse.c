/*
 * The parser of the bootstrap message (libcontainer/bootstrap/protocol.go)
 * for nsexec.c: pure, no syscalls, so the Go tests run it directly
 * (parse.go). It returns -1 and error text; nsexec.c reports that text.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/netlink.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "nsexec.h"

const struct husk_ns_type husk_ns_types[] = {
	{"user", CLONE_NEWUSER}, {"mnt", CLONE_NEWNS},  {"uts", CLONE_NEWUTS},
	{"ipc", CLONE_NEWIPC},   {"pid", CLONE_NEWPID}, {"net", CLONE_NEWNET},
	{"cgroup", CLONE_NEWCGROUP}, {"time", CLONE_NEWTIME},
};
const size_t husk_n_ns_types = sizeof(husk_ns_types) / sizeof(husk_ns_types[0]);
#define ALL_NS_FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | \
		      CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP | CLONE_NEWTIME)

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
	for (i = 0; i < husk_n_ns_types; i++) {
		if (strcmp(entry, husk_ns_types[i].name) == 0) {
			b->ns[b->n_ns].name = husk_ns_types[i].name;
			b->ns[b->n_ns].flag = husk_ns_types[i].flag;
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

/* CGROUP_TASKS: native-endian u32 fd numbers, at most HUSK_MAX_CGROUPS. */
static int parse_cgroup_tasks(struct husk_bootstrap *b, const char *p, size_t n,
			      char *err, size_t errlen)
{
	uint32_t fd;
	size_t i;

	if (b->n_cgroup_tasks)
		return errf(err, errlen, "attribute CGROUP_TASKS appears twice");
	if (n == 0 || n % sizeof(fd) || n / sizeof(fd) > HUSK_MAX_CGROUPS)
		return errf(err, errlen, "attribute CGROUP_TASKS: %zu bytes, want 4 per fd, 1 to %d fds",
			    n, HUSK_MAX_CGROUPS);
	for (i = 0; i < n / sizeof(fd); i++) {
		memcpy(&fd, p + i * sizeof(fd), sizeof(fd));
		if (fd < 3 || fd > INT_MAX)
			return errf(err, errlen, "attribute CGROUP_TASKS: fd %u out of range", fd);
		b->cgroup_tasks[i] = fd;
	}
	b->n_cgroup_tasks = i;
	return 0;
}

/* AFFINITY: native-endian u64 words of a CPU mask, 1 to 128 of them. */
static int parse_affinity(struct husk_bootstrap *b, const char *p, size_t n,
			  char *err, size_t errlen)
{
	if (b->affinity)
		return errf(err, errlen, "attribute AFFINITY appears twice");
	if (n == 0 || n % 8 || n / 8 > 128)
		return errf(err, errlen, "attribute AFFINITY: %zu bytes, want 8 per u64 word, 1 to 128 words", n);
	b->affinity = malloc(n);
	if (!b->affinity)
		return errf(err, errlen, "attribute AFFINITY: %s", strerror(errno));
	memcpy(b->affinity, p, n);
	b->affinity_words = n / 8;
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
		if (a.nla_type == HUSK_ATTR_AFFINITY) {
			if (parse_affinity(b, buf + off + NLA_HDRLEN, a.nla_len - NLA_HDRLEN,
					   err, errlen) < 0)
				return -1;
			continue;
		}
		if (a.nla_type == HUSK_ATTR_CGROUP_TASKS) {
			if (parse_cgroup_tasks(b, buf + off + NLA_HDRLEN, a.nla_len - NLA_HDRLEN,
					       err, errlen) < 0)
				return -1;
			continue;
		}
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
	free(b->affinity);
	memset(b, 0, sizeof(*b));
}
