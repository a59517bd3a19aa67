/*
 * The mount plan's parser (mounts.h; the format: libcontainer/bootstrap/
 * mountplan.h): pure, no syscalls, as plan.c is for the PLAN frame. A
 * record's length is checked against what is left of the payload before
 * anything is read, every count and string bounded; a bad plan gets an
 * error naming mounts[i] (or devices[i]) and the value. Also the two
 * decisions mounts.c makes without the kernel: the /proc rule of a
 * destination, the split of a mount's data into fsconfig's options.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/mount.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mounts.h"
#include "mounts_int.h"

static int valid_prop(uint32_t p)
{
	switch (p & ~(uint32_t)MS_REC) {
	case MS_SHARED:
	case MS_SLAVE:
	case MS_PRIVATE:
	case MS_UNBINDABLE:
		return 1;
	}
	return 0;
}

/* One MOUNT record: the head, then HUSK_MOUNT_STRINGS strings. */
static int parse_mount(const char *p, size_t n, struct husk_mount *m, char *err, size_t errlen)
{
	const char **strs[HUSK_MOUNT_STRINGS] = { &m->dest, &m->source, &m->fstype, &m->data, &m->fallback,
						  &m->root_label, &m->head };
	static const char *const names[HUSK_MOUNT_STRINGS] = { "destination", "source", "type", "options",
								"fallback", "linux.mountLabel", "error head" };
	const struct husk_mount_head *h = &m->h;
	size_t off = sizeof(m->h);
	int ended = 0;

	if (n < sizeof(m->h))
		return husk_merr(err, errlen, "record MOUNT: %zu bytes, want at least %zu", n, sizeof(m->h));
	memcpy(&m->h, p, sizeof(m->h));
	for (int i = 0; i < HUSK_MOUNT_STRINGS; i++) {
		const char *s = p + off, *nul = memchr(s, '\0', n - off);

		if (!nul)
			return husk_merr(err, errlen, "mounts[%u]: %s: not NUL-terminated", h->index, names[i]);
		size_t max = i == HUSK_MOUNT_STRINGS - 1 ? HUSK_MOUNTS_MAX_HEAD : PATH_BYTES;

		if ((size_t)(nul - s) >= max)
			return husk_merr(err, errlen, "mounts[%u]: %s: %zu bytes, over %zu", h->index, names[i],
				    (size_t)(nul - s), max - 1);
		*strs[i] = s;
		off += nul - s + 1;
	}
	if (off != n)
		return husk_merr(err, errlen, "mounts[%u]: %zu bytes after its strings", h->index, n - off);
	if (h->kind < HUSK_MOUNT_FS || h->kind > HUSK_MOUNT_MKDIR)
		return husk_merr(err, errlen, "mounts[%u]: kind %u", h->index, h->kind);
	if (h->dest < HUSK_DEST_DIR || h->dest > HUSK_DEST_COVERED)
		return husk_merr(err, errlen, "mounts[%u]: destination kind %u", h->index, h->dest);
	if (h->opts & ~(uint32_t)(HUSK_MOUNT_IN_ROOT | HUSK_MOUNT_DETACHED | HUSK_MOUNT_TMPFS_MODE | HUSK_MOUNT_COPYUP |
				  HUSK_MOUNT_LABELLED | HUSK_MOUNT_REPLACE | HUSK_MOUNT_ASK | HUSK_MOUNT_LEGACY))
		return husk_merr(err, errlen, "mounts[%u]: options 0x%x", h->index, h->opts);
	if (h->pad)
		return husk_merr(err, errlen, "mounts[%u]: padding is not zero", h->index);
	if (m->dest[0] != '/')
		return husk_merr(err, errlen, "mounts[%u]: destination \"%s\" is not absolute", h->index, m->dest);
	if ((h->kind == HUSK_MOUNT_BIND_FD && !(h->opts & HUSK_MOUNT_ASK)) != (h->fd >= 0) ||
	    ((h->opts & HUSK_MOUNT_ASK) && (h->kind != HUSK_MOUNT_BIND_FD || h->fd != -1)))
		return husk_merr(err, errlen, "mounts[%u]: fd %d for kind %u", h->index, h->fd, h->kind);
	if ((h->opts & HUSK_MOUNT_LEGACY) &&
	    (h->kind != HUSK_MOUNT_FS || (h->opts & HUSK_MOUNT_COPYUP) || m->root_label[0]))
		return husk_merr(err, errlen, "mounts[%u]: mount(2) for kind %u, options 0x%x", h->index, h->kind, h->opts);
	if (h->kind == HUSK_MOUNT_FS && !m->fstype[0])
		return husk_merr(err, errlen, "mounts[%u]: a filesystem without a type", h->index);
	if (h->kind == HUSK_MOUNT_BIND && m->source[0] != '/')
		return husk_merr(err, errlen, "mounts[%u]: bind source \"%s\" is not absolute", h->index, m->source);
	if (h->kind == HUSK_MOUNT_SYMLINK && (!m->source[0] || !m->data[0] || strchr(m->data, '/') ||
					      strcmp(m->data, ".") == 0 || strcmp(m->data, "..") == 0))
		return husk_merr(err, errlen, "mounts[%u]: symlink \"%s\" -> \"%s\": not a name and a target", h->index,
			    m->data, m->source);
	if (!m->head[0])
		return husk_merr(err, errlen, "mounts[%u]: no error head", h->index);
	if (m->fallback[0] && m->fallback[0] != '/')
		return husk_merr(err, errlen, "mounts[%u]: fallback \"%s\" is not absolute", h->index, m->fallback);
	for (int i = 0; i < HUSK_MOUNTS_MAX_PROP; i++) {
		if (h->prop[i] == 0)
			ended = 1;
		else if (ended || !valid_prop(h->prop[i]))
			return husk_merr(err, errlen, "mounts[%u]: propagation 0x%x", h->index, h->prop[i]);
	}
	return 0;
}

