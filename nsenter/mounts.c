/*
 * The launcher's mounts (mounts.h): the mount plan parsed (as plan.c
 * parses the PLAN frame: every length and count checked before anything
 * is read), then each mount made inside the root, in order, as Go init
 * makes it today (libcontainer/rootfs: mount.go, bind.go, resolve.go,
 * tmpfs.go), with the new mount API:
 *
 *   destination  resolved as SecureJoin does (symlinks followed with the
 *                root as "/", each looked up by openat2 RESOLVE_IN_ROOT |
 *                RESOLVE_NO_MAGICLINKS), refused inside /proc but where
 *                runc allows (configs/procmount.go), then walked again
 *                component by component from the root's fd without
 *                following anything (O_PATH|O_NOFOLLOW), what is missing
 *                made (mkdirat, mknodat);
 *   filesystem   fsopen, fsconfig (the source, each option of the data,
 *                the superblock flags), fsmount with the per-mount flags;
 *   bind         the source opened (inside the root with openat2
 *                RESOLVE_IN_ROOT, or the host's path, or the parent's fd),
 *                cloned with open_tree(OPEN_TREE_CLONE [|AT_RECURSIVE]);
 *   then         move_mount onto the destination's fd, a bind's flags with
 *                mount_setattr (runc's exact remount, locked flags kept),
 *                the recursive attributes, the propagation.
 *
 * Every kernel call goes through husk_k (kernel.h), so the stepfake tests
 * check the calls, their order and each error path without root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kernel.h"
#include "launch.h"
#include "mounts.h"

#ifndef MNT_DETACH
#define MNT_DETACH 2 /* umount2(2)'s; <sys/mount.h> clashes with <linux/mount.h> */
#endif
#define PATH_BYTES HUSK_MOUNTS_MAX_STR
#define MAX_LINKS 255 /* SecureJoin's */

/* ---------------------------------------------------------------- parse */

static int __attribute__((format(printf, 3, 4))) perr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

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
		return perr(err, errlen, "record MOUNT: %zu bytes, want at least %zu", n, sizeof(m->h));
	memcpy(&m->h, p, sizeof(m->h));
	for (int i = 0; i < HUSK_MOUNT_STRINGS; i++) {
		const char *s = p + off, *nul = memchr(s, '\0', n - off);

		if (!nul)
			return perr(err, errlen, "mounts[%u]: %s: not NUL-terminated", h->index, names[i]);
		size_t max = i == HUSK_MOUNT_STRINGS - 1 ? HUSK_MOUNTS_MAX_HEAD : PATH_BYTES;

		if ((size_t)(nul - s) >= max)
			return perr(err, errlen, "mounts[%u]: %s: %zu bytes, over %zu", h->index, names[i],
				    (size_t)(nul - s), max - 1);
		*strs[i] = s;
		off += nul - s + 1;
	}
	if (off != n)
		return perr(err, errlen, "mounts[%u]: %zu bytes after its strings", h->index, n - off);
	if (h->kind < HUSK_MOUNT_FS || h->kind > HUSK_MOUNT_MKDIR)
		return perr(err, errlen, "mounts[%u]: kind %u", h->index, h->kind);
	if (h->dest < HUSK_DEST_DIR || h->dest > HUSK_DEST_COVERED)
		return perr(err, errlen, "mounts[%u]: destination kind %u", h->index, h->dest);
	if (h->opts & ~(uint32_t)(HUSK_MOUNT_IN_ROOT | HUSK_MOUNT_DETACHED | HUSK_MOUNT_TMPFS_MODE | HUSK_MOUNT_COPYUP |
				  HUSK_MOUNT_LABELLED | HUSK_MOUNT_REPLACE))
		return perr(err, errlen, "mounts[%u]: options 0x%x", h->index, h->opts);
	if (h->pad)
		return perr(err, errlen, "mounts[%u]: padding is not zero", h->index);
	if (m->dest[0] != '/')
		return perr(err, errlen, "mounts[%u]: destination \"%s\" is not absolute", h->index, m->dest);
	if ((h->kind == HUSK_MOUNT_BIND_FD) != (h->fd >= 0))
		return perr(err, errlen, "mounts[%u]: fd %d for kind %u", h->index, h->fd, h->kind);
	if (h->kind == HUSK_MOUNT_FS && !m->fstype[0])
		return perr(err, errlen, "mounts[%u]: a filesystem without a type", h->index);
	if (h->kind == HUSK_MOUNT_BIND && m->source[0] != '/')
		return perr(err, errlen, "mounts[%u]: bind source \"%s\" is not absolute", h->index, m->source);
	if (h->kind == HUSK_MOUNT_SYMLINK && (!m->source[0] || !m->data[0] || strchr(m->data, '/') ||
					      strcmp(m->data, ".") == 0 || strcmp(m->data, "..") == 0))
		return perr(err, errlen, "mounts[%u]: symlink \"%s\" -> \"%s\": not a name and a target", h->index,
			    m->data, m->source);
	if (!m->head[0])
		return perr(err, errlen, "mounts[%u]: no error head", h->index);
	if (m->fallback[0] && m->fallback[0] != '/')
		return perr(err, errlen, "mounts[%u]: fallback \"%s\" is not absolute", h->index, m->fallback);
	for (int i = 0; i < HUSK_MOUNTS_MAX_PROP; i++) {
		if (h->prop[i] == 0)
			ended = 1;
		else if (ended || !valid_prop(h->prop[i]))
			return perr(err, errlen, "mounts[%u]: propagation 0x%x", h->index, h->prop[i]);
	}
	return 0;
}

