/*
 * The mount plan: config.json's mounts[] as the launcher makes them
 * (nsenter/mounts.c) inside the container's root, in order, each step
 * decided by the parent (libcontainer/launch/mountplan.go) from the same
 * rules Go init follows today (libcontainer/rootfs). Not sent yet: see
 * docs/plan-rootfs-in-launcher.md.
 *
 * The payload has the PLAN frame's shape (bootstrap.h): records of a u32
 * type, a u32 payload length and the payload, zero-padded to a multiple
 * of 8 bytes. One ROOT record first, a PREPARE record, then one MOUNT
 * record per step.
 */
#ifndef HUSK_MOUNTPLAN_H
#define HUSK_MOUNTPLAN_H

#include <stdint.h>

#define HUSK_MOUNTS_ROOT  1 /* NUL-terminated: the rootfs's host path, symlinks
                               resolved (root.path), absolute              */
#define HUSK_MOUNTS_PREPARE 3 /* struct husk_mount_prepare, then n NUL-terminated
                               host paths; right after ROOT, or none. Before
                               the mounts: "/" gets root_flags
                               (linux.rootfsPropagation; rslave by default),
                               each path its flags (MS_PRIVATE or MS_SLAVE:
                               Go init's isolateRoot), then the rootfs is
                               bound onto itself, recursively             */
#define HUSK_MOUNTS_DEVICE  4 /* struct husk_mount_device, then the node's
                               container path (NUL-terminated): made in
                               its place among the steps (Go init: after
                               the mounts, before the /dev symlinks)       */
#define HUSK_MOUNTS_HIDE    5 /* pairs of NUL-terminated strings, fstype then
                               mount point: the whole proc and sysfs
                               mounts outside the rootfs, deepest first,
                               that --no-pivot detaches (or covers with an
                               empty read-only tmpfs); with no_pivot only */
#define HUSK_MOUNTS_MOUNT 2 /* struct husk_mount_head, then HUSK_MOUNT_STRINGS
                               NUL-terminated strings: destination,
                               source, fstype, data, fallback, the label
                               of the filesystem's root (mqueue), and the
                               head of its error ("mounts[3]: error
                               mounting \"proc\" to rootfs at \"/proc\"",
                               made by the parent)                       */

/* Bounds, each refused by the parent naming the field, and by the parser. */
#define HUSK_MOUNTS_MAX       (4u << 20) /* payload bytes                      */
#define HUSK_MOUNTS_MAX_COUNT 4096       /* MOUNT records                      */
#define HUSK_MOUNTS_MAX_STR   4096       /* one string's bytes, its NUL too:
                                            PATH_MAX, and the page mount(2)
                                            takes for the data             */
#define HUSK_MOUNTS_MAX_OPT   256        /* one data option's key or value, its
                                            NUL too: what fsconfig(2) takes */
#define HUSK_MOUNTS_MAX_PROP  4          /* propagation flags of one mount    */
#define HUSK_MOUNT_STRINGS    7
#define HUSK_MOUNTS_MAX_HEAD  (3 * HUSK_MOUNTS_MAX_STR) /* the error's head  */

/* What is mounted (kind). */
#define HUSK_MOUNT_FS      1 /* a new filesystem: fsopen(fstype), the data's
                                options, fsmount with the flags           */
#define HUSK_MOUNT_BIND    2 /* a bind of source: a host path, or a path
                                inside the root (HUSK_MOUNT_IN_ROOT)      */
#define HUSK_MOUNT_BIND_FD 3 /* a bind of the fd the parent opened (a
                                user namespace, an idmap): an O_PATH fd
                                in the container's mount namespace, or a
                                detached tree (HUSK_MOUNT_DETACHED)       */
#define HUSK_MOUNT_SYMLINK 4 /* a symlink named data to source, in the
                                directory destination (the co-mounted
                                cgroup v1 controllers: cpu -> cpu,cpuacct) */
#define HUSK_MOUNT_REMOUNT 5 /* the mount at destination: flags added
                                (a read-only cgroup v1 tmpfs), then the
                                recursive attributes and propagation     */
