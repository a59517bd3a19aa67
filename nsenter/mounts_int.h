/*
 * What the launcher's mount files share (mountparse.c, mountresolve.c,
 * mounts.c, mountroot.c): bounds, one run of the plan, its error text,
 * and the resolution of paths inside the root.
 */
#ifndef HUSK_NSENTER_MOUNTS_INT_H
#define HUSK_NSENTER_MOUNTS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "mounts.h"

#ifndef MNT_DETACH
#define MNT_DETACH 2 /* umount2(2)'s; <sys/mount.h> clashes with <linux/mount.h> */
#endif
#define PATH_BYTES HUSK_MOUNTS_MAX_STR
#define MAX_LINKS 255 /* SecureJoin's */

/* One run of the plan: the root's fd and where the reason goes. */
struct husk_mrun {
	const struct husk_mounts *p;
	int root;
	char why[1024]; /* what went wrong, after "mounts[i]: error mounting ..." */
};

/* What a missing path is made as (Go's rootfs create). */
enum husk_create { MUST_EXIST, MAKE_DIR, MAKE_FILE, REAL_DIR };

/* err gets the text; returns -1. */
int husk_merr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* r->why gets the text, errno kept; returns -1. */
int husk_mfail(struct husk_mrun *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Closes fd (when >= 0), errno kept. */
void husk_mclose(int fd);
/* Go's %q for the ASCII a mount's names are made of. */
const char *husk_mquote(const char *s, char *buf, size_t n);
/* path cleaned lexically into out (PATH_BYTES). */
void husk_clean_path(const char *path, char *out);
/* path resolved inside the root as SecureJoin does, into out. */
int husk_secure_join(struct husk_mrun *r, const char *path, char *out);
/* The container path opened inside the root (O_PATH), made as c says. */
int husk_open_in_root(struct husk_mrun *r, const char *path, enum husk_create c, const char *known);
/* The propagation flags (MS_* | MS_REC) set on the mount at path. */
int husk_propagate_path(const char *path, uint32_t flags);

#endif
