/*
 * The mounts' fake (fake.h): a file tree of a few entries that the mount
 * calls of nsenter/mounts.c look up and change, each call recorded with
 * the paths its fds stand for, so a test reads "openat(/dev, pts, dir)"
 * and "move_mount(devpts -> /dev/pts)". Every fd it hands out is
 * counted until closed: a run that leaves one open leaks it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>

#include "../../kernel.h"
#include "../../mounts.h"
#include "fake.h"

#define MAX_ENTRIES 128
#define MAX_FDS 512
#define FIRST_FD 500
#define NAME 256

struct entry {
	char type; /* d f l inside the root; D F P on the host */
	char path[NAME], target[NAME];
};

struct fd {
	int open, listed;
	char kind;  /* 'e' an entry, 'c' a filesystem context, 't' a mount tree */
	char type;  /* the entry's type */
	char path[NAME]; /* the entry's path; the tree's name */
};

static struct entry entries[MAX_ENTRIES];
static size_t n_entries;
static struct fd fds[MAX_FDS];
static size_t n_fds;
static const char *root_path;

static struct entry *find(char type_class, const char *path)
{
	for (size_t i = 0; i < n_entries; i++) {
		int host = entries[i].type >= 'A' && entries[i].type <= 'Z';

		if ((type_class == 'h') == host && strcmp(entries[i].path, path) == 0)
			return &entries[i];
	}
	return NULL;
}

static struct entry *add_entry(char type, const char *path, const char *target)
{
	struct entry *e;

	if (n_entries == MAX_ENTRIES)
		return NULL;
	e = &entries[n_entries++];
	e->type = type;
	snprintf(e->path, sizeof(e->path), "%s", path);
	snprintf(e->target, sizeof(e->target), "%s", target ? target : "");
	return e;
}

static int new_fd(char kind, char type, const char *path)
{
	struct fd *f;

	if (n_fds == MAX_FDS) {
		errno = EMFILE;
		return -1;
	}
	f = &fds[n_fds];
	f->open = 1;
	f->listed = 0;
	f->kind = kind;
	f->type = type;
	snprintf(f->path, sizeof(f->path), "%s", path);
	return FIRST_FD + n_fds++;
}

static struct fd *get(int fd)
{
	if (fd < FIRST_FD || fd >= FIRST_FD + (int)n_fds || !fds[fd - FIRST_FD].open)
		return NULL;
	return &fds[fd - FIRST_FD];
}

static const char *name_of(int fd)
{
	struct fd *f = get(fd);

	return f ? f->path : "?";
}

/* dir's path joined with name, inside the root ("/" is the root). */
static void join(const char *dir, const char *name, char *out)
{
	if (strcmp(name, ".") == 0)
		snprintf(out, NAME, "%s", dir);
	else if (strcmp(dir, "/") == 0)
		snprintf(out, NAME, "/%s", name);
	else
		snprintf(out, NAME, "%s/%s", dir, name);
}

static int open_entry(const char *path, int flags)
{
	struct entry *e = strcmp(path, "/") == 0 ? NULL : find('r', path);
	char type = e ? e->type : 'd';

	if (!e && strcmp(path, "/") != 0) {
		errno = ENOENT;
		return -1;
	}
	if ((flags & O_DIRECTORY) && type != 'd' && type != 'r') {
		errno = ENOTDIR;
		return -1;
	}
	return new_fd('e', type, path);
}

static int m_open(const char *path, int flags)
{
	struct entry *e;

	if (stepfake_rec("open(%s)", path))
		return -1;
	if (strcmp(path, root_path) == 0 || strcmp(path, "/") == 0) /* the rootfs; the host's "/" */
		return new_fd('e', path[1] ? 'd' : 'D', "/");
	e = find('h', path);
	if (!e) {
		errno = ENOENT;
		return -1;
	}
	return new_fd('e', e->type, path);
}

static int m_openat2(int dirfd, const char *path, struct open_how *how, size_t size)
{
	char clean[NAME];
	struct entry *e;

	if (stepfake_rec("openat2(%s, %s)", path, how->flags & O_NOFOLLOW ? "nofollow" : "follow"))
		return -1;
	snprintf(clean, sizeof(clean), "%s", path);
	e = find('r', clean);
	if (e && e->type == 'l' && !(how->flags & O_NOFOLLOW)) /* one level, inside the root */
		e = find('r', e->target);
	if (!e && strcmp(clean, "/") != 0) {
		errno = ENOENT;
		return -1;
	}
	return new_fd('e', e ? e->type : 'd', e ? e->path : "/");
}