/* DEVICE: the node, then its absolute path, alone. */
static int parse_device(const char *p, size_t n, struct husk_mount *m, char *err, size_t errlen)
{
	const char *path = p + sizeof(m->dev);
	uint32_t type;

	if (n < sizeof(m->dev) + 2)
		return husk_merr(err, errlen, "mount plan: DEVICE: %zu bytes, want a node and a path", n);
	memcpy(&m->dev, p, sizeof(m->dev));
	type = m->dev.mode & S_IFMT;
	if ((type != S_IFCHR && type != S_IFBLK && type != S_IFIFO) || (m->dev.mode & ~(uint32_t)(S_IFMT | 07777)))
		return husk_merr(err, errlen, "devices[%u]: mode 0%o", m->dev.index, m->dev.mode);
	if (path[0] != '/' || p[n - 1] != '\0' || memchr(path, '\0', n - sizeof(m->dev) - 1) || n - sizeof(m->dev) > PATH_BYTES ||
	    p[n - 2] == '/')
		return husk_merr(err, errlen, "devices[%u]: the path is not one absolute path under %d bytes", m->dev.index, PATH_BYTES);
	m->is_device = 1;
	m->dest = path;
	m->source = m->fstype = m->data = m->fallback = m->root_label = m->head = "";
	return 0;
}

/* HIDE: fstype, path pairs (proc or sysfs, an absolute path). */
static int parse_hide(char *p, size_t n, struct husk_mounts *out, char *err, size_t errlen)
{
	size_t k = 0;

	if (n > 0 && p[n - 1] != '\0')
		return husk_merr(err, errlen, "mount plan: HIDE: not NUL-terminated");
	for (size_t i = 0; i < n; i++)
		k += p[i] == '\0';
	if (k % 2 || k / 2 > HUSK_MOUNTS_MAX_COUNT)
		return husk_merr(err, errlen, "mount plan: HIDE: %zu strings, not pairs or over %d", k, HUSK_MOUNTS_MAX_COUNT);
	out->hide = calloc(k + 1, sizeof(*out->hide));
	if (!out->hide)
		return husk_merr(err, errlen, "mount plan: HIDE: %s", strerror(errno));
	for (size_t i = 0; i < k; i++) {
		out->hide[i] = p;
		p += strlen(p) + 1;
		if (i % 2 == 0 && strcmp(out->hide[i], "proc") != 0 && strcmp(out->hide[i], "sysfs") != 0)
			return husk_merr(err, errlen, "mount plan: HIDE: type \"%s\"", out->hide[i]);
		if (i % 2 == 1 && (out->hide[i][0] != '/' || strlen(out->hide[i]) >= PATH_BYTES))
			return husk_merr(err, errlen, "mount plan: HIDE: \"%s\" is not an absolute path", out->hide[i]);
	}
	out->n_hide = k / 2;
	return 0;
}

