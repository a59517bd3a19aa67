/*
 * The launcher's mounts (mounts.h): each step of the parsed plan
 * (mountparse.c) made inside the root, in order, as Go init makes it
 * today (libcontainer/rootfs: mount.go, bind.go, tmpfs.go, cgroup.go,
 * dev.go, cwd.go), with the new mount API:
 *
 *   destination  resolved inside the root (mountresolve.c: SecureJoin's
 *                rule, each component looked up by openat2
 *                RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), refused inside
 *                /proc but where runc allows (configs/procmount.go), then
 *                walked again from the root's fd without following
 *                anything, what is missing made (mkdirat, mknodat);
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
#include "mounts_int.h"


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
static int remount_exact(struct husk_mrun *r, int fd, uint32_t flags, uint32_t cleared)
{
	uint32_t want = flags & ~BIND_FLAGS, has, locked, asked;
	char a[128], b[128];
	struct statfs st;

	if (set_exact(fd, want) == 0)
		return 0;
	if (errno != EPERM)
		return husk_mfail(r, "remount with flags 0x%x: mount_setattr: %s", want, husk_errtext(errno));
	if (husk_k->fstatfs(fd, &st) < 0)
		return husk_mfail(r, "fstatfs: %s", husk_errtext(errno));
	has = ms_from_st(st.f_flags);
	if ((locked = has & LOCKABLE & cleared))
		return husk_mfail(r, "cannot clear flags locked on the source (%s): mount_setattr: %s",
			    flag_names(locked, a, sizeof(a)), husk_errtext(EPERM));
	asked = want & ATIME_FLAGS;
	if (asked && asked != (has & ATIME_FLAGS))
		return husk_mfail(r, "cannot change the atime flags locked on the source (%s) to %s: mount_setattr: %s",
			    flag_names(has & ATIME_FLAGS, a, sizeof(a)), flag_names(asked, b, sizeof(b)),
			    husk_errtext(EPERM));
	want |= has & LOCKABLE;
	if (set_exact(fd, want) < 0)
		return husk_mfail(r, "remount with flags 0x%x: mount_setattr: %s", want, husk_errtext(errno));
	return 0;
}

/* Go's finishMount: the recursive attributes, then each propagation. */
static int finish_mount(struct husk_mrun *r, const struct husk_mount *m)
{
	const struct husk_mount_head *h = &m->h;
	int fd;

	if (!h->rec_set && !h->rec_clr && !h->prop[0])
		return 0;
	fd = husk_open_in_root(r, m->dest, MUST_EXIST, NULL);
	if (fd < 0)
		return -1;
	if (h->rec_set || h->rec_clr) {
		struct mount_attr a = { .attr_set = h->rec_set, .attr_clr = h->rec_clr };

		if (husk_k->mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0) {
			husk_mclose(fd);
			return husk_mfail(r, "set recursive attributes (set 0x%llx, clear 0x%llx): mount_setattr: %s",
				    (unsigned long long)h->rec_set, (unsigned long long)h->rec_clr,
				    husk_errtext(errno));
		}
	}
	for (int i = 0; i < HUSK_MOUNTS_MAX_PROP && h->prop[i]; i++) {
		struct mount_attr a = { .propagation = h->prop[i] & ~(uint32_t)MS_REC };
		unsigned int at = AT_EMPTY_PATH | (h->prop[i] & MS_REC ? AT_RECURSIVE : 0);

		if (husk_k->mount_setattr(fd, "", at, &a, sizeof(a)) < 0) {
			husk_mclose(fd);
			return husk_mfail(r, "set propagation 0x%x: mount_setattr: %s", h->prop[i], husk_errtext(errno));
		}
	}
	husk_k->close(fd);
	return 0;
}

/* Attaches the detached tree from on the destination fd to. */
static int attach(struct husk_mrun *r, int from, int to)
{
	if (husk_k->move_mount(from, to) < 0)
		return husk_mfail(r, "move_mount: %s", husk_errtext(errno));
	return 0;
}

