/*
 * The parser of the PLAN frame (bootstrap.h; Go: libcontainer/bootstrap/
 * plan.go): pure, no syscalls, so the Go tests and fuzz targets run it
 * directly (parse.go). Every field it yields is a slice of its own
 * record's payload: a record's length is checked against what is left of
 * the frame before anything is read, so no input can make one record's
 * bytes read as another's header or field.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"

#define HAVE(t) (1u << (t))
#define MAX_GROUPS 65536  /* NGROUPS_MAX */
#define MAX_RLIMITS 64
#define MAX_MASK_WORDS 128 /* 8192 CPUs or nodes */

/* From the record list (bootstrap.h): the names, and the masks of the
 * records that must be there and of those that may repeat. */
#define NAME_(name, type, flags) [type] = #name,
static const char *const names[32] = { HUSK_PLAN_RECORDS(NAME_) };
#define REQUIRED_(name, type, flags) | ((flags) & HUSK_REC_REQUIRED ? HAVE(type) : 0u)
#define REQUIRED (0u HUSK_PLAN_RECORDS(REQUIRED_))
#define REPEAT_(name, type, flags) | ((flags) & HUSK_REC_REPEAT ? HAVE(type) : 0u)
#define REPEAT (0u HUSK_PLAN_RECORDS(REPEAT_))
#define IN_RANGE_(name, type, flags) _Static_assert((type) > 0 && (type) < 32, "record " #name ": type not 1 to 31");
HUSK_PLAN_RECORDS(IN_RANGE_)

static int __attribute__((format(printf, 3, 4)))
perr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* A record as the parser sees it: its type and payload. */
struct rec {
	uint32_t type;
	char *p;
	size_t n;
};

static int want_size(const struct rec *r, size_t want, char *err, size_t errlen)
{
	if (r->n != want)
		return perr(err, errlen, "record %s: %zu bytes, want %zu", names[r->type], r->n, want);
	return 0;
}

/* Splits a list of NUL-terminated strings into a NULL-terminated array. */
static int string_list(const struct rec *r, char ***out, size_t *count, char *err, size_t errlen)
{
	size_t i, k = 0;
	char **v, *s = r->p;

	if (r->n > 0 && r->p[r->n - 1] != '\0')
		return perr(err, errlen, "record %s: not NUL-terminated", names[r->type]);
	for (i = 0; i < r->n; i++)
		k += r->p[i] == '\0';
	v = calloc(k + 1, sizeof(*v));
	if (!v)
		return perr(err, errlen, "record %s: %s", names[r->type], strerror(errno));
	for (i = 0; i < k; i++) {
		v[i] = s;
		s += strlen(s) + 1;
	}
	*out = v;
	*count = k;
	return 0;
}

/* One string: non-empty, NUL-terminated, no other NUL. */
static int one_string(const struct rec *r, const char **out, char *err, size_t errlen)
{
	if (r->n < 2 || r->p[r->n - 1] != '\0' || memchr(r->p, '\0', r->n - 1))
		return perr(err, errlen, "record %s: want one non-empty NUL-terminated string", names[r->type]);
	*out = r->p;
	return 0;
}

/* A mask of u64 words: 1 to MAX_MASK_WORDS of them. */
static int mask(const struct rec *r, size_t skip, const uint64_t **out, size_t *words,
		char *err, size_t errlen)
{
	size_t n = r->n - skip;

	if (r->n < skip || n == 0 || n % 8 || n / 8 > MAX_MASK_WORDS)
		return perr(err, errlen, "record %s: %zu bytes is not a mask of 1 to %d u64 words",
			    names[r->type], r->n, MAX_MASK_WORDS);
	*out = (const uint64_t *)(r->p + skip);
	*words = n / 8;
	return 0;
}

/* A clean absolute path, as filepath.Clean leaves one: no empty, "." or
 * ".." component, no trailing '/' but for "/" itself. */
static int clean_path(const char *p)
{
	const char *c, *end;

	if (p[0] != '/')
		return 0;
	if (p[1] == '\0')
		return 1;
	for (c = p + 1;; c = end + 1) {
		size_t n;

		end = strchrnul(c, '/');
		n = end - c;
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		if (!*end)
			return 1;
	}
}

/* MASKED, RDONLY: at most HUSK_PLAN_MAX_PATHS clean absolute paths, each
 * shorter than PATH_MAX. */
