/*
 * Into the rootfs (mounts.h's husk_enter_root): pivot_root, or
 * --no-pivot's move onto "/", then the propagation asked after, as Go
 * init's libcontainer/rootfs/pivot.go. Run after the mounts, once the
 * createRuntime and createContainer hooks have.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "kernel.h"
#include "launch.h"
#include "mounts.h"
#include "mounts_int.h"

static int cover(const char *path)
{
	int fs = husk_k->fsopen("tmpfs"), mnt = -1, dst = -1, rc = -1;

	if (fs >= 0 && husk_k->fsconfig(fs, FSCONFIG_SET_STRING, "source", "tmpfs") == 0 &&
	    husk_k->fsconfig(fs, FSCONFIG_SET_FLAG, "ro", NULL) == 0 &&
	    husk_k->fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL) == 0 &&
	    (mnt = husk_k->fsmount(fs, MOUNT_ATTR_RDONLY)) >= 0 &&
	    (dst = husk_k->open(path, O_PATH | O_CLOEXEC)) >= 0)
		rc = husk_k->move_mount(mnt, dst);
	husk_mclose(dst);
	husk_mclose(mnt);
	husk_mclose(fs);
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

		if (husk_propagate_path(path, MS_SLAVE | MS_REC) < 0) {
			if (errno == ENOENT || errno == EINVAL)
				continue; /* already gone with a detached parent */
			return husk_merr(err, errlen, "--no-pivot: move %s to /: host %s %s: %s", p->root, type, path,
				    husk_errtext(errno));
		}
		rc = husk_k->umount2(path, MNT_DETACH);
		if (rc < 0 && (errno == EPERM || errno == EINVAL))
			rc = cover(path);
		if (rc < 0)
			return husk_merr(err, errlen, "--no-pivot: move %s to /: hide host %s %s: %s", p->root, type, path,
				    husk_errtext(errno));
	}
	if (husk_k->chdir(p->root) < 0)
		return husk_merr(err, errlen, "--no-pivot: move %s to /: chdir: %s", p->root, husk_errtext(errno));
	if (husk_propagate_path("/", MS_PRIVATE) < 0) /* the move must not propagate to the host */
		return husk_merr(err, errlen, "--no-pivot: move %s to /: private /: %s", p->root, husk_errtext(errno));
	from = husk_k->open(p->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	to = from < 0 ? -1 : husk_k->open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	rc = to < 0 ? -1 : husk_k->move_mount(from, to);
	husk_mclose(to);
	husk_mclose(from);
	if (rc < 0)
		return husk_merr(err, errlen, "--no-pivot: move %s to /: move_mount: %s", p->root, husk_errtext(errno));
	if (husk_k->chroot(".") < 0 || husk_k->chdir("/") < 0)
		return husk_merr(err, errlen, "--no-pivot: move %s to /: chroot: %s", p->root, husk_errtext(errno));
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
		if (p->prepare.after && husk_propagate_path("/", p->prepare.after) < 0)
			return husk_merr(err, errlen, "linux.rootfsPropagation 0x%x: set on the new /: %s", p->prepare.after,
				    husk_errtext(errno));
		return 0;
	}

	old = husk_k->open("/", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (old < 0)
		return husk_merr(err, errlen, "pivot_root to %s: open: %s", p->root, husk_errtext(errno));
	new = husk_k->open(p->root, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (new < 0) {
		husk_merr(err, errlen, "pivot_root to %s: open: %s", p->root, husk_errtext(errno));
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
		husk_merr(err, errlen, "pivot_root to %s: %s: %s", p->root, what, husk_errtext(errno));
		goto out;
	}
	rc = 0;
	if (p->has_prepare && p->prepare.after && husk_propagate_path("/", p->prepare.after) < 0)
		rc = husk_merr(err, errlen, "linux.rootfsPropagation 0x%x: set on the new /: %s", p->prepare.after,
			  husk_errtext(errno));
out:
	husk_mclose(new);
	husk_mclose(old);
	return rc;
}