/* Opens a bind's source: the parent's fd, a path inside the root, or
 * the host's path. */
static int open_source(struct husk_mrun *r, const struct husk_mount *m)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	int fd;

	if (m->h.kind == HUSK_MOUNT_BIND_FD && (m->h.opts & HUSK_MOUNT_ASK)) {
		char why[sizeof(r->why)];

		if (!r->p->ask_source)
			return husk_mfail(r, "the source must be opened by the parent: no one to ask");
		fd = r->p->ask_source(r->p->ask_ctx, m->h.index, why, sizeof(why));
		return fd < 0 ? husk_mfail(r, "%s", why) : fd;
	}
	if (m->h.kind == HUSK_MOUNT_BIND_FD)
		return m->h.fd;
	if (m->h.opts & HUSK_MOUNT_IN_ROOT) {
		fd = husk_k->openat2(r->root, m->source, &how, sizeof(how));
		if (fd < 0)
			return husk_mfail(r, "open %s inside the rootfs: openat2: %s", m->source, husk_errtext(errno));
		return fd;
	}
	fd = husk_k->open(m->source, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return husk_mfail(r, "open %s: %s", m->source, husk_errtext(errno));
	return fd;
}

/* Go's bindFd, then finishBind: src bound at the destination, made as a
 * directory or a file as src is one; its flags, attributes and
 * propagation after. Closes src. */
static int bind_fd(struct husk_mrun *r, const struct husk_mount *m, int src, uint32_t flags, const char *dest)
{
	struct statfs fs;
	struct stat st;
	int dst, tree, rc;
	unsigned int clone = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH;

	if (strcmp(dest, "/proc") == 0) { /* Go's checkProcSource */
		if (husk_k->fstatfs(src, &fs) < 0) {
			husk_mfail(r, "statfs the source of the bind on /proc: fstatfs: %s", husk_errtext(errno));
			goto out;
		}
		if (fs.f_type != PROC_SUPER_MAGIC) {
			husk_mfail(r, "\"%s\" cannot be mounted because it is not of type proc (the bind's source is not a procfs)",
			     dest);
			goto out;
		}
	}
	if (husk_k->fstat(src, &st) < 0) {
		husk_mfail(r, "fstat: %s", husk_errtext(errno));
		goto out;
	}
	dst = husk_open_in_root(r, m->dest, S_ISDIR(st.st_mode) ? MAKE_DIR : MAKE_FILE, dest);
	if (dst < 0)
		goto out;
	tree = src;
	if (!(m->h.opts & HUSK_MOUNT_DETACHED)) {
		tree = husk_k->open_tree(src, "", clone | (flags & MS_REC ? AT_RECURSIVE : 0));
		if (tree < 0)
			husk_mfail(r, "open_tree: %s", husk_errtext(errno));
	}
	rc = tree < 0 ? -1 : attach(r, tree, dst);
	if (tree != src)
		husk_mclose(tree);
	husk_k->close(dst);
	husk_k->close(src);
	if (rc < 0)
		return -1;
	if ((flags & ~BIND_FLAGS) || m->h.cleared) {
		dst = husk_open_in_root(r, m->dest, MUST_EXIST, NULL);
		if (dst < 0)
			return -1;
		rc = remount_exact(r, dst, flags, m->h.cleared);
		husk_k->close(dst);
		if (rc < 0)
			return -1;
	}
	return finish_mount(r, m);
out:
	husk_mclose(src);
	return -1;
}

/* dest: where m's destination leads (secure_join). */
static int bind_path(struct husk_mrun *r, const struct husk_mount *m, uint32_t flags, const char *dest)
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
static int config(struct husk_mrun *r, int fs, unsigned int cmd, const char *key, const char *value)
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
		husk_mfail(r, "fsconfig create: %s%s%s%s", husk_errtext(e), msg[0] ? " (" : "", msg, msg[0] ? ")" : "");
	else
		husk_mfail(r, "fsconfig %s%s%s: %s%s%s%s", key, value ? "=" : "", value ? value : "", husk_errtext(e),
		     msg[0] ? " (" : "", msg, msg[0] ? ")" : "");
	return -1;
}