static int path_list(const struct rec *r, char ***out, size_t *count, char *err, size_t errlen)
{
	if (string_list(r, out, count, err, errlen) < 0)
		return -1;
	if (*count > HUSK_PLAN_MAX_PATHS)
		return perr(err, errlen, "record %s: %zu paths, over %d", names[r->type], *count, HUSK_PLAN_MAX_PATHS);
	for (size_t i = 0; i < *count; i++)
		if (strlen((*out)[i]) >= HUSK_PLAN_MAX_PATH || !clean_path((*out)[i]))
			return perr(err, errlen, "record %s: path %zu is not a clean absolute path under %d bytes",
				    names[r->type], i, HUSK_PLAN_MAX_PATH);
	return 0;
}

/* ROOTFS: u32 flags, then with HUSK_ROOTFS_RO_DEV the /dev mount's name. */
static int rootfs(struct husk_plan *out, const struct rec *r, char *err, size_t errlen)
{
	struct rec name = {.type = r->type, .p = r->p + 4, .n = r->n - 4};

	if (r->n < 4)
		return perr(err, errlen, "record ROOTFS: %zu bytes, want flags", r->n);
	memcpy(&out->rootfs_flags, r->p, 4);
	out->has_rootfs = 1;
	if (out->rootfs_flags & ~(uint32_t)(HUSK_ROOTFS_RO_DEV | HUSK_ROOTFS_RO_ROOT))
		return perr(err, errlen, "record ROOTFS: unknown flags 0x%x", out->rootfs_flags);
	if (!(out->rootfs_flags & HUSK_ROOTFS_RO_DEV))
		return want_size(r, 4, err, errlen);
	if (name.n > HUSK_PLAN_MAX_PATH * 3)
		return perr(err, errlen, "record ROOTFS: the /dev mount's name is over %d bytes", HUSK_PLAN_MAX_PATH * 3);
	return one_string(&name, &out->rodev_name, err, errlen);
}

/* UTS: the host name and the domain name, either empty. */
static int uts(struct husk_plan *out, const struct rec *r, char *err, size_t errlen)
{
	size_t n = 0;

	if (r->n < 2 || r->p[r->n - 1] != '\0')
		return perr(err, errlen, "record UTS: %zu bytes, want two NUL-terminated names", r->n);
	for (size_t i = 0; i < r->n; i++)
		n += r->p[i] == '\0';
	if (n != 2)
		return perr(err, errlen, "record UTS: %zu names, want 2", n);
	out->hostname = r->p;
	out->domainname = r->p + strlen(r->p) + 1;
	if (strlen(out->hostname) >= HUSK_PLAN_MAX_NAME || strlen(out->domainname) >= HUSK_PLAN_MAX_NAME)
		return perr(err, errlen, "record UTS: a name of %d bytes or more", HUSK_PLAN_MAX_NAME);
	out->has_uts = 1;
	return 0;
}

/* SYSCTL: key, value pairs; at most HUSK_PLAN_MAX_SYSCTLS, each key
 * non-empty, key and value shorter than HUSK_PLAN_MAX_SYSCTL. */
static int sysctls(struct husk_plan *out, const struct rec *r, char *err, size_t errlen)
{
	size_t n;

	if (string_list(r, &out->sysctl, &n, err, errlen) < 0)
		return -1;
	if (n % 2)
		return perr(err, errlen, "record SYSCTL: %zu strings, not key and value pairs", n);
	if (n / 2 > HUSK_PLAN_MAX_SYSCTLS)
		return perr(err, errlen, "record SYSCTL: %zu sysctls, over %d", n / 2, HUSK_PLAN_MAX_SYSCTLS);
	for (size_t i = 0; i < n; i++)
		if ((i % 2 == 0 && !out->sysctl[i][0]) || strlen(out->sysctl[i]) >= HUSK_PLAN_MAX_SYSCTL)
			return perr(err, errlen, "record SYSCTL: string %zu empty (a key) or of %d bytes or more", i,
				    HUSK_PLAN_MAX_SYSCTL);
	out->n_sysctls = n / 2;
	return 0;
}

static int add_rlimit(struct husk_plan *out, const struct rec *r, char *err, size_t errlen)
{
	struct husk_plan_rlimit *more;

	if (want_size(r, sizeof(*more), err, errlen) < 0)
		return -1;
	if (out->n_rlimits == MAX_RLIMITS)
		return perr(err, errlen, "record RLIMIT: more than %d", MAX_RLIMITS);
	more = realloc(out->rlimits, (out->n_rlimits + 1) * sizeof(*more));
	if (!more)
		return perr(err, errlen, "record RLIMIT: %s", strerror(errno));
	out->rlimits = more;
	memcpy(&out->rlimits[out->n_rlimits++], r->p, sizeof(*more));
	return 0;
}

/* LISTENER: u32 n, n ascending u32 offsets within the message, the
 * message (at least a byte). */