int stepfake_openat(int dirfd, const char *name, int flags, mode_t mode)
{
	char path[NAME];

	join(name_of(dirfd), name, path);
	if (stepfake_rec("openat(%s, %s%s%s)", name_of(dirfd), name, flags & O_DIRECTORY ? ", dir" : "",
			 flags & O_CREAT ? ", create" : ""))
		return -1;
	if (flags & O_CREAT) {
		if (find('r', path) && (flags & O_EXCL)) {
			errno = EEXIST;
			return -1;
		}
		if (!find('r', path) && !add_entry('f', path, NULL)) {
			errno = ENOSPC;
			return -1;
		}
	}
	return open_entry(path, flags);
}

static int make(int dirfd, const char *name, char type, const char *call)
{
	char path[NAME];

	join(name_of(dirfd), name, path);
	if (stepfake_rec("%s(%s)", call, path))
		return -1;
	if (find('r', path)) {
		errno = EEXIST;
		return -1;
	}
	return add_entry(type, path, NULL) ? 0 : (errno = ENOSPC, -1);
}

int stepfake_mkdirat(int dirfd, const char *name, mode_t mode)
{
	return make(dirfd, name, 'd', "mkdirat");
}

int stepfake_mknodat(int dirfd, const char *name, mode_t mode, dev_t dev)
{
	return make(dirfd, name, 'f', "mknodat");
}

ssize_t stepfake_readlinkat(int dirfd, const char *name, char *buf, size_t n)
{
	char path[NAME];
	struct entry *e;

	if (name[0])
		join(name_of(dirfd), name, path);
	else
		snprintf(path, sizeof(path), "%s", name_of(dirfd));
	e = find('r', path);
	if (stepfake_rec("readlinkat(%s)", path))
		return -1;
	if (!e || e->type != 'l') {
		errno = EINVAL;
		return -1;
	}
	snprintf(buf, n, "%s", e->target);
	return strlen(e->target) < n ? (ssize_t)strlen(e->target) : (ssize_t)n;
}

static int m_fstat(int fd, struct stat *st)
{
	struct fd *f = get(fd);

	if (stepfake_rec("fstat(%s)", name_of(fd)))
		return -1;
	memset(st, 0, sizeof(*st));
	if (f && strcmp(f->path, "tree:/dev/null") == 0) { /* the host's node */
		st->st_mode = S_IFCHR | 0666;
		st->st_rdev = makedev(1, 3);
		return 0;
	}
	switch (f ? f->type : 'f') {
	case 'd': case 'D': case 'P': case 'r': st->st_mode = S_IFDIR | 01777; break;
	case 'l': st->st_mode = S_IFLNK | 0777; break;
	default: st->st_mode = S_IFREG | 0644;
	}
	return 0;
}

static int m_fstatfs(int fd, struct statfs *fs)
{
	struct fd *f = get(fd);

	if (stepfake_rec("fstatfs(%s)", name_of(fd)))
		return -1;
	memset(fs, 0, sizeof(*fs));
	fs->f_type = f && f->type == 'P' ? PROC_SUPER_MAGIC : TMPFS_MAGIC;
	if (f && f->type == 'r')
		fs->f_flags = ST_RDONLY | ST_NOSUID | ST_RELATIME;
	return 0;
}

static int m_close(int fd)
{
	struct fd *f = get(fd);

	if (!f) {
		errno = EBADF;
		return -1;
	}
	f->open = 0;
	return 0;
}

static int m_fchdir(int fd)
{
	return stepfake_rec("fchdir(%s)", name_of(fd)) ? -1 : 0;
}

static int m_fchown(int fd, uid_t uid, gid_t gid)
{
	return stepfake_rec("fchown(%s, %u)", name_of(fd), uid) ? -1 : 0;
}

static ssize_t m_read(int fd, void *buf, size_t n)
{
	return stepfake_rec("read(%s)", name_of(fd)) ? -1 : 0;
}

static int m_fsopen(const char *fstype)
{
	if (stepfake_rec("fsopen(%s)", fstype))
		return -1;
	return new_fd('c', 'c', fstype);
}