#define HUSK_MOUNT_MKDIR   6 /* destination made as directories when it is
                                missing (process.cwd)                      */

/* What the destination is made as when missing (dest). */
#define HUSK_DEST_DIR       1 /* directories                               */
#define HUSK_DEST_REAL_DIR  2 /* directories reached through no symlink
                                 (proc, sysfs)                             */
#define HUSK_DEST_BY_SOURCE 3 /* a directory when the bind's source is one,
                                 else an empty file                        */
#define HUSK_DEST_COVERED   4 /* a tmpfs: what is there (its mode kept when
                                 HUSK_MOUNT_TMPFS_MODE), else directories  */

/* Options (opts). */
#define HUSK_MOUNT_IN_ROOT    1 /* BIND: source is a path inside the root  */
#define HUSK_MOUNT_DETACHED   2 /* BIND_FD: the fd is a detached tree       */
#define HUSK_MOUNT_TMPFS_MODE 4 /* FS: no mode= in the data: add the mode of
                                   the directory it covers                 */
#define HUSK_MOUNT_COPYUP     8 /* FS (tmpfs): tmpcopyup, filled with a copy
                                   of the directory it covers, then made
                                   read-only when MS_RDONLY is asked       */
#define HUSK_MOUNT_LABELLED  16 /* FS: the data has linux.mountLabel's
                                   context= (a refusal says so)            */
#define HUSK_MOUNT_REPLACE   32 /* SYMLINK: what is there unlinked first
                                   (/dev/ptmx)                             */
#define HUSK_MOUNT_LEGACY   128 /* FS: made by mount(2) on the destination
                                   resolved inside the root (through
                                   /proc/thread-self/fd), as runc: what
                                   fsconfig(2) cannot say (remount,
                                   iversion, an option over 255 bytes)    */
#define HUSK_MOUNT_ASK       64 /* BIND_FD without an fd (-1): the launcher
                                   asks the parent for it when the mount is
                                   made (MOUNT_SOURCE), after the mounts
                                   before it: the parent opens the source
                                   in the container's mount namespace    */

#define HUSK_MOUNTS_MAX_POINTS 2 /* the rootfs itself, and one parent */
struct husk_mount_prepare {
	uint32_t root_flags; /* MS_SHARED ... | MS_REC, for "/"             */
	uint32_t n;          /* paths that follow, at most MAX_POINTS       */
	uint32_t flags[HUSK_MOUNTS_MAX_POINTS]; /* MS_PRIVATE or MS_SLAVE     */
	uint32_t after;      /* once the rootfs is "/" (husk_enter_root): its
	                        propagation, linux.rootfsPropagation unless
	                        unset or private; 0: none                  */
	uint32_t no_pivot;   /* 1: --no-pivot, the rootfs moved onto "/" after
	                        the HIDE record's mounts are taken away    */
};

struct husk_mount_device {
	uint32_t index;    /* in devices[], for errors      */
	uint32_t mode;     /* S_IFCHR, S_IFBLK, S_IFIFO | permissions */
	uint64_t rdev;     /* makedev(major, minor)         */
	uint32_t uid, gid;
};

struct husk_mount_head {
	uint32_t index;   /* in mounts[], for errors                               */
	uint32_t kind;    /* HUSK_MOUNT_FS, _BIND, _BIND_FD                          */
	uint32_t dest;    /* HUSK_DEST_*                                             */
	uint32_t opts;    /* HUSK_MOUNT_IN_ROOT, ...                                 */
	uint32_t flags;   /* MS_* asked (MS_BIND, MS_REC for a bind)                 */
	uint32_t cleared; /* MS_* asked off ("rw", "dev", ...)                       */
	uint64_t rec_set, rec_clr;            /* MOUNT_ATTR_* on the whole tree     */
	uint32_t prop[HUSK_MOUNTS_MAX_PROP]; /* MS_SHARED ... (| MS_REC), in order;
	                                        0 ends the list                    */
	int32_t fd;       /* BIND_FD: the fd; else -1                                */
	uint32_t pad;
};

#endif