/* A new filesystem, configured and mounted detached: its fd, or -1. */
static int make_fs(struct husk_mrun *r, const struct husk_mount *m, uint32_t flags, const char *mode)
{
	char opts[PATH_BYTES + 32];
	int fs, mnt = -1, n;

	fs = husk_k->fsopen(m->fstype);
	if (fs < 0)
		return husk_mfail(r, "fsopen %s: %s", m->fstype, husk_errtext(errno));
	if (config(r, fs, FSCONFIG_SET_STRING, "source", m->source) < 0)
		goto out;
	n = husk_split_mount_data(m->data, opts, sizeof(opts) - 32);
	if (n < 0) {
		husk_mfail(r, "options \"%s\": too long", m->data);
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
		husk_mfail(r, "fsmount: %s", husk_errtext(errno));
out:
	husk_mclose(fs);
	return mnt;
}

/* Go's labelRoot: the mount label on the root of mnt (mqueue, which
 * takes no context=), set through the mount, not a path. */
static int label_root(struct husk_mrun *r, const struct husk_mount *m, int mnt)
{
	int root = husk_k->openat(mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0), rc;

	if (root < 0)
		return husk_mfail(r, "linux.mountLabel \"%s\": open the root: openat: %s", m->root_label,
			    husk_errtext(errno));
	rc = husk_k->fsetxattr(root, "security.selinux", m->root_label, strlen(m->root_label), 0);
	husk_mclose(root);
	if (rc < 0)
		return husk_mfail(r, "linux.mountLabel \"%s\": setxattr security.selinux: %s", m->root_label,
			    husk_errtext(errno));
	return 0;
}

/* Go's tmpcopyup: the tmpfs mnt, attached over covered, filled with a
 * copy of it, then made read-only when asked. */
static int copy_up(struct husk_mrun *r, const struct husk_mount *m, int covered, int mnt)
{
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
	char why[sizeof(r->why)];
	int to, rc;

	to = husk_k->openat(mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (to < 0)
		return husk_mfail(r, "tmpcopyup: open the tmpfs: openat: %s", husk_errtext(errno));
	rc = husk_copy_up(covered, to, why, sizeof(why));
	husk_k->close(to);
	if (rc < 0)
		return husk_mfail(r, "tmpcopyup: %s", why);
	if ((m->h.flags & MS_RDONLY) && husk_k->mount_setattr(mnt, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0)
		return husk_mfail(r, "remount with flags 0x%x: mount_setattr: %s", MS_RDONLY, husk_errtext(errno));
	return 0;
}

/* runc's mount(2) of a filesystem, for what fsconfig(2) cannot say
 * (HUSK_MOUNT_LEGACY): onto the destination already resolved inside the
 * root (dst), named through /proc/thread-self/fd. Closes dst. */
static int legacy_fs(struct husk_mrun *r, const struct husk_mount *m, uint32_t flags, int dst, const char *mode)
{
	char target[64], data[PATH_BYTES + 16];
	int rc;

	snprintf(target, sizeof(target), "/proc/thread-self/fd/%d", dst);
	snprintf(data, sizeof(data), "%s%s%s%s", m->data, mode && m->data[0] ? "," : "", mode ? "mode=" : "",
		 mode ? mode : "");
	rc = husk_k->mount(m->source, target, m->fstype, flags & ~(uint32_t)(MS_SHARED | MS_SLAVE | MS_PRIVATE | MS_UNBINDABLE),
			   data);
	if (rc < 0)
		husk_mfail(r, "mount: %s", husk_errtext(errno));
	husk_k->close(dst);
	return rc < 0 ? -1 : finish_mount(r, m);
}

/* Go's mountOne for a filesystem (tmpfs.go's mountTmpfs for a tmpfs):
 * the destination opened, the filesystem made and attached; refused
 * with EPERM, the host directory bound instead where Go init does. */
static int filesystem(struct husk_mrun *r, const struct husk_mount *m, uint32_t flags, const char *dest)
{
	char mode[8], *with_mode = NULL;
	int dst = -1, mnt, rc;
	struct stat st;

	switch (m->h.dest) {
	case HUSK_DEST_COVERED:
		dst = husk_open_in_root(r, m->dest, MUST_EXIST, dest);
		if (dst >= 0 && (m->h.opts & HUSK_MOUNT_TMPFS_MODE) && husk_k->fstat(dst, &st) == 0 &&
		    S_ISDIR(st.st_mode)) {
			snprintf(mode, sizeof(mode), "%o", st.st_mode & 07777);
			with_mode = mode;
		}
		if (dst < 0)
			dst = husk_open_in_root(r, m->dest, MAKE_DIR, dest);
		break;
	case HUSK_DEST_REAL_DIR:
		dst = husk_open_in_root(r, m->dest, REAL_DIR, NULL);
		break;
	default:
		dst = husk_open_in_root(r, m->dest, MAKE_DIR, dest);
	}
	if (dst < 0)
		return -1;
	if (m->h.opts & HUSK_MOUNT_LEGACY)
		return legacy_fs(r, m, flags, dst, with_mode);
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
		return husk_mfail(r, "%s not permitted, bind host %s instead: %s", m->fstype, m->fallback, why);
	}
	if (mnt < 0 && (m->h.opts & HUSK_MOUNT_LABELLED)) {
		char why[sizeof(r->why)], data[sizeof(r->why)];

		snprintf(why, sizeof(why), "%s", r->why);
		husk_mfail(r, "data %s (linux.mountLabel): %s", husk_mquote(m->data, data, sizeof(data)), why);
	}
	rc = mnt < 0 ? -1 : attach(r, mnt, dst);
	if (rc == 0 && m->root_label[0])
		rc = label_root(r, m, mnt);
	if (rc == 0 && (m->h.opts & HUSK_MOUNT_COPYUP))
		rc = copy_up(r, m, dst, mnt);
	husk_mclose(mnt);
	husk_k->close(dst);
	if (rc < 0)
		return -1;
	return finish_mount(r, m);
}

/* Go's coverRoot: after a mount on "/" itself, the root's fd is reopened
 * so that the next mounts land on it, not under it. */
static int cover_root(struct husk_mrun *r, const char *dest)
{
	char clean[PATH_BYTES];
	int fd;

	husk_clean_path(dest, clean);
	if (strcmp(clean, "/") != 0)
		return 0;
	fd = husk_k->open(r->p->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return husk_mfail(r, "reopen the rootfs %s: open: %s", r->p->root, husk_errtext(errno));
	husk_k->close(r->root);
	r->root = fd;
	return 0;
}

/* A co-mounted cgroup v1 controller's symlink (Go's mountHierarchy): in
 * the directory at destination, made unless there. */
static int symlink_in(struct husk_mrun *r, const struct husk_mount *m)
{
	int dir = husk_open_in_root(r, m->dest, MUST_EXIST, NULL), rc;

	if (dir < 0)
		return -1;
	if ((m->h.opts & HUSK_MOUNT_REPLACE) && husk_k->unlinkat(dir, m->data, 0) < 0 && errno != ENOENT) {
		husk_mclose(dir);
		return husk_mfail(r, "unlinkat: %s", husk_errtext(errno));
	}
	rc = husk_k->symlinkat(m->source, dir, m->data);
	husk_mclose(dir);
	if (rc < 0 && errno != EEXIST)
		return husk_mfail(r, "symlinkat: %s", husk_errtext(errno));
	return 0;
}

/* Go's remountBind: flags added to the mount at destination, the others
 * kept (cleared: asked off); then its recursive attributes, propagation. */
static int remount_add(struct husk_mrun *r, const struct husk_mount *m)
{
	uint32_t has, want;
	struct statfs st;
	int fd, rc = 0;

	if ((m->h.flags & ~BIND_FLAGS) || m->h.cleared) {
		fd = husk_open_in_root(r, m->dest, MUST_EXIST, NULL);
		if (fd < 0)
			return -1;
		if (husk_k->fstatfs(fd, &st) < 0) {
			husk_mclose(fd);
			return husk_mfail(r, "statfs: %s", husk_errtext(errno));
		}
		has = ms_from_st(st.f_flags);
		want = ((has | (m->h.flags & ~BIND_FLAGS)) & ~(m->h.cleared & LOCKABLE)) | (has & ATIME_FLAGS);
		if (want != has && set_exact(fd, want) < 0)
			rc = husk_mfail(r, "remount with flags 0x%x: mount_setattr: %s", want, husk_errtext(errno));
		husk_k->close(fd);
		if (rc < 0)
			return -1;
	}
	return finish_mount(r, m);
}

/* Go's makeCwd: destination made when it is missing, inside the root;
 * one that exists, or leads through a /proc magic link, is left to the
 * launcher's chdir, which says what is wrong with it. */
static int make_missing(struct husk_mrun *r, const struct husk_mount *m)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	int fd = husk_k->openat2(r->root, m->dest, &how, sizeof(how));

	if (fd >= 0)
		husk_k->close(fd);
	if (fd >= 0 || (errno != ENOENT && errno != ENOSYS))
		return 0;
	fd = husk_open_in_root(r, m->dest, MAKE_DIR, NULL);
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
static int bind_device(struct husk_mrun *r, const struct husk_mount *m)
{
	const struct husk_mount_device *d = &m->dev;
	struct stat st;
	int src, dst, rc;

	src = husk_k->open_tree(AT_FDCWD, m->dest, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (src < 0)
		return husk_mfail(r, "mknod not permitted, bind host %s: open_tree: %s", m->dest, husk_errtext(errno));
	if (husk_k->fstat(src, &st) < 0) {
		husk_mclose(src);
		return husk_mfail(r, "mknod not permitted, host %s: fstat: %s", m->dest, husk_errtext(errno));
	}
	if ((st.st_mode & S_IFMT) != (d->mode & S_IFMT) || st.st_rdev != d->rdev) {
		husk_k->close(src);
		return husk_mfail(r, "mknod not permitted, host %s: is not the %c device %u:%u (mode %#o, device %u:%u)", m->dest,
			    device_type(d->mode), major(d->rdev), minor(d->rdev), st.st_mode, major(st.st_rdev),
			    minor(st.st_rdev));
	}
	dst = husk_open_in_root(r, m->dest, MAKE_FILE, NULL);
	if (dst < 0) {
		husk_k->close(src);
		return -1;
	}
	rc = husk_k->fstat(dst, &st);
	if (rc < 0)
		husk_mfail(r, "fstat: %s", husk_errtext(errno));
	else if (!S_ISREG(st.st_mode))
		rc = husk_mfail(r, "bind target is not a regular file (mode %#o)", st.st_mode);
	else if ((rc = husk_k->move_mount(src, dst)) < 0)
		husk_mfail(r, "mknod not permitted, bind host %s: move_mount: %s", m->dest, husk_errtext(errno));
	husk_k->close(dst);
	husk_k->close(src);
	return rc;
}

/* Go's createDevice: a node of linux.devices made with mknod, its mode
 * and owner set exactly; one already there is left. */
static int device(struct husk_mrun *r, const struct husk_mount *m)
{
	const struct husk_mount_device *d = &m->dev;
	char dir[PATH_BYTES];
	const char *name = strrchr(m->dest, '/') + 1;
	int fd, rc;

	snprintf(dir, sizeof(dir), "%.*s", (int)(name - m->dest), m->dest);
	fd = husk_open_in_root(r, dir[1] ? dir : "/", MAKE_DIR, NULL);
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
		husk_mfail(r, "mknodat: %s", husk_errtext(errno));
	else if ((rc = husk_k->fchmodat(fd, name, d->mode & 07777, 0)) < 0) /* mknod's went through the umask */
		husk_mfail(r, "fchmodat: %s", husk_errtext(errno));
	else if ((rc = husk_k->fchownat(fd, name, d->uid, d->gid, AT_SYMLINK_NOFOLLOW)) < 0)
		husk_mfail(r, "fchownat: %s", husk_errtext(errno));
	husk_k->close(fd);
	return rc;
}

static int mount_one(struct husk_mrun *r, const struct husk_mount *m)
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
	if (husk_secure_join(r, m->dest, dest) < 0)
		return -1;
	if (husk_mount_proc_check(dest, m->fstype, m->h.kind != HUSK_MOUNT_FS, r->why, sizeof(r->why)) < 0)
		return -1;
	if (m->h.kind == HUSK_MOUNT_FS)
		return filesystem(r, m, flags, dest);
	return bind_path(r, m, flags, dest);
}

/* Sets the propagation flags (MS_* | MS_REC) on the mount at path. */
int husk_propagate_path(const char *path, uint32_t flags)
{
	struct mount_attr a = { .propagation = flags & ~(uint32_t)MS_REC };
	int fd = husk_k->open(path, O_PATH | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = husk_k->mount_setattr(fd, "", AT_EMPTY_PATH | (flags & MS_REC ? AT_RECURSIVE : 0), &a, sizeof(a));
	husk_mclose(fd);
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

	if (husk_propagate_path("/", pr->root_flags) < 0)
		return husk_merr(err, errlen, "linux.rootfsPropagation 0x%x: set on /: %s", pr->root_flags, husk_errtext(errno));
	for (uint32_t i = 0; i < pr->n; i++)
		if (husk_propagate_path(p->points[i], pr->flags[i]) < 0)
			return husk_merr(err, errlen, "linux.rootfsPropagation: make mount %s %s: %s", p->points[i],
				    pr->flags[i] == MS_SLAVE ? "slave" : "private", husk_errtext(errno));
	tree = husk_k->open_tree(AT_FDCWD, p->root, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (tree < 0)
		return husk_merr(err, errlen, "root.path \"%s\": bind onto itself: open_tree: %s", p->root, husk_errtext(errno));
	dst = husk_k->open(p->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	rc = dst < 0 ? -1 : husk_k->move_mount(tree, dst);
	if (rc < 0)
		husk_merr(err, errlen, "root.path \"%s\": bind onto itself: %s: %s", p->root, dst < 0 ? "open" : "move_mount",
		     husk_errtext(errno));
	husk_mclose(dst);
	husk_k->close(tree);
	return rc;
}

int husk_do_mounts(const struct husk_mounts *p, char *err, size_t errlen)
{
	struct husk_mrun r = { .p = p };

	if (p->has_prepare && prepare(p, err, errlen) < 0)
		return -1;

	r.root = husk_k->open(p->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r.root < 0)
		return husk_merr(err, errlen, "root.path %s: open: %s", p->root, husk_errtext(errno));
	for (size_t i = 0; i < p->n; i++) {
		const struct husk_mount *m = &p->m[i];

		char path[256];

		if (mount_one(&r, m) == 0 && (m->is_device || cover_root(&r, m->dest) == 0))
			continue;
		husk_k->close(r.root);
		if (m->is_device)
			return husk_merr(err, errlen, "devices[%u] %s: %s", m->dev.index, husk_mquote(m->dest, path, sizeof(path)), r.why);
		return husk_merr(err, errlen, "%s: %s", m->head, r.why);
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