static int listener(struct husk_plan *out, const struct rec *r, char *err, size_t errlen)
{
	uint32_t n;
	size_t head;

	if (r->n < 4)
		return perr(err, errlen, "record LISTENER: %zu bytes, want a count", r->n);
	memcpy(&n, r->p, 4);
	if (n > HUSK_PLAN_MAX_HOLES)
		return perr(err, errlen, "record LISTENER: %u pid offsets, over %d", n, HUSK_PLAN_MAX_HOLES);
	head = 4 + 4 * (size_t)n;
	if (r->n <= head)
		return perr(err, errlen, "record LISTENER: %zu bytes, want %u offsets and a message", r->n, n);
	out->listener_msg = r->p + head;
	out->listener_len = r->n - head;
	out->n_listener_holes = n;
	for (uint32_t i = 0; i < n; i++) {
		memcpy(&out->listener_holes[i], r->p + 4 + 4 * i, 4);
		if (out->listener_holes[i] > out->listener_len || (i > 0 && out->listener_holes[i] < out->listener_holes[i - 1]))
			return perr(err, errlen, "record LISTENER: pid offset %u past the %zu-byte message or out of order",
				    out->listener_holes[i], out->listener_len);
	}
	return 0;
}

#define U32(field) (want_size(r, 4, err, errlen) ?: (memcpy(&(field), r->p, 4), 0))
#define FIXED(flag, field) (want_size(r, sizeof(field), err, errlen) ?: \
			    ((flag) = 1, memcpy(&(field), r->p, sizeof(field)), 0))

static int store(struct husk_plan *out, const struct rec *r, char *err, size_t errlen)
{
	switch (r->type) {
	case HUSK_PLAN_ARGS: return string_list(r, &out->argv, &out->argc, err, errlen);
	case HUSK_PLAN_ENV: return string_list(r, &out->envp, &out->envc, err, errlen);
	case HUSK_PLAN_CWD: return one_string(r, &out->cwd, err, errlen);
	case HUSK_PLAN_PATH: return one_string(r, &out->path, err, errlen);
	case HUSK_PLAN_APPARMOR: return one_string(r, &out->apparmor, err, errlen);
	case HUSK_PLAN_SELINUX: return one_string(r, &out->selinux, err, errlen);
	case HUSK_PLAN_UID: return U32(out->uid);
	case HUSK_PLAN_GID: return U32(out->gid);
	case HUSK_PLAN_UMASK: return U32(out->umask);
	case HUSK_PLAN_SECCOMP_FLAGS: return U32(out->seccomp_flags);
	case HUSK_PLAN_PERSONALITY: return FIXED(out->has_personality, out->personality);
	case HUSK_PLAN_CAPS:
		if (want_size(r, sizeof(out->caps), err, errlen) < 0)
			return -1;
		memcpy(&out->caps, r->p, sizeof(out->caps));
		if (out->caps.last_cap > 63)
			return perr(err, errlen, "record CAPS: last_cap %u over 63", out->caps.last_cap);
		return 0;
	case HUSK_PLAN_IOPRIO: return FIXED(out->has_ioprio, out->ioprio);
	case HUSK_PLAN_SCHED: return FIXED(out->has_sched, out->sched);
	case HUSK_PLAN_TTY: return FIXED(out->has_tty, out->tty);
	case HUSK_PLAN_NNP: return want_size(r, 0, err, errlen) ?: (out->no_new_privs = 1, 0);
	case HUSK_PLAN_HOME: return want_size(r, 0, err, errlen) ?: (out->fill_home = 1, 0);
	case HUSK_PLAN_KEYRING: return want_size(r, 0, err, errlen) ?: (out->keyring = 1, 0);
	case HUSK_PLAN_GROUPS:
		if (r->n % 4 || r->n / 4 > MAX_GROUPS)
			return perr(err, errlen, "record GROUPS: %zu bytes is not 0 to %d u32 gids", r->n, MAX_GROUPS);
		out->groups = (const uint32_t *)r->p;
		out->n_groups = r->n / 4;
		return 0;
	case HUSK_PLAN_SECCOMP:
		if (r->n == 0 || r->n % sizeof(struct sock_filter) || r->n / sizeof(struct sock_filter) > BPF_MAXINSNS)
			return perr(err, errlen, "record SECCOMP: %zu bytes is not a BPF program", r->n);
		out->filter = (const struct sock_filter *)r->p;
		out->n_filter = r->n / sizeof(struct sock_filter);
		return 0;
	case HUSK_PLAN_AFFINITY: return mask(r, 0, &out->affinity, &out->affinity_words, err, errlen);
	case HUSK_PLAN_MEMPOLICY:
		if (r->n < sizeof(out->mempolicy))
			return perr(err, errlen, "record MEMPOLICY: %zu bytes, want at least %zu", r->n, sizeof(out->mempolicy));
		memcpy(&out->mempolicy, r->p, sizeof(out->mempolicy));
		out->has_mempolicy = 1;
		if (r->n == sizeof(out->mempolicy))
			return 0; /* no nodes */
		return mask(r, sizeof(out->mempolicy), &out->nodes, &out->node_words, err, errlen);
	case HUSK_PLAN_RLIMIT: return add_rlimit(out, r, err, errlen);
	case HUSK_PLAN_LISTENER: return listener(out, r, err, errlen);
	case HUSK_PLAN_ROOTFS: return rootfs(out, r, err, errlen);
	case HUSK_PLAN_MASKED: return path_list(r, &out->masked, &out->n_masked, err, errlen);
	case HUSK_PLAN_RDONLY: return path_list(r, &out->rdonly, &out->n_rdonly, err, errlen);
	case HUSK_PLAN_UTS: return uts(out, r, err, errlen);
	case HUSK_PLAN_SYSCTL: return sysctls(out, r, err, errlen);
	case HUSK_PLAN_MOUNT_LABEL:
		if (r->n > 4096)
			return perr(err, errlen, "record MOUNT_LABEL: %zu bytes, over a page", r->n);
		return one_string(r, &out->mount_label, err, errlen);
	}
	return perr(err, errlen, "unknown record type %u", r->type);
}

