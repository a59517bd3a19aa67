/*
 * The rootfs's last steps (launch.h), pid 1's first after it built the
 * container (build.c), for a container's init with a mount namespace of its own, in
 * runc's order (its standard init: finalizeRootfs right after the
 * console, the read-only and masked paths after the sysctls): a read-only
 * /dev, a read-only "/" (root.readonly), read-only paths
 * (linux.readonlyPaths), masked paths (linux.maskedPaths), with the host
 * name and the sysctls (system.c) between "/" and the read-only paths.
 *
 * Everything under the root belongs to the image, and so to an attacker
 * (CVE-2025-31133, CVE-2025-52881): its /dev/null may be a symlink to a
 * /proc/sys file, turning "mask /proc/timer_list" into a writable host
 * sysctl; a masked path may be a symlink to anything. So no path is handed
 * to a mount call here. Each target is opened once, as an O_PATH fd, by
 * openat2 with RESOLVE_NO_SYMLINKS, and checked: its type, and its
 * filesystem (procfs under /proc, sysfs under /sys). The mask is then
 * attached onto that very fd with move_mount.
 *
 * What masks a file is the container's own /dev/null when it is checked
 * to be char 1:3 (reached without a symlink, on a mount allowing devices),
 * else the host's, cloned by the build before pivot_root, when "/" was
 * still the host's, and checked the same way (l->dev_null_fd). What masks a directory is one read-only tmpfs, made
 * with fsopen and shared by all masked directories, as runc does: one
 * superblock, not one per path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>

#include "kernel.h"
#include "launch.h"

#define WHY HUSK_WHY

int husk_whyf(char *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, WHY, fmt, ap);
	va_end(ap);
	return -1;
}

/* A failed call: "name: errno text", the words Go's os.NewSyscallError
 * gave. */
static int call_failed(char *why, const char *call)
{
	return husk_whyf(why, "%s: %s", call, husk_errtext(errno));
}

/* MOUNT_ATTR_* bits set on the mount fd is itself (AT_EMPTY_PATH). */
static int set_attr(int fd, unsigned int flags, unsigned long long set)
{
	struct mount_attr a = {.attr_set = set};

	return husk_k->mount_setattr(fd, "", flags | AT_EMPTY_PATH, &a, sizeof(a));
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		husk_k->close(*fd);
	*fd = -1;
}

/* s quoted as Go's %q quotes a path (launch.h): '"' and '\' escaped,
 * control bytes as \xNN. */