static int m_fsconfig(int fd, unsigned int cmd, const char *key, const char *value)
{
	int r;

	switch (cmd) {
	case FSCONFIG_SET_STRING: r = stepfake_rec("fsconfig(%s, %s=%s)", name_of(fd), key, value); break;
	case FSCONFIG_SET_FLAG: r = stepfake_rec("fsconfig(%s, %s)", name_of(fd), key); break;
	case FSCONFIG_CMD_CREATE: r = stepfake_rec("fsconfig(%s, create)", name_of(fd)); break;
	default: r = stepfake_rec("fsconfig(%s, cmd %u)", name_of(fd), cmd);
	}
	return r ? -1 : 0;
}

static int m_fsmount(int fd, unsigned int attrs)
{
	if (stepfake_rec("fsmount(%s, 0x%x)", name_of(fd), attrs))
		return -1;
	return new_fd('t', 't', name_of(fd));
}

static int m_open_tree(int dirfd, const char *path, unsigned int flags)
{
	char name[NAME];

	const char *from = dirfd == AT_FDCWD ? path : name_of(dirfd);

	if (stepfake_rec("open_tree(%s%s)", from, flags & AT_RECURSIVE ? ", recursive" : ""))
		return -1;
	snprintf(name, sizeof(name), "tree:%s", from);
	return new_fd('t', 't', name);
}

static int m_move_mount(int from_dirfd, int to_dirfd)
{
	struct fd *tree = get(from_dirfd);
	char at[NAME];

	if (stepfake_rec("move_mount(%s -> %s)", name_of(from_dirfd), name_of(to_dirfd)))
		return -1;
	if (!tree || strncmp(tree->path, "tree:", 5) == 0)
		return 0; /* a bind: its tree keeps its source's name */
	snprintf(at, sizeof(at), "@%s", name_of(to_dirfd));
	if (!find('r', at))
		add_entry('d', at, NULL);
	snprintf(tree->path, sizeof(tree->path), "%s", at);
	return 0;
}

int stepfake_fstatat(int dirfd, const char *name, struct stat *st, int flags)
{
	char path[NAME];
	struct entry *e;

	join(name_of(dirfd), name, path);
	if (stepfake_rec("fstatat(%s)", path))
		return -1;
	if (!(e = find('r', path))) {
		errno = ENOENT;
		return -1;
	}
	memset(st, 0, sizeof(*st));
	st->st_mode = e->type == 'd' || e->type == 'r' ? S_IFDIR | 0755 : e->type == 'l' ? S_IFLNK | 0777 : S_IFREG | 0640;
	st->st_uid = st->st_gid = 7;
	return 0;
}

/* path's name when it is right under dir (of plen bytes), else NULL. */
static const char *child_of(const char *dir, size_t plen, const char *path)
{
	const char *name;

	if (strcmp(dir, "/") == 0)
		name = path[0] == '/' ? path + 1 : NULL;
	else
		name = strncmp(path, dir, plen) == 0 && path[plen] == '/' ? path + plen + 1 : NULL;
	return name && *name && !strchr(name, '/') ? name : NULL;
}

/* All the entries right under fd's directory in one batch, then none. */
long stepfake_getdents64(int fd, void *buf, size_t n)
{
	struct fd *f = get(fd);
	size_t used = 0, plen;

	if (stepfake_rec("getdents64(%s)", name_of(fd)))
		return -1;
	if (!f || f->listed)
		return 0;
	f->listed = 1;
	plen = strlen(f->path);
	for (size_t i = 0; i < n_entries; i++) {
		const char *name = child_of(f->path, plen, entries[i].path);
		struct { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; } *d;
		size_t reclen;

		if (entries[i].type < 'a' || !name)
			continue;
		reclen = (sizeof(*d) + strlen(name) + 1 + 7) & ~(size_t)7;
		if (used + reclen > n)
			break;
		d = (void *)((char *)buf + used);
		memset(d, 0, reclen);
		d->reclen = reclen;
		memcpy(d->name, name, strlen(name) + 1);
		used += reclen;
	}
	return used;
}

int stepfake_symlinkat(const char *target, int dirfd, const char *name)
{
	char path[NAME];

	join(name_of(dirfd), name, path);
	if (stepfake_rec("symlinkat(%s -> %s)", path, target))
		return -1;
	return add_entry('l', path, target) ? 0 : (errno = ENOSPC, -1);
}