static int parse(const char *frame, size_t len, struct husk_plan *out, char *err, size_t errlen)
{
	uint32_t seen = 0, hdr[2];
	struct rec r;
	size_t off, padded;

	if (len > HUSK_PLAN_MAX)
		return perr(err, errlen, "%zu bytes, over the %u-byte limit", len, HUSK_PLAN_MAX);
	out->buf = malloc(len ? len : 1); /* malloc's alignment keeps payloads 8-aligned */
	if (!out->buf)
		return perr(err, errlen, "%s", strerror(errno));
	memcpy(out->buf, frame, len);
	for (off = 0; off < len; off += 8 + padded) {
		if (len - off < 8)
			return perr(err, errlen, "truncated record header at offset %zu", off);
		memcpy(hdr, out->buf + off, 8);
		r.type = hdr[0];
		r.n = hdr[1];
		r.p = out->buf + off + 8;
		if (r.n > len - off - 8)
			return perr(err, errlen, "record %u at offset %zu: length %zu runs past the end of the %zu-byte frame",
				    r.type, off, r.n, len);
		padded = (r.n + 7) & ~(size_t)7;
		if (padded > len - off - 8)
			return perr(err, errlen, "record %u at offset %zu: its padding runs past the end", r.type, off);
		for (size_t i = r.n; i < padded; i++)
			if (r.p[i] != 0)
				return perr(err, errlen, "record %u at offset %zu: padding is not zero", r.type, off);
		if (r.type >= 32 || !names[r.type])
			return perr(err, errlen, "unknown record type %u at offset %zu", r.type, off);
		if ((seen & HAVE(r.type)) && !(REPEAT & HAVE(r.type)))
			return perr(err, errlen, "record %s appears twice", names[r.type]);
		seen |= HAVE(r.type);
		if (store(out, &r, err, errlen) < 0)
			return -1;
	}
	if ((seen & REQUIRED) != REQUIRED)
		return perr(err, errlen, "records missing: have 0x%x, need 0x%x", seen, REQUIRED);
	if (out->argc == 0)
		return perr(err, errlen, "no args");
	if (out->sysctl && !out->has_uts)
		return perr(err, errlen, "SYSCTL without UTS");
	if ((out->masked || out->rdonly || out->mount_label) && !out->has_rootfs)
		return perr(err, errlen, "MASKED, RDONLY or MOUNT_LABEL without ROOTFS");
	if (out->filter && !(seen & HAVE(HUSK_PLAN_SECCOMP_FLAGS)))
		return perr(err, errlen, "SECCOMP without SECCOMP_FLAGS");
	return 0;
}

int husk_parse_plan(const char *buf, size_t len, struct husk_plan *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (parse(buf, len, out, err, errlen) == 0)
		return 0;
	husk_plan_free(out);
	return -1;
}

void husk_plan_free(struct husk_plan *p)
{
	free(p->argv);
	free(p->envp);
	free(p->rlimits);
	free(p->masked);
	free(p->rdonly);
	free(p->sysctl);
	free(p->buf);
	memset(p, 0, sizeof(*p));
}