const char *husk_quote(const char *s, char *buf, size_t n)
{
	size_t used = 0;

	buf[used++] = '"';
	for (; *s && used + 6 < n; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			used += snprintf(buf + used, n - used, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			used += snprintf(buf + used, n - used, "\\x%02x", c);
		else
			buf[used++] = c;
	}
	buf[used++] = '"';
	buf[used] = '\0';
	return buf;
}

/* Fails unless fd is the character device 1:3. */
static int check_dev_null(int fd, char *why)
{
	struct stat st;

	if (husk_k->fstat(fd, &st) < 0)
		return call_failed(why, "fstat");
	if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
		return husk_whyf(why, "not the character device 1:3 (mode %#o, device %u:%u)", st.st_mode,
			    major(st.st_rdev), minor(st.st_rdev));
	return 0;
}

/*
 * A detached clone of the container's own /dev/null (as runc masks with,
 * so /proc/mounts reads the same), or -1 when that is not the character
 * device 1:3 reached without a symlink, on a mount that allows devices:
 * then the host's masks instead. The clone is made from the fd that was
 * checked, never from the path again.
 */
static int container_dev_null(void)
{
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	char why[WHY];
	struct statfs fs;
	int fd = husk_k->openat2(AT_FDCWD, "/dev/null", &how, sizeof(how)), clone = -1;

	if (fd < 0)
		return -1;
	if (check_dev_null(fd, why) == 0 && husk_k->fstatfs(fd, &fs) == 0 && !(fs.f_flags & ST_NODEV)) {
		clone = husk_k->open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
		if (clone >= 0 && check_dev_null(clone, why) < 0)
			close_fd(&clone);
	}
	close_fd(&fd);
	return clone < 0 ? -1 : clone;
}

/* Nothing (0) when p does not resolve to anything (a dangling symlink:
 * skipped, as runc skips it), else a refusal. The stat only decides
 * between the two; nothing is mounted on what it finds. */
static int symlink_error(const char *p, int err, char *why)
{
	struct stat st;

	if (husk_k->stat(p, &st) < 0 && errno == ENOENT)
		return 0;
	return husk_whyf(why, "resolves through a symlink, which husk does not follow: openat2: %s", husk_errtext(err));
}

/* Fails when fd, the target for p, is not on procfs under /proc or on
 * sysfs under /sys. */
static int check_filesystem(int fd, const char *p, char *why)
{
	struct statfs fs;
	long want;
	const char *name;

	if (strcmp(p, "/proc") == 0 || strncmp(p, "/proc/", 6) == 0)
		want = PROC_SUPER_MAGIC, name = "procfs";
	else if (strcmp(p, "/sys") == 0 || strncmp(p, "/sys/", 5) == 0)
		want = SYSFS_MAGIC, name = "sysfs";
	else
		return 0;
	if (husk_k->fstatfs(fd, &fs) < 0)
		return call_failed(why, "fstatfs");
	if ((long)fs.f_type != want)
		return husk_whyf(why, "not on %s (filesystem magic %#lx)", name, (unsigned long)fs.f_type);
	return 0;
}

/*
 * Opens p, an absolute path of the container's root, as an O_PATH fd
 * without following any symlink, and checks it is on the filesystem it
 * must be on. *fd is -1 and the result 0 when p does not exist or is a
 * dangling symlink: there is nothing to protect. A symlink anywhere in p
 * that leads somewhere is an error: husk never mounts through one.
 */
static int open_target(const char *p, int *fd, char *why)
{
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	struct stat st;

	*fd = husk_k->openat2(AT_FDCWD, p, &how, sizeof(how));
	if (*fd < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno == ELOOP || errno == ENOTDIR)
			return symlink_error(p, errno, why);
		return call_failed(why, "openat2");
	}
	if (husk_k->fstat(*fd, &st) < 0) {
		call_failed(why, "fstat");
		close_fd(fd);
		return -1;
	}
	if (S_ISLNK(st.st_mode)) { /* O_PATH|O_NOFOLLOW opened the symlink itself */
		close_fd(fd);
		return symlink_error(p, ELOOP, why);
	}
	if (check_filesystem(*fd, p, why) < 0) {
		close_fd(fd);
		return -1;
	}
	return 0;
}

/* A mount to attach onto targets: the first attach moves the detached
 * mount itself; once attached, each further attach moves a clone of it
 * (the kernel clones only mounts of the caller's namespace). */
struct mount_src {
	int fd, attached;
};

static int attach(struct mount_src *s, int target, char *why)
{
	int clone, r;

	if (!s->attached) {
		if (husk_k->move_mount(s->fd, target) < 0)
			return call_failed(why, "move_mount");
		s->attached = 1;
		return 0;
	}
	clone = husk_k->open_tree(s->fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (clone < 0)
		return call_failed(why, "open_tree");
	r = husk_k->move_mount(clone, target) < 0 ? call_failed(why, "move_mount") : 0;
	close_fd(&clone);
	return r;
}

/* The empty, read-only tmpfs that masks directories, as a detached
 * mount, named and flagged as runc's (/proc/mounts reads the same), with
 * the mount label as its context (runc's maskDir). */
static int mask_tmpfs(const char *label, char *why)
{
	char q[WHY];
	int fs = husk_k->fsopen("tmpfs"), m = -1;

	if (fs < 0)
		return call_failed(why, "fsopen");
	if (husk_k->fsconfig(fs, FSCONFIG_SET_STRING, "source", "tmpfs") < 0)
		call_failed(why, "fsconfig source");
	else if (label && husk_k->fsconfig(fs, FSCONFIG_SET_STRING, "context", label) < 0)
		husk_whyf(why, "linux.mountLabel %s: fsconfig context: %s", husk_quote(label, q, sizeof(q)), husk_errtext(errno));
	else if (husk_k->fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL) < 0)
		call_failed(why, "fsconfig");
	else if ((m = husk_k->fsmount(fs, MOUNT_ATTR_RDONLY)) < 0)
		call_failed(why, "fsmount");
	close_fd(&fs);
	return m;
}

struct masks {
	struct mount_src file, dir;
	const char *label;
};