int stepfake_fchownat(int dirfd, const char *name, uid_t uid, gid_t gid, int flags)
{
	char path[NAME];

	join(name_of(dirfd), name, path);
	return stepfake_rec("fchownat(%s, %u, %u)", path, uid, gid) ? -1 : 0;
}

int stepfake_fchmodat(int dirfd, const char *name, mode_t mode, int flags)
{
	char path[NAME];

	join(name_of(dirfd), name, path);
	return stepfake_rec("fchmodat(%s, %04o)", path, mode) ? -1 : 0;
}

int stepfake_fchmod(int fd, mode_t mode)
{
	return stepfake_rec("fchmod(%s, %04o)", name_of(fd), mode) ? -1 : 0;
}

int stepfake_utimensat(int dirfd, const char *name, const struct timespec times[2], int flags)
{
	char path[NAME];

	join(name_of(dirfd), name, path);
	return stepfake_rec("utimensat(%s)", path) ? -1 : 0;
}

static int m_mount_setattr(int dirfd, const char *path, unsigned int flags, struct mount_attr *attr, size_t size)
{
	return stepfake_rec("mount_setattr(%s%s, set 0x%llx, clr 0x%llx, prop 0x%llx)", dirfd == AT_FDCWD ? path : name_of(dirfd),
			    flags & AT_RECURSIVE ? ", recursive" : "", (unsigned long long)attr->attr_set,
			    (unsigned long long)attr->attr_clr, (unsigned long long)attr->propagation) ? -1 : 0;
}

static int load_tree(const char *tree)
{
	char line[2 * NAME + 8];

	n_entries = 0;
	while (tree && *tree) {
		size_t len = strcspn(tree, "\n");
		char type, path[NAME], target[NAME] = "";

		snprintf(line, sizeof(line), "%.*s", (int)len, tree);
		tree += len + (tree[len] == '\n');
		if (!line[0])
			continue;
		if (sscanf(line, "%c %255s %255s", &type, path, target) < 2 || !add_entry(type, path, target))
			return -1;
	}
	return 0;
}

int stepfake_mounts_run(const char *plan, size_t len, const char *tree, int enter, int fail_at, int fail_errno,
			char *err, size_t errlen, int *open_fds)
{
	struct stepfake_conf conf = { .fail_at = fail_at, .fail_errno = fail_errno };
	struct husk_kernel k = *stepfake_kernel();
	struct husk_mounts p;
	int rc;

	if (husk_parse_mounts(plan, len, &p, err, errlen) < 0)
		return -2;
	if (load_tree(tree) < 0) {
		husk_mounts_free(&p);
		snprintf(err, errlen, "bad tree");
		return -2;
	}
	n_fds = 0;
	root_path = p.root;
	k.open = m_open;
	k.openat2 = m_openat2;
	k.fstat = m_fstat;
	k.fstatfs = m_fstatfs;
	k.close = m_close;
	k.read = m_read;
	k.fchown = m_fchown;
	k.fchdir = m_fchdir;
	k.open_tree = m_open_tree;
	k.move_mount = m_move_mount;
	k.fsopen = m_fsopen;
	k.fsconfig = m_fsconfig;
	k.fsmount = m_fsmount;
	k.mount_setattr = m_mount_setattr;
	stepfake_begin(&conf);
	husk_k = &k;
	rc = husk_do_mounts(&p, err, errlen);
	if (rc == 0 && enter)
		rc = husk_enter_root(&p, err, errlen);
	husk_k = &husk_real_kernel;
	*open_fds = 0;
	for (size_t i = 0; i < n_fds; i++)
		*open_fds += fds[i].open;
	husk_mounts_free(&p);
	return rc;
}

int stepfake_fsetxattr(int fd, const char *name, const void *value, size_t size, int flags)
{
	return stepfake_rec("fsetxattr(%s, %s, %.*s)", name_of(fd), name, (int)size, (const char *)value) ? -1 : 0;
}

int stepfake_unlinkat(int dirfd, const char *name, int flags)
{
	char path[NAME];
	struct entry *e;

	join(name_of(dirfd), name, path);
	if (stepfake_rec("unlinkat(%s)", path))
		return -1;
	if (!(e = find('r', path))) {
		errno = ENOENT;
		return -1;
	}
	e->path[0] = '\0'; /* gone */
	return 0;
}