/* DEVICE: the node, then its absolute path, alone. */
static int parse_device(const char *p, size_t n, struct husk_mount *m, char *err, size_t errlen)
{
	const char *path = p + sizeof(m->dev);
	uint32_t type;

	if (n < sizeof(m->dev) + 2)
		return perr(err, errlen, "mount plan: DEVICE: %zu bytes, want a node and a path", n);
	memcpy(&m->dev, p, sizeof(m->dev));
	type = m->dev.mode & S_IFMT;
	if ((type != S_IFCHR && type != S_IFBLK && type != S_IFIFO) || (m->dev.mode & ~(uint32_t)(S_IFMT | 07777)))
		return perr(err, errlen, "devices[%u]: mode 0%o", m->dev.index, m->dev.mode);
	if (path[0] != '/' || p[n - 1] != '\0' || memchr(path, '\0', n - sizeof(m->dev) - 1) || n - sizeof(m->dev) > PATH_BYTES ||
	    p[n - 2] == '/')
		return perr(err, errlen, "devices[%u]: the path is not one absolute path under %d bytes", m->dev.index, PATH_BYTES);
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
		return perr(err, errlen, "mount plan: HIDE: not NUL-terminated");
	for (size_t i = 0; i < n; i++)
		k += p[i] == '\0';
	if (k % 2 || k / 2 > HUSK_MOUNTS_MAX_COUNT)
		return perr(err, errlen, "mount plan: HIDE: %zu strings, not pairs or over %d", k, HUSK_MOUNTS_MAX_COUNT);
	out->hide = calloc(k + 1, sizeof(*out->hide));
	if (!out->hide)
		return perr(err, errlen, "mount plan: HIDE: %s", strerror(errno));
	for (size_t i = 0; i < k; i++) {
		out->hide[i] = p;
		p += strlen(p) + 1;
		if (i % 2 == 0 && strcmp(out->hide[i], "proc") != 0 && strcmp(out->hide[i], "sysfs") != 0)
			return perr(err, errlen, "mount plan: HIDE: type \"%s\"", out->hide[i]);
		if (i % 2 == 1 && (out->hide[i][0] != '/' || strlen(out->hide[i]) >= PATH_BYTES))
			return perr(err, errlen, "mount plan: HIDE: \"%s\" is not an absolute path", out->hide[i]);
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
		return perr(err, errlen, "mount plan: PREPARE: %zu bytes, want at least %zu", n, sizeof(*pr));
	memcpy(pr, p, sizeof(*pr));
	if (pr->n > HUSK_MOUNTS_MAX_POINTS)
		return perr(err, errlen, "mount plan: PREPARE: %u mount points, over %d", pr->n, HUSK_MOUNTS_MAX_POINTS);
	if (!valid_prop(pr->root_flags) || (pr->after && !valid_prop(pr->after)) || pr->no_pivot > 1)
		return perr(err, errlen, "mount plan: PREPARE: linux.rootfsPropagation 0x%x, then 0x%x", pr->root_flags,
			    pr->after);
	for (uint32_t i = 0; i < pr->n; i++) {
		const char *s = p + off, *nul = memchr(s, '\0', n - off);

		if (pr->flags[i] != MS_PRIVATE && pr->flags[i] != MS_SLAVE)
			return perr(err, errlen, "mount plan: PREPARE: propagation 0x%x", pr->flags[i]);
		if (!nul || s[0] != '/' || (size_t)(nul - s) >= PATH_BYTES)
			return perr(err, errlen, "mount plan: PREPARE: mount point %u is not an absolute path", i);
		out->points[i] = s;
		off += nul - s + 1;
	}
	if (off != n)
		return perr(err, errlen, "mount plan: PREPARE: %zu bytes after its paths", n - off);
	out->has_prepare = 1;
	return 0;
}

static int parse_mounts(const char *frame, size_t len, struct husk_mounts *out, char *err, size_t errlen)
{
	uint32_t hdr[2];
	size_t off, padded, n;

	if (len > HUSK_MOUNTS_MAX)
		return perr(err, errlen, "mount plan: %zu bytes, over the %u-byte limit", len, HUSK_MOUNTS_MAX);
	out->buf = malloc(len ? len : 1);
	if (!out->buf)
		return perr(err, errlen, "mount plan: %s", strerror(errno));
	memcpy(out->buf, frame, len);
	for (off = 0; off < len; off += 8 + padded) {
		char *p = out->buf + off + 8;

		if (len - off < 8)
			return perr(err, errlen, "mount plan: truncated record header at offset %zu", off);
		memcpy(hdr, out->buf + off, 8);
		n = hdr[1];
		if (n > len - off - 8)
			return perr(err, errlen, "mount plan: record %u at offset %zu: length %zu runs past the end",
				    hdr[0], off, n);
		padded = (n + 7) & ~(size_t)7;
		if (padded > len - off - 8)
			return perr(err, errlen, "mount plan: record %u at offset %zu: its padding runs past the end",
				    hdr[0], off);
		for (size_t i = n; i < padded; i++)
			if (p[i] != 0)
				return perr(err, errlen, "mount plan: record %u at offset %zu: padding is not zero",
					    hdr[0], off);
		if (off == 0) {
			if (hdr[0] != HUSK_MOUNTS_ROOT)
				return perr(err, errlen, "mount plan: record %u first, want ROOT", hdr[0]);
			if (n < 2 || n > PATH_BYTES || p[0] != '/' || p[n - 1] != '\0' || memchr(p, '\0', n - 1))
				return perr(err, errlen, "mount plan: ROOT: want one absolute path under %d bytes",
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
			return perr(err, errlen, "mount plan: record %u at offset %zu, want MOUNT or DEVICE", hdr[0], off);
		if (out->n == HUSK_MOUNTS_MAX_COUNT)
			return perr(err, errlen, "mount plan: more than %d mounts", HUSK_MOUNTS_MAX_COUNT);
		if (out->n % 64 == 0) {
			struct husk_mount *more = realloc(out->m, (out->n + 64) * sizeof(*more));

			if (!more)
				return perr(err, errlen, "mount plan: %s", strerror(errno));
			out->m = more;
		}
		memset(&out->m[out->n], 0, sizeof(out->m[0]));
		if (hdr[0] == HUSK_MOUNTS_DEVICE ? parse_device(p, n, &out->m[out->n], err, errlen) < 0 :
						   parse_mount(p, n, &out->m[out->n], err, errlen) < 0)
			return -1;
		out->n++;
	}
	if (!out->root)
		return perr(err, errlen, "mount plan: no ROOT record");
	if (out->has_prepare && out->prepare.no_pivot && !out->hide)
		return perr(err, errlen, "mount plan: --no-pivot without a HIDE record");
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
		return perr(err, errlen, "\"%s\" cannot be mounted because it is not of type proc", dest);
	}
	for (int i = 0; proc_files[i]; i++)
		if (strcmp(dest, proc_files[i]) == 0)
			return 0;
	return perr(err, errlen, "\"%s\" cannot be mounted because it is inside /proc", dest);
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

/* ------------------------------------------------------------- executor */

/* Go's %q for the ASCII a mount's names are made of. */
static const char *quote(const char *s, char *buf, size_t n)
{
	size_t used = 0;

	buf[used++] = '"';
	for (; *s && used + 6 < n; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			used += snprintf(buf + used, n - used, "\\%c", c);
		else if (c == '\n')
			used += snprintf(buf + used, n - used, "\\n");
		else if (c == '\t')
			used += snprintf(buf + used, n - used, "\\t");
		else if (c < 0x20 || c == 0x7f)
			used += snprintf(buf + used, n - used, "\\x%02x", c);
		else
			buf[used++] = c;
	}
	buf[used++] = '"';
	buf[used] = '\0';
	return buf;
}


/* One run of the plan: the root's fd and where the reason goes. */
struct run {
	const struct husk_mounts *p;
	int root;
	char why[1024]; /* what went wrong, after "mounts[i]: error mounting ..." */
};

static int __attribute__((format(printf, 2, 3))) fail(struct run *r, const char *fmt, ...)
{
	va_list ap;
	int e = errno; /* kept: a caller may look at it (EPERM) */

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	errno = e;
	return -1;
}

static void close_keep_errno(int fd)
{
	int e = errno;

	if (fd >= 0)
		husk_k->close(fd);
	errno = e;
}

/* What a missing path is made as (Go's rootfs create). */
enum create { MUST_EXIST, MAKE_DIR, MAKE_FILE, REAL_DIR };

/* path cleaned lexically into out (filepath.Clean("/" + path)): "." and
 * empty components dropped, ".." never above "/". */
static void clean_path(const char *path, char *out)
{
	char tmp[PATH_BYTES];
	size_t used = 0;

	snprintf(tmp, sizeof(tmp), "%s", path);
	out[0] = '\0';
	for (char *s, *part = strtok_r(tmp, "/", &s); part; part = strtok_r(NULL, "/", &s)) {
		if (strcmp(part, ".") == 0)
			continue;
		if (strcmp(part, "..") == 0) {
			while (used > 0 && out[--used] != '/')
				;
			out[used] = '\0';
			continue;
		}
		used += snprintf(out + used, PATH_BYTES - used, "/%s", part);
	}
	if (used == 0)
		snprintf(out, PATH_BYTES, "/");
}

/*
 * Resolves path inside the root as SecureJoin does: each component
 * looked up (openat2 RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS, the last one
 * not followed); a symlink's target replaces it, with the root as "/"
 * for an absolute one; ".." never above the root; a missing component
 * taken as it is. out gets the clean container path ("/" or "/a/b").
 */
static int secure_join(struct run *r, const char *path, char *out)
{
	char rem[2 * PATH_BYTES], target[PATH_BYTES], next[PATH_BYTES];
	struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	size_t cur = 0; /* out[0:cur] is the path so far, "" for the root */
	int links = 0;

	snprintf(rem, sizeof(rem), "%s", path);
	out[0] = '\0';
	for (char *part = rem; *part;) {
		char *slash = strchr(part, '/'), *after = slash ? slash + 1 : part + strlen(part);
		struct stat st;
		ssize_t n;
		int fd;

		if (slash)
			*slash = '\0';
		if (part[0] == '\0' || strcmp(part, ".") == 0) {
			part = after;
			continue;
		}
		if (strcmp(part, "..") == 0) {
			while (cur > 0 && out[--cur] != '/')
				;
			out[cur] = '\0';
			part = after;
			continue;
		}
		if (cur + 1 + strlen(part) >= PATH_BYTES)
			return fail(r, "resolve \"%s\" in rootfs: %s", path, husk_errtext(ENAMETOOLONG));
		snprintf(next, sizeof(next), "%s/%s", out, part);
		fd = husk_k->openat2(r->root, next, &how, sizeof(how));
		if (fd < 0 && errno != ENOENT && errno != ENOTDIR)
			return fail(r, "resolve \"%s\" in rootfs: openat2 %s: %s", path, next, husk_errtext(errno));
		if (fd >= 0 && husk_k->fstat(fd, &st) < 0) {
			close_keep_errno(fd);
			return fail(r, "resolve \"%s\" in rootfs: fstat %s: %s", path, next, husk_errtext(errno));
		}
		if (fd < 0 || !S_ISLNK(st.st_mode)) {
			close_keep_errno(fd);
			memcpy(out, next, strlen(next) + 1);
			cur = strlen(out);
			part = after;
			continue;
		}
		n = ++links > MAX_LINKS ? (errno = ELOOP, -1) : husk_k->readlinkat(fd, "", target, sizeof(target));
		close_keep_errno(fd);
		if (n < 0 || (size_t)n >= sizeof(target))
			return fail(r, "resolve \"%s\" in rootfs: readlink %s: %s", path, next,
				    husk_errtext(n < 0 ? errno : ENAMETOOLONG));
		target[n] = '\0';
		if (n + 1 + strlen(after) >= sizeof(rem) - 1)
			return fail(r, "resolve \"%s\" in rootfs: %s", path, husk_errtext(ENAMETOOLONG));
		memmove(rem + n + 1, after, strlen(after) + 1);
		memcpy(rem, target, n);
		rem[n] = '/';
		if (target[0] == '/') {
			cur = 0;
			out[0] = '\0';
		}
		part = rem;
	}
	if (cur == 0)
		snprintf(out, PATH_BYTES, "/");
	return 0;
}

/* Opens name in dir with O_PATH|O_NOFOLLOW, making it if missing as c
 * says (Go's rootfs step): an fd, or -1 with errno and the call's name. */
static int step(int dir, const char *name, int last, enum create c, const char **call)
{
	int flags = O_PATH | O_NOFOLLOW | O_CLOEXEC, fd, rc;
	struct stat st;

	if (!last || c == MAKE_DIR || c == REAL_DIR)
		flags |= O_DIRECTORY;
	*call = "openat";
	fd = husk_k->openat(dir, name, flags, 0);
	if (fd < 0 && errno == ENOENT && c != MUST_EXIST) {
		if (last && c == MAKE_FILE) {
			*call = "mknodat";
			rc = husk_k->mknodat(dir, name, S_IFREG | 0644, 0);
		} else {
			*call = "mkdirat";
			rc = husk_k->mkdirat(dir, name, 0755);
		}
		if (rc < 0 && errno != EEXIST)
			return -1;
		*call = "openat";
		fd = husk_k->openat(dir, name, flags, 0);
	}
	if (fd < 0 || (flags & O_DIRECTORY))
		return fd; /* a symlink fails O_DIRECTORY with ENOTDIR */
	*call = "fstat";
	if (husk_k->fstat(fd, &st) < 0) {
		close_keep_errno(fd);
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		husk_k->close(fd);
		*call = "became a symlink while resolving";
		errno = ELOOP;
		return -1;
	}
	return fd;
}

/*
 * Opens the container path path inside the root (Go's rootDir.open):
 * resolved by secure_join, but for REAL_DIR (no symlink at all), then
 * walked from the root's fd one component at a time, making what is
 * missing as c says. known, when not NULL, is what secure_join gave for
 * path with nothing mounted since (the mount's own check of /proc): the
 * walk takes it as it is.
 */
static int open_in_root(struct run *r, const char *path, enum create c, const char *known)
{
	char clean[PATH_BYTES], walk[PATH_BYTES], where[PATH_BYTES];
	const char *call;
	int dir, fd;

	if (c == REAL_DIR)
		clean_path(path, clean);
	else if (known)
		snprintf(clean, sizeof(clean), "%s", known);
	else if (secure_join(r, path, clean) < 0)
		return -1;
	dir = husk_k->openat(r->root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
	if (dir < 0)
		return fail(r, "open the rootfs: openat: %s", husk_errtext(errno));
	snprintf(walk, sizeof(walk), "%s", clean + 1);
	where[0] = '\0';
	for (char *s, *name = strtok_r(walk, "/", &s), *next; name; name = next) {
		next = strtok_r(NULL, "/", &s);
		strncat(where, "/", sizeof(where) - strlen(where) - 1);
		strncat(where, name, sizeof(where) - strlen(where) - 1);
		fd = step(dir, name, next == NULL, c, &call);
		close_keep_errno(dir);
		if (fd < 0 && c == REAL_DIR && (errno == ENOTDIR || errno == ELOOP))
			return fail(r, "must be mounted on ordinary directory, %s is not one: %s: %s", where, call,
				    husk_errtext(errno));
		if (fd < 0)
			return fail(r, "%s: %s: %s", where, call, husk_errtext(errno));
		dir = fd;
	}
	return dir;
}

/* MS_* per-mount flags as MOUNT_ATTR_* (the atime mode apart). */
static const struct {
	uint32_t ms;
	uint64_t attr;
	const char *name;
	unsigned long st;
} flag_map[] = {
	{ MS_RDONLY, MOUNT_ATTR_RDONLY, "ro", ST_RDONLY },
	{ MS_NOSUID, MOUNT_ATTR_NOSUID, "nosuid", ST_NOSUID },
	{ MS_NODEV, MOUNT_ATTR_NODEV, "nodev", ST_NODEV },
	{ MS_NOEXEC, MOUNT_ATTR_NOEXEC, "noexec", ST_NOEXEC },
	{ MS_NOATIME, 0, "noatime", ST_NOATIME },
	{ MS_NODIRATIME, MOUNT_ATTR_NODIRATIME, "nodiratime", ST_NODIRATIME },
	{ MS_RELATIME, 0, "relatime", ST_RELATIME },
	{ MS_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW, "nosymfollow", 0x2000 /* ST_NOSYMFOLLOW */ },
	{ MS_STRICTATIME, 0, "strictatime", 0 },
};
#define ATIME_FLAGS (MS_NOATIME | MS_RELATIME | MS_STRICTATIME | MS_NODIRATIME)
#define LOCKABLE (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | ATIME_FLAGS)
#define BIND_FLAGS (MS_BIND | MS_REC | MS_REMOUNT)

/* The mount_setattr that gives a mount exactly the per-mount flags want,
 * as a bind remount does (mount(2) MS_REMOUNT|MS_BIND): what is not asked
 * is cleared, and the atime mode kept unless one is asked. */
static struct mount_attr exact_attr(uint32_t want)
{
	struct mount_attr a = { 0 };

	for (size_t i = 0; i < sizeof(flag_map) / sizeof(flag_map[0]); i++) {
		if (!flag_map[i].attr || flag_map[i].ms == MS_NODIRATIME)
			continue;
		if (want & flag_map[i].ms)
			a.attr_set |= flag_map[i].attr;
		else
			a.attr_clr |= flag_map[i].attr;
	}
	if (want & ATIME_FLAGS) {
		a.attr_clr |= MOUNT_ATTR__ATIME | MOUNT_ATTR_NODIRATIME;
		a.attr_set |= want & MS_STRICTATIME ? MOUNT_ATTR_STRICTATIME :
			      want & MS_NOATIME ? MOUNT_ATTR_NOATIME : MOUNT_ATTR_RELATIME;
		if (want & MS_NODIRATIME)
			a.attr_set |= MOUNT_ATTR_NODIRATIME;
	}
	return a;
}

/* The per-mount flags of a new filesystem, as fsmount(2) takes them. */
static unsigned int fs_attrs(uint32_t flags)
{
	struct mount_attr a = exact_attr(flags);

	/* No atime flag: MOUNT_ATTR_RELATIME, 0, mount(2)'s default too. */
	return a.attr_set;
}

/* statfs's ST_* flags as MS_* (Go's mountFlags): a mount with neither
 * noatime nor relatime is strictatime. */
static uint32_t ms_from_st(unsigned long st)
{
	uint32_t ms = 0;

	for (size_t i = 0; i < sizeof(flag_map) / sizeof(flag_map[0]); i++)
		if (flag_map[i].st && (st & flag_map[i].st))
			ms |= flag_map[i].ms;
	if (!(ms & (MS_NOATIME | MS_RELATIME)))
		ms |= MS_STRICTATIME;
	return ms;
}

static const char *flag_names(uint32_t flags, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(flag_map) / sizeof(flag_map[0]); i++)
		if ((flags & flag_map[i].ms) && used < n)
			used += snprintf(buf + used, n - used, "%s%s", used ? "," : "", flag_map[i].name);
	return buf;
}

static int set_exact(int fd, uint32_t want)
{
	struct mount_attr a = exact_attr(want);

	return husk_k->mount_setattr(fd, "", AT_EMPTY_PATH, &a, sizeof(a));
}

/* Go's remountExact: the bind at fd gets exactly the flags asked; where
 * the kernel refuses (EPERM: flags locked on the source), the source's
 * locked flags are kept where nothing was asked of them, and a locked
 * flag asked off, or another atime mode, is an error, as in runc. */
static int remount_exact(struct run *r, int fd, uint32_t flags, uint32_t cleared)
{
	uint32_t want = flags & ~BIND_FLAGS, has, locked, asked;
	char a[128], b[128];
	struct statfs st;

	if (set_exact(fd, want) == 0)
		return 0;
	if (errno != EPERM)
		return fail(r, "remount with flags 0x%x: mount_setattr: %s", want, husk_errtext(errno));
	if (husk_k->fstatfs(fd, &st) < 0)
		return fail(r, "fstatfs: %s", husk_errtext(errno));
	has = ms_from_st(st.f_flags);
	if ((locked = has & LOCKABLE & cleared))
		return fail(r, "cannot clear flags locked on the source (%s): mount_setattr: %s",
			    flag_names(locked, a, sizeof(a)), husk_errtext(EPERM));
	asked = want & ATIME_FLAGS;
	if (asked && asked != (has & ATIME_FLAGS))
		return fail(r, "cannot change the atime flags locked on the source (%s) to %s: mount_setattr: %s",
			    flag_names(has & ATIME_FLAGS, a, sizeof(a)), flag_names(asked, b, sizeof(b)),
			    husk_errtext(EPERM));
	want |= has & LOCKABLE;
	if (set_exact(fd, want) < 0)
		return fail(r, "remount with flags 0x%x: mount_setattr: %s", want, husk_errtext(errno));
	return 0;
}

/* Go's finishMount: the recursive attributes, then each propagation. */
static int finish_mount(struct run *r, const struct husk_mount *m)
{
	const struct husk_mount_head *h = &m->h;
	int fd;

	if (!h->rec_set && !h->rec_clr && !h->prop[0])
		return 0;
	fd = open_in_root(r, m->dest, MUST_EXIST, NULL);
	if (fd < 0)
		return -1;
	if (h->rec_set || h->rec_clr) {
		struct mount_attr a = { .attr_set = h->rec_set, .attr_clr = h->rec_clr };

		if (husk_k->mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0) {
			close_keep_errno(fd);
			return fail(r, "set recursive attributes (set 0x%llx, clear 0x%llx): mount_setattr: %s",
				    (unsigned long long)h->rec_set, (unsigned long long)h->rec_clr,
				    husk_errtext(errno));
		}
	}
	for (int i = 0; i < HUSK_MOUNTS_MAX_PROP && h->prop[i]; i++) {
		struct mount_attr a = { .propagation = h->prop[i] & ~(uint32_t)MS_REC };
		unsigned int at = AT_EMPTY_PATH | (h->prop[i] & MS_REC ? AT_RECURSIVE : 0);

		if (husk_k->mount_setattr(fd, "", at, &a, sizeof(a)) < 0) {
			close_keep_errno(fd);
			return fail(r, "set propagation 0x%x: mount_setattr: %s", h->prop[i], husk_errtext(errno));
		}
	}
	husk_k->close(fd);
	return 0;
}

/* Attaches the detached tree from on the destination fd to. */
static int attach(struct run *r, int from, int to)
{
	if (husk_k->move_mount(from, to) < 0)
		return fail(r, "move_mount: %s", husk_errtext(errno));
	return 0;
}

/* Opens a bind's source: the parent's fd, a path inside the root, or
 * the host's path. */
static int open_source(struct run *r, const struct husk_mount *m)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	int fd;

	if (m->h.kind == HUSK_MOUNT_BIND_FD)
		return m->h.fd;
	if (m->h.opts & HUSK_MOUNT_IN_ROOT) {
		fd = husk_k->openat2(r->root, m->source, &how, sizeof(how));
		if (fd < 0)
			return fail(r, "open %s inside the rootfs: openat2: %s", m->source, husk_errtext(errno));
		return fd;
	}
	fd = husk_k->open(m->source, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return fail(r, "open %s: %s", m->source, husk_errtext(errno));
	return fd;
}

/* Go's bindFd, then finishBind: src bound at the destination, made as a
 * directory or a file as src is one; its flags, attributes and
 * propagation after. Closes src. */
static int bind_fd(struct run *r, const struct husk_mount *m, int src, uint32_t flags, const char *dest)
{
	struct statfs fs;
	struct stat st;
	int dst, tree, rc;
	unsigned int clone = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH;

	if (strcmp(dest, "/proc") == 0) { /* Go's checkProcSource */
		if (husk_k->fstatfs(src, &fs) < 0) {
			fail(r, "statfs the source of the bind on /proc: fstatfs: %s", husk_errtext(errno));
			goto out;
		}
		if (fs.f_type != PROC_SUPER_MAGIC) {
			fail(r, "\"%s\" cannot be mounted because it is not of type proc (the bind's source is not a procfs)",
			     dest);
			goto out;
		}
	}
	if (husk_k->fstat(src, &st) < 0) {
		fail(r, "fstat: %s", husk_errtext(errno));
		goto out;
	}
	dst = open_in_root(r, m->dest, S_ISDIR(st.st_mode) ? MAKE_DIR : MAKE_FILE, dest);
	if (dst < 0)
		goto out;
	tree = src;
	if (!(m->h.opts & HUSK_MOUNT_DETACHED)) {
		tree = husk_k->open_tree(src, "", clone | (flags & MS_REC ? AT_RECURSIVE : 0));
		if (tree < 0)
			fail(r, "open_tree: %s", husk_errtext(errno));
	}
	rc = tree < 0 ? -1 : attach(r, tree, dst);
	if (tree != src)
		close_keep_errno(tree);
	husk_k->close(dst);
	husk_k->close(src);
	if (rc < 0)
		return -1;
	if ((flags & ~BIND_FLAGS) || m->h.cleared) {
		dst = open_in_root(r, m->dest, MUST_EXIST, NULL);
		if (dst < 0)
			return -1;
		rc = remount_exact(r, dst, flags, m->h.cleared);
		husk_k->close(dst);
		if (rc < 0)
			return -1;
	}
	return finish_mount(r, m);
out:
	close_keep_errno(src);
	return -1;
}

/* dest: where m's destination leads (secure_join). */
static int bind_path(struct run *r, const struct husk_mount *m, uint32_t flags, const char *dest)
{
	int src = open_source(r, m);

	return src < 0 ? -1 : bind_fd(r, m, src, flags, dest);
}

/* The superblock flags of a mount's MS_* flags, as fsconfig(2) flags
 * (MS_SILENT only quiets the kernel's log: fsconfig has none). */
static const struct {
	uint32_t ms;
	const char *key;
} sb_flags[] = {
	{ MS_RDONLY, "ro" }, { MS_SYNCHRONOUS, "sync" }, { MS_DIRSYNC, "dirsync" },
	{ MS_LAZYTIME, "lazytime" }, { MS_MANDLOCK, "mand" },
};

/* fsconfig(2) with the kernel's own words on a refusal, read from the
 * context's log ("e tmpfs: Bad value for 'mode'"). */
static int config(struct run *r, int fs, unsigned int cmd, const char *key, const char *value)
{
	char msg[256] = "";
	ssize_t n;
	int e;

	if (husk_k->fsconfig(fs, cmd, key, value) == 0)
		return 0;
	e = errno;
	n = husk_k->read(fs, msg, sizeof(msg) - 1);
	msg[n > 0 ? n : 0] = '\0';
	msg[strcspn(msg, "\n")] = '\0';
	errno = e;
	if (cmd == FSCONFIG_CMD_CREATE)
		fail(r, "fsconfig create: %s%s%s%s", husk_errtext(e), msg[0] ? " (" : "", msg, msg[0] ? ")" : "");
	else
		fail(r, "fsconfig %s%s%s: %s%s%s%s", key, value ? "=" : "", value ? value : "", husk_errtext(e),
		     msg[0] ? " (" : "", msg, msg[0] ? ")" : "");
	return -1;
}

/* A new filesystem, configured and mounted detached: its fd, or -1. */
static int make_fs(struct run *r, const struct husk_mount *m, uint32_t flags, const char *mode)
{
	char opts[PATH_BYTES + 32];
	int fs, mnt = -1, n;

	fs = husk_k->fsopen(m->fstype);
	if (fs < 0)
		return fail(r, "fsopen %s: %s", m->fstype, husk_errtext(errno));
	if (config(r, fs, FSCONFIG_SET_STRING, "source", m->source) < 0)
		goto out;
	n = husk_split_mount_data(m->data, opts, sizeof(opts) - 32);
	if (n < 0) {
		fail(r, "options \"%s\": too long", m->data);
		goto out;
	}
	if (mode) { /* after the data's options: the data has no mode= */
		char *end = opts;

		for (int k = 0; k < n; k++)
			end += strlen(end) + 1;
		snprintf(end, 32, "mode=%.8s", mode);
		n++;
	}
	for (char *o = opts; n-- > 0; o += strlen(o) + 1) {
		char *eq = strchr(o, '=');
		int rc;

		if (eq) {
			*eq = '\0';
			rc = config(r, fs, FSCONFIG_SET_STRING, o, eq + 1);
			*eq = '=';
		} else {
			rc = config(r, fs, FSCONFIG_SET_FLAG, o, NULL);
		}
		if (rc < 0)
			goto out;
	}
	for (size_t i = 0; i < sizeof(sb_flags) / sizeof(sb_flags[0]); i++)
		if ((flags & sb_flags[i].ms) && config(r, fs, FSCONFIG_SET_FLAG, sb_flags[i].key, NULL) < 0)
			goto out;
	if (config(r, fs, FSCONFIG_CMD_CREATE, NULL, NULL) < 0)
		goto out;
	mnt = husk_k->fsmount(fs, fs_attrs(flags));
	if (mnt < 0)
		fail(r, "fsmount: %s", husk_errtext(errno));
out:
	close_keep_errno(fs);
	return mnt;
}

/* Go's labelRoot: the mount label on the root of mnt (mqueue, which
 * takes no context=), set through the mount, not a path. */
static int label_root(struct run *r, const struct husk_mount *m, int mnt)
{
	int root = husk_k->openat(mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0), rc;

	if (root < 0)
		return fail(r, "linux.mountLabel \"%s\": open the root: openat: %s", m->root_label,
			    husk_errtext(errno));
	rc = husk_k->fsetxattr(root, "security.selinux", m->root_label, strlen(m->root_label), 0);
	close_keep_errno(root);
	if (rc < 0)
		return fail(r, "linux.mountLabel \"%s\": setxattr security.selinux: %s", m->root_label,
			    husk_errtext(errno));
	return 0;
}

/* Go's tmpcopyup: the tmpfs mnt, attached over covered, filled with a
 * copy of it, then made read-only when asked. */
static int copy_up(struct run *r, const struct husk_mount *m, int covered, int mnt)
{
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
	char why[sizeof(r->why)];
	int to, rc;

	to = husk_k->openat(mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (to < 0)
		return fail(r, "tmpcopyup: open the tmpfs: openat: %s", husk_errtext(errno));
	rc = husk_copy_up(covered, to, why, sizeof(why));
	husk_k->close(to);
	if (rc < 0)
		return fail(r, "tmpcopyup: %s", why);
	if ((m->h.flags & MS_RDONLY) && husk_k->mount_setattr(mnt, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0)
		return fail(r, "remount with flags 0x%x: mount_setattr: %s", MS_RDONLY, husk_errtext(errno));
	return 0;
}

/* Go's mountOne for a filesystem (tmpfs.go's mountTmpfs for a tmpfs):
 * the destination opened, the filesystem made and attached; refused
 * with EPERM, the host directory bound instead where Go init does. */
static int filesystem(struct run *r, const struct husk_mount *m, uint32_t flags, const char *dest)
{
	char mode[8], *with_mode = NULL;
	int dst = -1, mnt, rc;
	struct stat st;

	switch (m->h.dest) {
	case HUSK_DEST_COVERED:
		dst = open_in_root(r, m->dest, MUST_EXIST, dest);
		if (dst >= 0 && (m->h.opts & HUSK_MOUNT_TMPFS_MODE) && husk_k->fstat(dst, &st) == 0 &&
		    S_ISDIR(st.st_mode)) {
			snprintf(mode, sizeof(mode), "%o", st.st_mode & 07777);
			with_mode = mode;
		}
		if (dst < 0)
			dst = open_in_root(r, m->dest, MAKE_DIR, dest);
		break;
	case HUSK_DEST_REAL_DIR:
		dst = open_in_root(r, m->dest, REAL_DIR, NULL);
		break;
	default:
		dst = open_in_root(r, m->dest, MAKE_DIR, dest);
	}
	if (dst < 0)
		return -1;
	if (m->h.opts & HUSK_MOUNT_COPYUP)
		flags &= ~(uint32_t)MS_RDONLY; /* filled first, then made read-only */
	mnt = make_fs(r, m, flags, with_mode);
	if (mnt < 0 && errno == EPERM && m->fallback[0]) {
		struct husk_mount b = *m;
		char why[sizeof(r->why)];

		husk_k->close(dst);
		b.h.kind = HUSK_MOUNT_BIND;
		b.h.opts = 0;
		b.source = m->fallback;
		if (bind_path(r, &b, flags | MS_BIND | MS_REC, dest) == 0)
			return 0;
		snprintf(why, sizeof(why), "%s", r->why);
		return fail(r, "%s not permitted, bind host %s instead: %s", m->fstype, m->fallback, why);
	}
	if (mnt < 0 && (m->h.opts & HUSK_MOUNT_LABELLED)) {
		char why[sizeof(r->why)], data[sizeof(r->why)];

		snprintf(why, sizeof(why), "%s", r->why);
		fail(r, "data %s (linux.mountLabel): %s", quote(m->data, data, sizeof(data)), why);
	}
	rc = mnt < 0 ? -1 : attach(r, mnt, dst);
	if (rc == 0 && m->root_label[0])
		rc = label_root(r, m, mnt);
	if (rc == 0 && (m->h.opts & HUSK_MOUNT_COPYUP))
		rc = copy_up(r, m, dst, mnt);
	close_keep_errno(mnt);
	husk_k->close(dst);
	if (rc < 0)
		return -1;
	return finish_mount(r, m);
}

/* Go's coverRoot: after a mount on "/" itself, the root's fd is reopened
 * so that the next mounts land on it, not under it. */
static int cover_root(struct run *r, const char *dest)
{
	char clean[PATH_BYTES];
	int fd;

	clean_path(dest, clean);
	if (strcmp(clean, "/") != 0)
		return 0;
	fd = husk_k->open(r->p->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return fail(r, "reopen the rootfs %s: open: %s", r->p->root, husk_errtext(errno));
	husk_k->close(r->root);
	r->root = fd;
	return 0;
}

/* A co-mounted cgroup v1 controller's symlink (Go's mountHierarchy): in
 * the directory at destination, made unless there. */
static int symlink_in(struct run *r, const struct husk_mount *m)
{
	int dir = open_in_root(r, m->dest, MUST_EXIST, NULL), rc;

	if (dir < 0)
		return -1;
	if ((m->h.opts & HUSK_MOUNT_REPLACE) && husk_k->unlinkat(dir, m->data, 0) < 0 && errno != ENOENT) {
		close_keep_errno(dir);
		return fail(r, "unlinkat: %s", husk_errtext(errno));
	}
	rc = husk_k->symlinkat(m->source, dir, m->data);
	close_keep_errno(dir);
	if (rc < 0 && errno != EEXIST)
		return fail(r, "symlinkat: %s", husk_errtext(errno));
	return 0;
}

/* Go's remountBind: flags added to the mount at destination, the others
 * kept (cleared: asked off); then its recursive attributes, propagation. */
static int remount_add(struct run *r, const struct husk_mount *m)
{
	uint32_t has, want;
	struct statfs st;
	int fd, rc = 0;

	if ((m->h.flags & ~BIND_FLAGS) || m->h.cleared) {
		fd = open_in_root(r, m->dest, MUST_EXIST, NULL);
		if (fd < 0)
			return -1;
		if (husk_k->fstatfs(fd, &st) < 0) {
			close_keep_errno(fd);
			return fail(r, "statfs: %s", husk_errtext(errno));
		}
		has = ms_from_st(st.f_flags);
		want = ((has | (m->h.flags & ~BIND_FLAGS)) & ~(m->h.cleared & LOCKABLE)) | (has & ATIME_FLAGS);
		if (want != has && set_exact(fd, want) < 0)
			rc = fail(r, "remount with flags 0x%x: mount_setattr: %s", want, husk_errtext(errno));
		husk_k->close(fd);
		if (rc < 0)
			return -1;
	}
	return finish_mount(r, m);
}

/* Go's makeCwd: destination made when it is missing, inside the root;
 * one that exists, or leads through a /proc magic link, is left to the
 * launcher's chdir, which says what is wrong with it. */
static int make_missing(struct run *r, const struct husk_mount *m)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	int fd = husk_k->openat2(r->root, m->dest, &how, sizeof(how));

	if (fd >= 0)
		husk_k->close(fd);
	if (fd >= 0 || (errno != ENOENT && errno != ENOSYS))
		return 0;
	fd = open_in_root(r, m->dest, MAKE_DIR, NULL);
	if (fd < 0)
		return -1;
	husk_k->close(fd);
	return 0;
}

static char device_type(uint32_t mode)
{
	return S_ISBLK(mode) ? 'b' : S_ISFIFO(mode) ? 'p' : 'c';
}

/* Go's bindDevice: where mknod is not permitted (a user namespace), the
 * host's node (a clone, checked to be the device asked) bound onto an
 * empty file (checked to be one). */
static int bind_device(struct run *r, const struct husk_mount *m)
{
	const struct husk_mount_device *d = &m->dev;
	struct stat st;
	int src, dst, rc;

	src = husk_k->open_tree(AT_FDCWD, m->dest, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (src < 0)
		return fail(r, "mknod not permitted, bind host %s: open_tree: %s", m->dest, husk_errtext(errno));
	if (husk_k->fstat(src, &st) < 0) {
		close_keep_errno(src);
		return fail(r, "mknod not permitted, host %s: fstat: %s", m->dest, husk_errtext(errno));
	}
	if ((st.st_mode & S_IFMT) != (d->mode & S_IFMT) || st.st_rdev != d->rdev) {
		husk_k->close(src);
		return fail(r, "mknod not permitted, host %s: is not the %c device %u:%u (mode %#o, device %u:%u)", m->dest,
			    device_type(d->mode), major(d->rdev), minor(d->rdev), st.st_mode, major(st.st_rdev),
			    minor(st.st_rdev));
	}
	dst = open_in_root(r, m->dest, MAKE_FILE, NULL);
	if (dst < 0) {
		husk_k->close(src);
		return -1;
	}
	rc = husk_k->fstat(dst, &st);
	if (rc < 0)
		fail(r, "fstat: %s", husk_errtext(errno));
	else if (!S_ISREG(st.st_mode))
		rc = fail(r, "bind target is not a regular file (mode %#o)", st.st_mode);
	else if ((rc = husk_k->move_mount(src, dst)) < 0)
		fail(r, "mknod not permitted, bind host %s: move_mount: %s", m->dest, husk_errtext(errno));
	husk_k->close(dst);
	husk_k->close(src);
	return rc;
}

/* Go's createDevice: a node of linux.devices made with mknod, its mode
 * and owner set exactly; one already there is left. */
static int device(struct run *r, const struct husk_mount *m)
{
	const struct husk_mount_device *d = &m->dev;
	char dir[PATH_BYTES];
	const char *name = strrchr(m->dest, '/') + 1;
	int fd, rc;

	snprintf(dir, sizeof(dir), "%.*s", (int)(name - m->dest), m->dest);
	fd = open_in_root(r, dir[1] ? dir : "/", MAKE_DIR, NULL);
	if (fd < 0)
		return -1;
	rc = husk_k->mknodat(fd, name, d->mode, d->rdev);
	if (rc < 0 && errno == EEXIST) {
		husk_k->close(fd);
		return 0;
	}
	if (rc < 0 && errno == EPERM) {
		husk_k->close(fd);
		return bind_device(r, m);
	}
	if (rc < 0)
		fail(r, "mknodat: %s", husk_errtext(errno));
	else if ((rc = husk_k->fchmodat(fd, name, d->mode & 07777, 0)) < 0) /* mknod's went through the umask */
		fail(r, "fchmodat: %s", husk_errtext(errno));
	else if ((rc = husk_k->fchownat(fd, name, d->uid, d->gid, AT_SYMLINK_NOFOLLOW)) < 0)
		fail(r, "fchownat: %s", husk_errtext(errno));
	husk_k->close(fd);
	return rc;
}

static int mount_one(struct run *r, const struct husk_mount *m)
{
	char dest[PATH_BYTES];
	uint32_t flags = m->h.flags;

	if (m->is_device)
		return device(r, m);
	if (m->h.kind == HUSK_MOUNT_MKDIR)
		return make_missing(r, m);
	if (m->h.kind == HUSK_MOUNT_SYMLINK)
		return symlink_in(r, m);
	if (m->h.kind == HUSK_MOUNT_REMOUNT)
		return remount_add(r, m);

	/* Go's checkProcDest: where the destination leads, not as written. */
	if (secure_join(r, m->dest, dest) < 0)
		return -1;
	if (husk_mount_proc_check(dest, m->fstype, m->h.kind != HUSK_MOUNT_FS, r->why, sizeof(r->why)) < 0)
		return -1;
	if (m->h.kind == HUSK_MOUNT_FS)
		return filesystem(r, m, flags, dest);
	return bind_path(r, m, flags, dest);
}

/* Sets the propagation flags (MS_* | MS_REC) on the mount at path. */
static int propagate_path(const char *path, uint32_t flags)
{
	struct mount_attr a = { .propagation = flags & ~(uint32_t)MS_REC };
	int fd = husk_k->open(path, O_PATH | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = husk_k->mount_setattr(fd, "", AT_EMPTY_PATH | (flags & MS_REC ? AT_RECURSIVE : 0), &a, sizeof(a));
	close_keep_errno(fd);
	return rc;
}

/* Go init's prepareRoot: the mount namespace cut off from the host's
 * ("/" rslave, or linux.rootfsPropagation), the rootfs's mount and its
 * parent isolated (isolateRoot, decided by the parent), then the rootfs
 * bound onto itself, a mount point pivot_root can take. */
static int prepare(const struct husk_mounts *p, char *err, size_t errlen)
{
	const struct husk_mount_prepare *pr = &p->prepare;
	int tree, dst, rc;

	if (propagate_path("/", pr->root_flags) < 0)
		return perr(err, errlen, "linux.rootfsPropagation 0x%x: set on /: %s", pr->root_flags, husk_errtext(errno));
	for (uint32_t i = 0; i < pr->n; i++)
		if (propagate_path(p->points[i], pr->flags[i]) < 0)
			return perr(err, errlen, "linux.rootfsPropagation: make mount %s %s: %s", p->points[i],
				    pr->flags[i] == MS_SLAVE ? "slave" : "private", husk_errtext(errno));
	tree = husk_k->open_tree(AT_FDCWD, p->root, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (tree < 0)
		return perr(err, errlen, "root.path \"%s\": bind onto itself: open_tree: %s", p->root, husk_errtext(errno));
	dst = husk_k->open(p->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	rc = dst < 0 ? -1 : husk_k->move_mount(tree, dst);
	if (rc < 0)
		perr(err, errlen, "root.path \"%s\": bind onto itself: %s: %s", p->root, dst < 0 ? "open" : "move_mount",
		     husk_errtext(errno));
	close_keep_errno(dst);
	husk_k->close(tree);
	return rc;
}

int husk_do_mounts(const struct husk_mounts *p, char *err, size_t errlen)
{
	struct run r = { .p = p };

	if (p->has_prepare && prepare(p, err, errlen) < 0)
		return -1;

	r.root = husk_k->open(p->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r.root < 0)
		return perr(err, errlen, "root.path %s: open: %s", p->root, husk_errtext(errno));
	for (size_t i = 0; i < p->n; i++) {
		const struct husk_mount *m = &p->m[i];

		char path[256];

		if (mount_one(&r, m) == 0 && (m->is_device || cover_root(&r, m->dest) == 0))
			continue;
		husk_k->close(r.root);
		if (m->is_device)
			return perr(err, errlen, "devices[%u] %s: %s", m->dev.index, quote(m->dest, path, sizeof(path)), r.why);
		return perr(err, errlen, "%s: %s", m->head, r.why);
	}
	husk_k->close(r.root);
	return 0;
}

/* Go init's enterRoot (pivotInto): the rootfs made the process's "/" with
 * pivot_root(".", "."), which stacks the old root on the new one, then
 * the old root made a slave (so its detach cannot reach the host) and
 * detached; then "/" gets linux.rootfsPropagation (only now, so that
 * "shared" cannot reach the host). */
/* An empty read-only tmpfs on the mount at path (what covers a proc or
 * sysfs --no-pivot cannot detach). */
static int cover(const char *path)
{
	int fs = husk_k->fsopen("tmpfs"), mnt = -1, dst = -1, rc = -1;

	if (fs >= 0 && husk_k->fsconfig(fs, FSCONFIG_SET_STRING, "source", "tmpfs") == 0 &&
	    husk_k->fsconfig(fs, FSCONFIG_SET_FLAG, "ro", NULL) == 0 &&
	    husk_k->fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL) == 0 &&
	    (mnt = husk_k->fsmount(fs, MOUNT_ATTR_RDONLY)) >= 0 &&
	    (dst = husk_k->open(path, O_PATH | O_CLOEXEC)) >= 0)
		rc = husk_k->move_mount(mnt, dst);
	close_keep_errno(dst);
	close_keep_errno(mnt);
	close_keep_errno(fs);
	return rc;
}

/* Go init's moveRoot (--no-pivot): every whole proc and sysfs outside the
 * rootfs taken away (made a slave, then detached, or covered: while a
 * whole proc stays anywhere, a nested user namespace may mount a fresh
 * one without the container's masks), "/" made private, the rootfs
 * moved onto it, chroot. */
static int move_root(const struct husk_mounts *p, char *err, size_t errlen)
{
	int from, to, rc;

	for (size_t i = 0; i < p->n_hide; i++) {
		const char *type = p->hide[2 * i], *path = p->hide[2 * i + 1];

		if (propagate_path(path, MS_SLAVE | MS_REC) < 0) {
			if (errno == ENOENT || errno == EINVAL)
				continue; /* already gone with a detached parent */
			return perr(err, errlen, "--no-pivot: move %s to /: host %s %s: %s", p->root, type, path,
				    husk_errtext(errno));
		}
		rc = husk_k->umount2(path, MNT_DETACH);
		if (rc < 0 && (errno == EPERM || errno == EINVAL))
			rc = cover(path);
		if (rc < 0)
			return perr(err, errlen, "--no-pivot: move %s to /: hide host %s %s: %s", p->root, type, path,
				    husk_errtext(errno));
	}
	if (husk_k->chdir(p->root) < 0)
		return perr(err, errlen, "--no-pivot: move %s to /: chdir: %s", p->root, husk_errtext(errno));
	if (propagate_path("/", MS_PRIVATE) < 0) /* the move must not propagate to the host */
		return perr(err, errlen, "--no-pivot: move %s to /: private /: %s", p->root, husk_errtext(errno));
	from = husk_k->open(p->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	to = from < 0 ? -1 : husk_k->open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	rc = to < 0 ? -1 : husk_k->move_mount(from, to);
	close_keep_errno(to);
	close_keep_errno(from);
	if (rc < 0)
		return perr(err, errlen, "--no-pivot: move %s to /: move_mount: %s", p->root, husk_errtext(errno));
	if (husk_k->chroot(".") < 0 || husk_k->chdir("/") < 0)
		return perr(err, errlen, "--no-pivot: move %s to /: chroot: %s", p->root, husk_errtext(errno));
	return 0;
}

int husk_enter_root(const struct husk_mounts *p, char *err, size_t errlen)
{
	struct mount_attr slave = { .propagation = MS_SLAVE };
	int old, new, rc = -1;
	const char *what;

	if (p->has_prepare && p->prepare.no_pivot) {
		if (move_root(p, err, errlen) < 0)
			return -1;
		if (p->prepare.after && propagate_path("/", p->prepare.after) < 0)
			return perr(err, errlen, "linux.rootfsPropagation 0x%x: set on the new /: %s", p->prepare.after,
				    husk_errtext(errno));
		return 0;
	}

	old = husk_k->open("/", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (old < 0)
		return perr(err, errlen, "pivot_root to %s: open: %s", p->root, husk_errtext(errno));
	new = husk_k->open(p->root, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (new < 0) {
		perr(err, errlen, "pivot_root to %s: open: %s", p->root, husk_errtext(errno));
		goto out;
	}
	if (husk_k->fchdir(new) < 0)
		what = "fchdir";
	else if (husk_k->pivot_root(".", ".") < 0)
		what = "pivot_root";
	else if (husk_k->fchdir(old) < 0)
		what = "fchdir";
	else if (husk_k->mount_setattr(AT_FDCWD, ".", AT_RECURSIVE, &slave, sizeof(slave)) < 0)
		what = "old root: mount_setattr";
	else if (husk_k->umount2(".", MNT_DETACH) < 0)
		what = "old root: umount2";
	else if (husk_k->chdir("/") < 0)
		what = "chdir";
	else
		what = NULL;
	if (what) {
		perr(err, errlen, "pivot_root to %s: %s: %s", p->root, what, husk_errtext(errno));
		goto out;
	}
	rc = 0;
	if (p->has_prepare && p->prepare.after && propagate_path("/", p->prepare.after) < 0)
		rc = perr(err, errlen, "linux.rootfsPropagation 0x%x: set on the new /: %s", p->prepare.after,
			  husk_errtext(errno));
out:
	close_keep_errno(new);
	close_keep_errno(old);
	return rc;
}
