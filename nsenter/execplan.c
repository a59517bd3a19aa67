/*
 * The parser of an exec's plan, the EXEC_PLAN attribute of the bootstrap
 * message (libcontainer/bootstrap/execplan.go): pure, no syscalls, so the
 * Go tests run it directly (parse.go). It returns -1 and error text;
 * nsexec.c reports that text.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/netlink.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "execproc.h"

#define HAVE(bit) (1u << (bit))
#define REQUIRED (HAVE(HUSK_PLAN_ARGS) | HAVE(HUSK_PLAN_ENV) | HAVE(HUSK_PLAN_CWD) | \
		  HAVE(HUSK_PLAN_UID) | HAVE(HUSK_PLAN_GID) | HAVE(HUSK_PLAN_UMASK) | \
		  HAVE(HUSK_PLAN_CAPS))

static int __attribute__((format(printf, 3, 4)))
perr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Splits n bytes of NUL-terminated strings into a NULL-terminated array. */
static char **split_strings(char *p, size_t n, size_t *count)
{
	size_t i, k = 0;
	char **v;

	for (i = 0; i < n; i++)
		k += p[i] == '\0';
	v = calloc(k + 1, sizeof(*v));
	if (!v)
		return NULL;
	*count = k;
	for (i = 0; i < k; i++) {
		v[i] = p;
		p += strlen(p) + 1;
	}
	return v;
}

static int fixed(uint16_t type, size_t n, size_t want, char *err, size_t errlen)
{
	if (n != want)
		return perr(err, errlen, "attribute %u: %zu bytes, want %zu", type, n, want);
	return 0;
}

/* Stores one attribute (payload p[0:n], a copy that lives in out->buf). */
static int parse_attr(struct husk_exec_plan *out, uint16_t type, char *p, size_t n,
		      char *err, size_t errlen)
{
	char **list;

	switch (type) {
	case HUSK_PLAN_ARGS:
	case HUSK_PLAN_ENV:
		if (n > 0 && p[n - 1] != '\0')
			return perr(err, errlen, "attribute %u: not NUL-terminated", type);
		list = split_strings(p, n, type == HUSK_PLAN_ARGS ? &out->argc : &out->envc);
		if (!list)
			return perr(err, errlen, "attribute %u: %s", type, strerror(errno));
		*(type == HUSK_PLAN_ARGS ? &out->argv : &out->envp) = list;
		return 0;
	case HUSK_PLAN_CWD:
		if (n == 0 || memchr(p, '\0', n))
			return perr(err, errlen, "attribute CWD: empty or with a NUL byte");
		p[n] = '\0'; /* buf has room: see parse_plan */
		out->cwd = p;
		return 0;
	case HUSK_PLAN_UID: return fixed(type, n, 4, err, errlen) ?: (memcpy(&out->uid, p, 4), 0);
	case HUSK_PLAN_GID: return fixed(type, n, 4, err, errlen) ?: (memcpy(&out->gid, p, 4), 0);
	case HUSK_PLAN_UMASK: return fixed(type, n, 4, err, errlen) ?: (memcpy(&out->umask, p, 4), 0);
	case HUSK_PLAN_SECCOMP_FLAGS:
		return fixed(type, n, 4, err, errlen) ?: (memcpy(&out->seccomp_flags, p, 4), 0);
	case HUSK_PLAN_CAPS:
		return fixed(type, n, sizeof(out->caps), err, errlen) ?: (memcpy(&out->caps, p, n), 0);
	case HUSK_PLAN_NNP: out->no_new_privs = 1; return 0;
	case HUSK_PLAN_HOME: out->fill_home = 1; return 0;
	case HUSK_PLAN_GROUPS:
		if (n % 4)
			return perr(err, errlen, "attribute GROUPS: %zu bytes, not whole u32s", n);
		out->groups = malloc(n ? n : 1);
		if (!out->groups)
			return perr(err, errlen, "attribute GROUPS: %s", strerror(errno));
		memcpy(out->groups, p, n);
		out->n_groups = n / 4;
		return 0;
	case HUSK_PLAN_SECCOMP:
		if (n == 0 || n % sizeof(struct sock_filter) || n / sizeof(struct sock_filter) > BPF_MAXINSNS)
			return perr(err, errlen, "attribute SECCOMP: %zu bytes is not a BPF program", n);
		out->filter = malloc(n);
		if (!out->filter)
			return perr(err, errlen, "attribute SECCOMP: %s", strerror(errno));
		memcpy(out->filter, p, n);
		out->n_filter = n / sizeof(struct sock_filter);
		return 0;
	case HUSK_PLAN_RLIMIT:
		if (fixed(type, n, sizeof(struct husk_plan_rlimit), err, errlen) < 0)
			return -1;
		out->rlimits = realloc(out->rlimits, (out->n_rlimits + 1) * sizeof(*out->rlimits));
		if (!out->rlimits)
			return perr(err, errlen, "attribute RLIMIT: %s", strerror(errno));
		memcpy(&out->rlimits[out->n_rlimits++], p, n);
		return 0;
	}
	return perr(err, errlen, "unknown attribute type %u", type);
}

static int parse_plan(const char *buf, size_t len, struct husk_exec_plan *out,
		      char *err, size_t errlen)
{
	uint32_t seen = 0;
	struct nlattr a;
	size_t off;

	/* One spare byte per attribute: CWD gets its NUL in place. */
	out->buf = malloc(len + 1);
	if (!out->buf)
		return perr(err, errlen, "%s", strerror(errno));
	memcpy(out->buf, buf, len);
	out->buf[len] = '\0';
	for (off = 0; off < len; off += NLA_ALIGN(a.nla_len)) {
		if (len - off < NLA_HDRLEN)
			return perr(err, errlen, "truncated attribute header at offset %zu", off);
		memcpy(&a, buf + off, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > len - off)
			return perr(err, errlen, "attribute %u at offset %zu: length %u runs past the end",
				    a.nla_type, off, a.nla_len);
		if (a.nla_type < 32 && (seen & HAVE(a.nla_type)) && a.nla_type != HUSK_PLAN_RLIMIT)
			return perr(err, errlen, "attribute %u appears twice", a.nla_type);
		if (a.nla_type < 32)
			seen |= HAVE(a.nla_type);
		/* CWD's NUL goes where the next attribute's header starts: it
		 * was copied already, and its parsing reads the original. */
		if (parse_attr(out, a.nla_type, out->buf + off + NLA_HDRLEN, a.nla_len - NLA_HDRLEN,
			       err, errlen) < 0)
			return -1;
	}
	if ((seen & REQUIRED) != REQUIRED)
		return perr(err, errlen, "attributes missing: have 0x%x, need 0x%x", seen, REQUIRED);
	if (out->argc == 0)
		return perr(err, errlen, "no args");
	if (out->n_filter && !(seen & HAVE(HUSK_PLAN_SECCOMP_FLAGS)))
		return perr(err, errlen, "SECCOMP without SECCOMP_FLAGS");
	return 0;
}

int husk_parse_exec_plan(const char *buf, size_t len, struct husk_exec_plan *out,
			 char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (parse_plan(buf, len, out, err, errlen) == 0)
		return 0;
	husk_exec_plan_free(out);
	return -1;
}

void husk_exec_plan_free(struct husk_exec_plan *p)
{
	free(p->argv);
	free(p->envp);
	free(p->groups);
	free(p->rlimits);
	free(p->filter);
	free(p->buf);
	memset(p, 0, sizeof(*p));
}