/* PREPARE: the propagation flags, then the mount points' paths. */
static int parse_prepare(const char *p, size_t n, struct husk_mounts *out, char *err, size_t errlen)
{
	struct husk_mount_prepare *pr = &out->prepare;
	size_t off = sizeof(*pr);

	if (n < sizeof(*pr))
		return husk_merr(err, errlen, "mount plan: PREPARE: %zu bytes, want at least %zu", n, sizeof(*pr));
	memcpy(pr, p, sizeof(*pr));
	if (pr->n > HUSK_MOUNTS_MAX_POINTS)
		return husk_merr(err, errlen, "mount plan: PREPARE: %u mount points, over %d", pr->n, HUSK_MOUNTS_MAX_POINTS);
	if (!valid_prop(pr->root_flags) || (pr->after && !valid_prop(pr->after)) || pr->no_pivot > 1)
		return husk_merr(err, errlen, "mount plan: PREPARE: linux.rootfsPropagation 0x%x, then 0x%x", pr->root_flags,
			    pr->after);
	for (uint32_t i = 0; i < pr->n; i++) {
		const char *s = p + off, *nul = memchr(s, '\0', n - off);

		if (pr->flags[i] != MS_PRIVATE && pr->flags[i] != MS_SLAVE)
			return husk_merr(err, errlen, "mount plan: PREPARE: propagation 0x%x", pr->flags[i]);
		if (!nul || s[0] != '/' || (size_t)(nul - s) >= PATH_BYTES)
			return husk_merr(err, errlen, "mount plan: PREPARE: mount point %u is not an absolute path", i);
		out->points[i] = s;
		off += nul - s + 1;
	}
	if (off != n)
		return husk_merr(err, errlen, "mount plan: PREPARE: %zu bytes after its paths", n - off);
	out->has_prepare = 1;
	return 0;
}

static int parse_mounts(const char *frame, size_t len, struct husk_mounts *out, char *err, size_t errlen)
{
	uint32_t hdr[2];
	size_t off, padded, n;

	if (len > HUSK_MOUNTS_MAX)
		return husk_merr(err, errlen, "mount plan: %zu bytes, over the %u-byte limit", len, HUSK_MOUNTS_MAX);
	out->buf = malloc(len ? len : 1);
	if (!out->buf)
		return husk_merr(err, errlen, "mount plan: %s", strerror(errno));
	memcpy(out->buf, frame, len);
	for (off = 0; off < len; off += 8 + padded) {
		char *p = out->buf + off + 8;

		if (len - off < 8)
			return husk_merr(err, errlen, "mount plan: truncated record header at offset %zu", off);
		memcpy(hdr, out->buf + off, 8);
		n = hdr[1];
		if (n > len - off - 8)
			return husk_merr(err, errlen, "mount plan: record %u at offset %zu: length %zu runs past the end",
				    hdr[0], off, n);
		padded = (n + 7) & ~(size_t)7;
		if (padded > len - off - 8)
			return husk_merr(err, errlen, "mount plan: record %u at offset %zu: its padding runs past the end",
				    hdr[0], off);
		for (size_t i = n; i < padded; i++)
			if (p[i] != 0)
				return husk_merr(err, errlen, "mount plan: record %u at offset %zu: padding is not zero",
					    hdr[0], off);
		if (off == 0) {
			if (hdr[0] != HUSK_MOUNTS_ROOT)
				return husk_merr(err, errlen, "mount plan: record %u first, want ROOT", hdr[0]);
			if (n < 2 || n > PATH_BYTES || p[0] != '/' || p[n - 1] != '\0' || memchr(p, '\0', n - 1))
				return husk_merr(err, errlen, "mount plan: ROOT: want one absolute path under %d bytes",
					    PATH_BYTES);
			out->root = p;
			continue;
		}
		if (hdr[0] == HUSK_MOUNTS_HIDE && out->has_prepare && out->prepare.no_pivot && !out->hide && out->n == 0) {
			if (parse_hide(p, n, out, err, errlen) < 0)
				return -1;
			continue;
		}
		if (hdr[0] == HUSK_MOUNTS_PREPARE && !out->has_prepare && out->n == 0) {
			if (parse_prepare(p, n, out, err, errlen) < 0)
				return -1;
			continue;
		}
		if (hdr[0] != HUSK_MOUNTS_MOUNT && hdr[0] != HUSK_MOUNTS_DEVICE)
			return husk_merr(err, errlen, "mount plan: record %u at offset %zu, want MOUNT or DEVICE", hdr[0], off);
		if (out->n == HUSK_MOUNTS_MAX_COUNT)
			return husk_merr(err, errlen, "mount plan: more than %d mounts", HUSK_MOUNTS_MAX_COUNT);
		if (out->n % 64 == 0) {
			struct husk_mount *more = realloc(out->m, (out->n + 64) * sizeof(*more));

			if (!more)
				return husk_merr(err, errlen, "mount plan: %s", strerror(errno));
			out->m = more;
		}
		memset(&out->m[out->n], 0, sizeof(out->m[0]));
		if (hdr[0] == HUSK_MOUNTS_DEVICE ? parse_device(p, n, &out->m[out->n], err, errlen) < 0 :
						   parse_mount(p, n, &out->m[out->n], err, errlen) < 0)
			return -1;
		out->n++;
	}
	if (!out->root)
		return husk_merr(err, errlen, "mount plan: no ROOT record");
	if (out->has_prepare && out->prepare.no_pivot && !out->hide)
		return husk_merr(err, errlen, "mount plan: --no-pivot without a HIDE record");
	return 0;
}

