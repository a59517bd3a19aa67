/*
 * Paths inside the container's root, for the launcher's mounts (mounts.c):
 * resolved as SecureJoin does, every component looked up with openat2
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS from the root's fd, then walked
 * again component by component without following anything, what is
 * missing made (Go init's libcontainer/rootfs/resolve.go). And the
 * mounts' error helpers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kernel.h"
#include "launch.h"
#include "mounts.h"
#include "mounts_int.h"

/* Go's %q for the ASCII a mount's names are made of. */
const char *husk_mquote(const char *s, char *buf, size_t n)
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


int __attribute__((format(printf, 2, 3))) husk_mfail(struct husk_mrun *r, const char *fmt, ...)
{
	va_list ap;
	int e = errno; /* kept: a caller may look at it (EPERM) */

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	errno = e;
	return -1;
}

void husk_mclose(int fd)
{
	int e = errno;

	if (fd >= 0)
		husk_k->close(fd);
	errno = e;
}

/* path cleaned lexically into out (filepath.Clean("/" + path)): "." and
 * empty components dropped, ".." never above "/". */
void husk_clean_path(const char *path, char *out)
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
int husk_secure_join(struct husk_mrun *r, const char *path, char *out)
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
			return husk_mfail(r, "resolve \"%s\" in rootfs: %s", path, husk_errtext(ENAMETOOLONG));
		snprintf(next, sizeof(next), "%s/%s", out, part);
		fd = husk_k->openat2(r->root, next, &how, sizeof(how));
		if (fd < 0 && errno != ENOENT && errno != ENOTDIR)
			return husk_mfail(r, "resolve \"%s\" in rootfs: openat2 %s: %s", path, next, husk_errtext(errno));
		if (fd >= 0 && husk_k->fstat(fd, &st) < 0) {
			husk_mclose(fd);
			return husk_mfail(r, "resolve \"%s\" in rootfs: fstat %s: %s", path, next, husk_errtext(errno));
		}
		if (fd < 0 || !S_ISLNK(st.st_mode)) {
			husk_mclose(fd);
			memcpy(out, next, strlen(next) + 1);
			cur = strlen(out);
			part = after;
			continue;
		}
		n = ++links > MAX_LINKS ? (errno = ELOOP, -1) : husk_k->readlinkat(fd, "", target, sizeof(target));
		husk_mclose(fd);
		if (n < 0 || (size_t)n >= sizeof(target))
			return husk_mfail(r, "resolve \"%s\" in rootfs: readlink %s: %s", path, next,
				    husk_errtext(n < 0 ? errno : ENAMETOOLONG));
		target[n] = '\0';
		if (n + 1 + strlen(after) >= sizeof(rem) - 1)
			return husk_mfail(r, "resolve \"%s\" in rootfs: %s", path, husk_errtext(ENAMETOOLONG));
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
static int step(int dir, const char *name, int last, enum husk_create c, const char **call)
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
		husk_mclose(fd);
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
int husk_open_in_root(struct husk_mrun *r, const char *path, enum husk_create c, const char *known)
{
	char clean[PATH_BYTES], walk[PATH_BYTES], where[PATH_BYTES];
	const char *call;
	int dir, fd;

	if (c == REAL_DIR)
		husk_clean_path(path, clean);
	else if (known)
		snprintf(clean, sizeof(clean), "%s", known);
	else if (husk_secure_join(r, path, clean) < 0)
		return -1;
	dir = husk_k->openat(r->root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
	if (dir < 0)
		return husk_mfail(r, "open the rootfs: openat: %s", husk_errtext(errno));
	snprintf(walk, sizeof(walk), "%s", clean + 1);
	where[0] = '\0';
	for (char *s, *name = strtok_r(walk, "/", &s), *next; name; name = next) {
		next = strtok_r(NULL, "/", &s);
		strncat(where, "/", sizeof(where) - strlen(where) - 1);
		strncat(where, name, sizeof(where) - strlen(where) - 1);
		fd = step(dir, name, next == NULL, c, &call);
		husk_mclose(dir);
		if (fd < 0 && c == REAL_DIR && (errno == ENOTDIR || errno == ELOOP))
			return husk_mfail(r, "must be mounted on ordinary directory, %s is not one: %s: %s", where, call,
				    husk_errtext(errno));
		if (fd < 0)
			return husk_mfail(r, "%s: %s: %s", where, call, husk_errtext(errno));
		dir = fd;
	}
	return dir;
}

int husk_merr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}
