/*
 * tmpcopyup (mounts.h): a new tmpfs filled with a copy of the directory
 * it covers, as Go init's libcontainer/rootfs/copyup.go fills it: files,
 * directories, symlinks and device nodes, with their owners, modes and
 * times; nothing followed out of either tree (every name opened with
 * O_NOFOLLOW from its directory's fd). The image is the attacker's: its
 * depth is bounded (COPY_MAX_DEPTH, two fds a level), names and link
 * targets come from the kernel with their lengths.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel.h"
#include "launch.h"
#include "mounts.h"

#define COPY_MAX_DEPTH 256
#define DENTS_BYTES 32768

struct dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* why gets "name: call: error" ("call: error" for the top directory, ".") */
static int cfail(char *why, size_t n, const char *name, const char *call, int err)
{
	if (strcmp(name, ".") == 0)
		snprintf(why, n, "%s: %s", call, husk_errtext(err));
	else
		snprintf(why, n, "%s: %s: %s", name, call, husk_errtext(err));
	errno = err;
	return -1;
}

/* Gives dir/name st's owner, mode (not a symlink's) and times (Go's
 * copyAttrs); the mode after the owner, whose change clears setuid. */
static int copy_attrs(int dir, const char *name, const struct stat *st, char *why, size_t n)
{
	struct timespec times[2] = { st->st_atim, st->st_mtim };

	if (husk_k->fchownat(dir, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0)
		return cfail(why, n, name, "fchownat", errno);
	if (!S_ISLNK(st->st_mode) && husk_k->fchmodat(dir, name, st->st_mode & 07777, 0) < 0)
		return cfail(why, n, name, "fchmodat", errno);
	if (husk_k->utimensat(dir, name, times, AT_SYMLINK_NOFOLLOW) < 0)
		return cfail(why, n, name, "utimensat", errno);
	return 0;
}

static int copy_file(int src, int dst, const char *name, char *why, size_t n)
{
	char buf[16384];
	int from, to, rc = 0;
	ssize_t got;

	from = husk_k->openat(src, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (from < 0)
		return cfail(why, n, name, "openat", errno);
	to = husk_k->openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (to < 0) {
		rc = cfail(why, n, name, "openat", errno);
		husk_k->close(from);
		return rc;
	}
	while ((got = husk_k->read(from, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < got;) {
			ssize_t w = husk_k->write(to, buf + off, got - off);

			if (w <= 0) {
				rc = cfail(why, n, name, "write", w < 0 ? errno : EIO);
				goto out;
			}
			off += w;
		}
	}
	if (got < 0)
		rc = cfail(why, n, name, "read", errno);
out:
	husk_k->close(from);
	husk_k->close(to);
	return rc;
}

static int copy_dir(int src, int dst, int depth, char *why, size_t n);

static int copy_subdir(int src, int dst, const char *name, int depth, char *why, size_t n)
{
	int from, to, rc;

	if (depth >= COPY_MAX_DEPTH)
		return cfail(why, n, name, "deeper than 256 directories", ELOOP);
	if (husk_k->mkdirat(dst, name, 0700) < 0 && errno != EEXIST)
		return cfail(why, n, name, "mkdirat", errno);
	from = husk_k->openat(src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (from < 0)
		return cfail(why, n, name, "openat", errno);
	to = husk_k->openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (to < 0) {
		rc = cfail(why, n, name, "openat", errno);
		husk_k->close(from);
		return rc;
	}
	rc = copy_dir(from, to, depth + 1, why, n);
	husk_k->close(from);
	husk_k->close(to);
	if (rc < 0) { /* "sub: file: openat: ..." as Go's wrapping */
		char inner[1024];

		snprintf(inner, sizeof(inner), "%s", why);
		snprintf(why, n, "%s: %s", name, inner);
	}
	return rc;
}

/* Go's copyEntry: src/name to dst/name, then its attributes. */
static int copy_entry(int src, int dst, const char *name, int depth, char *why, size_t n)
{
	char target[4096];
	struct stat st;
	ssize_t len;
	int rc;

	if (husk_k->fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return cfail(why, n, name, "fstatat", errno);
	switch (st.st_mode & S_IFMT) {
	case S_IFDIR:
		rc = copy_subdir(src, dst, name, depth, why, n);
		break;
	case S_IFREG:
		rc = copy_file(src, dst, name, why, n);
		break;
	case S_IFLNK:
		len = husk_k->readlinkat(src, name, target, sizeof(target));
		if (len < 0 || (size_t)len >= sizeof(target))
			return cfail(why, n, name, "readlinkat", len < 0 ? errno : ENAMETOOLONG);
		target[len] = '\0';
		rc = husk_k->symlinkat(target, dst, name) < 0 ? cfail(why, n, name, "symlinkat", errno) : 0;
		break;
	default: /* devices, fifos, sockets */
		rc = husk_k->mknodat(dst, name, st.st_mode, st.st_rdev) < 0 ? cfail(why, n, name, "mknodat", errno) : 0;
	}
	return rc < 0 ? -1 : copy_attrs(dst, name, &st, why, n);
}

/* Go's copyDir: every entry of src (an O_RDONLY directory) into dst. */
static int copy_dir(int src, int dst, int depth, char *why, size_t n)
{
	char *buf = malloc(DENTS_BYTES);
	long got;
	int rc = 0;

	if (!buf)
		return cfail(why, n, ".", "malloc", errno);
	while (rc == 0 && (got = husk_k->getdents64(src, buf, DENTS_BYTES)) > 0) {
		for (long off = 0; off < got && rc == 0;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);

			if (d->d_reclen == 0 || d->d_reclen > got - off)
				break; /* never from a kernel; ends the batch */
			off += d->d_reclen;
			if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
				continue;
			rc = copy_entry(src, dst, d->d_name, depth, why, n);
		}
	}
	if (rc == 0 && got < 0)
		rc = cfail(why, n, ".", "getdents64", errno);
	free(buf);
	return rc;
}

int husk_copy_up(int from, int to, char *why, size_t n)
{
	struct stat st;
	int src, rc;

	src = husk_k->openat(from, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (src < 0)
		return cfail(why, n, ".", "openat", errno);
	rc = copy_dir(src, to, 0, why, n);
	husk_k->close(src);
	if (rc < 0)
		return -1;
	if (husk_k->fstat(from, &st) < 0)
		return cfail(why, n, ".", "fstat", errno);
	if (husk_k->fchown(to, st.st_uid, st.st_gid) < 0)
		return cfail(why, n, ".", "fchown", errno);
	if (husk_k->fchmod(to, st.st_mode & 07777) < 0)
		return cfail(why, n, ".", "fchmod", errno);
	return 0;
}