int husk_parse_mounts(const char *buf, size_t len, struct husk_mounts *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (parse_mounts(buf, len, out, err, errlen) == 0)
		return 0;
	husk_mounts_free(out);
	return -1;
}

void husk_mounts_free(struct husk_mounts *p)
{
	free(p->hide);
	free(p->m);
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

/* ------------------------------------------------------------- decisions */

/* configs/procmount.go's procFiles: the files lxcfs emulates. */
static const char *const proc_files[] = {
	"/proc/cpuinfo", "/proc/diskstats", "/proc/meminfo", "/proc/stat", "/proc/swaps", "/proc/uptime",
	"/proc/loadavg", "/proc/slabinfo", "/proc/net/dev", "/proc/sys/kernel/ns_last_pid",
	"/proc/sys/crypto/fips_enabled", NULL,
};

int husk_mount_proc_check(const char *dest, const char *fstype, int bind, char *err, size_t errlen)
{
	const char *rel;

	if (strncmp(dest, "/proc", 5) != 0 || (dest[5] != '\0' && dest[5] != '/'))
		return 0;
	rel = dest + 5;
	if (*rel == '\0') {
		if (bind || strcmp(fstype, "proc") == 0)
			return 0;
		return husk_merr(err, errlen, "\"%s\" cannot be mounted because it is not of type proc", dest);
	}
	for (int i = 0; proc_files[i]; i++)
		if (strcmp(dest, proc_files[i]) == 0)
			return 0;
	return husk_merr(err, errlen, "\"%s\" cannot be mounted because it is inside /proc", dest);
}

/* Splits data at the commas outside double quotes into NUL-terminated
 * options in out, dropping empty ones and the quotes around a value
 * (launch.SplitMountData is the same in Go). Returns the count, or -1
 * when out is too small. */
int husk_split_mount_data(const char *data, char *out, size_t outlen)
{
	size_t used = 0, start = 0;
	int quoted = 0, count = 0;

	for (const char *c = data;; c++) {
		if (*c == '"')
			quoted = !quoted;
		if (*c != '\0' && (*c != ',' || quoted)) {
			if (used + 1 >= outlen)
				return -1;
			out[used++] = *c;
			continue;
		}
		if (used > start) {
			char *o = out + start, *eq = memchr(o, '=', used - start);
			size_t vlen = eq ? used - start - (eq + 1 - o) : 0;

			if (eq && vlen >= 2 && eq[1] == '"' && out[used - 1] == '"') {
				memmove(eq + 1, eq + 2, vlen - 2);
				used -= 2;
			}
			out[used++] = '\0';
			start = used;
			count++;
		}
		if (*c == '\0')
			return count;
	}
}