static int mask(struct masks *m, const char *p, char *why)
{
	struct stat st;
	int t, r;

	if (open_target(p, &t, why) < 0)
		return -1;
	if (t < 0)
		return 0;
	if (husk_k->fstat(t, &st) < 0) {
		r = call_failed(why, "fstat");
	} else if (S_ISDIR(st.st_mode)) {
		r = 0;
		if (m->dir.fd < 0 && (m->dir.fd = mask_tmpfs(m->label, why)) < 0)
			r = -1;
		if (r == 0)
			r = attach(&m->dir, t, why);
	} else if (m->file.fd < 0) {
		r = husk_whyf(why, "no /dev/null to mask it with (the host's was not cloned before pivot_root)");
	} else {
		r = attach(&m->file, t, why);
	}
	close_fd(&t);
	return r;
}

/* Masks each of the paths once (a path listed twice is masked once): a
 * file under /dev/null, a directory under the shared read-only tmpfs. A
 * path that does not exist, or is a dangling symlink, is skipped, as runc
 * does. */
int husk_mask_paths(struct husk_launch *l)
{
	const struct husk_plan *p = l->plan;
	struct masks m = {.file = {.fd = container_dev_null()}, .dir = {.fd = -1}, .label = p->mount_label};
	char why[WHY], q[WHY];
	int r = 0;

	if (m.file.fd >= 0)
		close_fd(&l->dev_null_fd);
	else
		m.file.fd = l->dev_null_fd;
	l->dev_null_fd = -1; /* m owns it now */
	for (size_t i = 0; i < p->n_masked && r == 0; i++) {
		size_t seen = 0;

		while (seen < i && strcmp(p->masked[seen], p->masked[i]) != 0)
			seen++;
		if (seen < i)
			continue;
		if (mask(&m, p->masked[i], why) < 0)
			r = husk_launch_errf(l, "maskedPaths[%zu] %s: %s", i, husk_quote(p->masked[i], q, sizeof(q)), why);
	}
	close_fd(&m.file.fd);
	close_fd(&m.dir.fd);
	return r;
}

/* A recursive clone of the tree at p, made read-only (its other flags,
 * locked or not, kept), attached back onto it. */
static int readonly_path(const char *p, char *why)
{
	int t, clone = -1, r = -1;

	if (open_target(p, &t, why) < 0)
		return -1;
	if (t < 0)
		return 0;
	clone = husk_k->open_tree(t, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
	if (clone < 0)
		call_failed(why, "open_tree");
	else if (set_attr(clone, AT_RECURSIVE, MOUNT_ATTR_RDONLY) < 0)
		call_failed(why, "mount_setattr");
	else if (husk_k->move_mount(clone, t) < 0)
		call_failed(why, "move_mount");
	else
		r = 0;
	close_fd(&clone);
	close_fd(&t);
	return r;
}

/* Makes each of the paths read-only; one that does not exist is skipped. */
int husk_readonly_paths(struct husk_launch *l)
{
	const struct husk_plan *p = l->plan;
	char why[WHY], q[WHY];

	for (size_t i = 0; i < p->n_rdonly; i++)
		if (readonly_path(p->rdonly[i], why) < 0)
			return husk_launch_errf(l, "readonlyPaths[%zu] %s: %s", i, husk_quote(p->rdonly[i], q, sizeof(q)), why);
	return 0;
}

/* Makes the mount at p (no symlink in p) read-only: that mount alone, its
 * other attributes kept. Nothing there: nothing to do. */
static int readonly_mount(const char *p, char *why)
{
	int t, r = 0;

	if (open_target(p, &t, why) < 0)
		return -1;
	if (t < 0)
		return 0;
	if (set_attr(t, 0, MOUNT_ATTR_RDONLY) < 0)
		r = call_failed(why, "mount_setattr");
	close_fd(&t);
	return r;
}

/* A read-only /dev, mounted writable, made read-only now that its
 * submounts, device nodes and the console are there (runc's
 * finalizeRootfs). */
int husk_readonly_dev(struct husk_launch *l)
{
	char why[WHY];

	if (readonly_mount("/dev", why) < 0)
		return husk_launch_errf(l, "%s: make it read-only: %s", l->plan->rodev_name, why);
	return 0;
}

/* root.readonly: "/" read-only (runc's finalizeRootfs, after /dev). A
 * mask or a read-only path is a mount: "/" read-only takes none away. */
int husk_readonly_root(struct husk_launch *l)
{
	char why[WHY];

	if (readonly_mount("/", why) < 0)
		return husk_launch_errf(l, "root.readonly: remount / read-only: %s", why);
	return 0;
}
