/*
 * The launcher's mounts (mounts.c): config.json's mounts[] made inside
 * the container's root from the mount plan the parent decided
 * (libcontainer/bootstrap/mountplan.h, libcontainer/launch/mountplan.go),
 * with the new mount API, every path inside the root resolved from the
 * root's fd. Not called from the launch path yet
 * (docs/plan-rootfs-in-launcher.md).
 */
#ifndef HUSK_NSENTER_MOUNTS_H
#define HUSK_NSENTER_MOUNTS_H

#include <stddef.h>

#include "mountplan.h"

/* One parsed MOUNT record: strings point into the plan's buffer. */
struct husk_mount {
	struct husk_mount_head h;
	int is_device; /* a DEVICE record: dev, dest */
	struct husk_mount_device dev;
	const char *dest, *source, *fstype, *data, *fallback, *root_label, *head;
};

struct husk_mounts {
	const char *root; /* the rootfs's host path */
	int has_prepare;
	struct husk_mount_prepare prepare;
	const char *points[HUSK_MOUNTS_MAX_POINTS]; /* prepare's paths */
	const char **hide; /* HIDE's fstype, path pairs (malloc'd) */
	size_t n_hide;
	struct husk_mount *m; /* malloc'd */
	size_t n;
	char *buf; /* owns the bytes */
	/* A BIND_FD step with HUSK_MOUNT_ASK: mounts[index]'s source, opened
	 * by the parent now (MOUNT_SOURCE, build.c); or -1 with err. Set by
	 * the caller; NULL refuses such a step. */
	int (*ask_source)(void *ctx, uint32_t index, char *err, size_t errlen);
	void *ask_ctx;
};

/* Parses the mount plan buf[0:len]: 0, or -1 with the problem in err (out
 * is then left empty). Pure: no syscalls. */
int husk_parse_mounts(const char *buf, size_t len, struct husk_mounts *out, char *err, size_t errlen);
void husk_mounts_free(struct husk_mounts *p);

/* Makes every mount of p inside its root, in order, through husk_k
 * (after the PREPARE record's propagation and the rootfs's bind onto
 * itself): 0, or -1 with the reason in err, naming mounts[i] in runc's
 * words. */
int husk_do_mounts(const struct husk_mounts *p, char *err, size_t errlen);

/* Makes the rootfs the process's "/" (pivot_root), then gives it the
 * propagation PREPARE asks after: 0, or -1 with err. Between
 * husk_do_mounts and it run the createRuntime and createContainer hooks. */
int husk_enter_root(const struct husk_mounts *p, char *err, size_t errlen);

/* What mounts.c decides without the kernel, for the tests: whether dest
 * (a clean container path) may take a mount of fstype (bind: a bind);
 * the options of a mount's data, split as fsconfig(2) gets them. */
int husk_mount_proc_check(const char *dest, const char *fstype, int bind, char *err, size_t errlen);
int husk_split_mount_data(const char *data, char *out, size_t outlen);

/* copyup.c: tmpcopyup, the directory from (an O_PATH fd) copied into the
 * directory to (the new tmpfs's root, O_RDONLY): 0, or -1 with why. */
int husk_copy_up(int from, int to, char *why, size_t n);

#endif
