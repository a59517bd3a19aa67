/*
 * The parent <-> `husk init` protocol numbers, shared by nsenter/nsexec.c
 * and the Go package libcontainer/bootstrap (which reads them through cgo).
 * protocol.go documents who sends each message and what answers it.
 */
#ifndef HUSK_BOOTSTRAP_H
#define HUSK_BOOTSTRAP_H

#include <stdint.h>

/* nlmsghdr.nlmsg_type of the one bootstrap message. */
#define HUSK_BOOTSTRAP_MSG 62000

/* Netlink attributes of the bootstrap message (struct nlattr + payload). */
#define HUSK_ATTR_CLONE_FLAGS    27281 /* u32: CLONE_NEW* to unshare           */
#define HUSK_ATTR_NS_PATHS       27282 /* string: "user:/p,net:/q" user first  */
#define HUSK_ATTR_UIDMAP         27283 /* string: uid_map lines                */
#define HUSK_ATTR_GIDMAP         27284 /* string: gid_map lines                */
#define HUSK_ATTR_OOM_SCORE_ADJ  27285 /* string: decimal, written before fork */
#define HUSK_ATTR_TIMENS_OFFSETS 27286 /* string: timens_offsets lines         */
#define HUSK_ATTR_CGROUP_TASKS   27288 /* u32[]: fds of v1 tasks files; nsexec
                                          writes "0" to each, first thing      */
#define HUSK_ATTR_AFFINITY       27289 /* u64[]: CPU mask of
                                          process.execCPUAffinity.initial      */

/*
 * Every netlink attribute's payload is at most HUSK_ATTR_MAX bytes (its
 * length is 16 bits, header included); the Go encoder refuses more,
 * naming the field. The whole message is at most HUSK_BOOTSTRAP_MAX.
 */
#define HUSK_ATTR_MAX      (65535 - 4)
#define HUSK_BOOTSTRAP_MAX (1 << 20)

/*
 * Sync frames after the bootstrap message: a header of two native-endian
 * u32 (type, payload length) followed by the payload.
 */
#define HUSK_SYNC_USERMAP_PLS 1 /* nsexec -> parent: write my uid/gid maps (u32 pid) */
#define HUSK_SYNC_USERMAP_ACK 2 /* parent -> nsexec: maps written                  */
#define HUSK_SYNC_PID         3 /* nsexec -> parent: u32 pid of init / the process */
#define HUSK_SYNC_ERROR       4 /* either stage -> parent: error text; then exit  */
#define HUSK_SYNC_CONFIG      5 /* parent -> pid 1: how to build the rootfs (below) */
#define HUSK_SYNC_READY       6 /* launcher -> parent: set up (create: waiting on
                                   exec.fifo; exec: the process runs)              */
#define HUSK_SYNC_CREATE_HOOKS      7 /* pid 1 -> parent: rootfs mounted, run prestart + createRuntime */
#define HUSK_SYNC_CREATE_HOOKS_DONE 8 /* parent -> pid 1: they passed; run createContainer, pivot     */
#define HUSK_SYNC_MOUNT_SOURCE 9 /* pid 1 -> parent: open mounts[N]'s source (u32 N)             */
#define HUSK_SYNC_MOUNT_FD     10 /* parent -> pid 1: its fd (SCM_RIGHTS), or why not (text)     */
#define HUSK_SYNC_PLAN         11 /* parent -> launcher: the process (records below)         */
#define HUSK_SYNC_HELLO        12 /* nsexec -> parent, first: my image is loaded (no payload) */
#define HUSK_SYNC_GO           13 /* parent -> exec's launcher: the binary's view is sealed */

/*
 * CONFIG's payload: how pid 1 builds the container's rootfs
 * (nsenter/build.c), decided by the parent (libcontainer/launch). A
 * struct husk_build_head, then mounts_len bytes of mount plan
 * (mountplan.h), hooks_len bytes of createContainer hook plan
 * (hookplan.h), then chroot_len bytes: the rootfs's path, NUL-terminated,
 * when HUSK_BUILD_CHROOT. Every length bounded by HUSK_BUILD_MAX.
 */
#define HUSK_BUILD_ASK_HOOKS 1 /* stop at CREATE_HOOKS once mounted           */
#define HUSK_BUILD_LO_UP     2 /* a new network namespace: set lo up first    */
#define HUSK_BUILD_DEV_NULL  4 /* clone the host's /dev/null before pivot_root
                                   (maskedPaths: to mask files with)          */
#define HUSK_BUILD_CHROOT    8 /* no mount namespace: chroot into the path,
                                   then the mount plan (a missing cwd) in it  */
#define HUSK_BUILD_FLAGS     15
#define HUSK_BUILD_MAX       (8u << 20)

struct husk_build_head {
	uint32_t flags;
	uint32_t mounts_len;
	uint32_t hooks_len;
	uint32_t chroot_len;
};

/*
 * The PLAN frame's payload: the process the launcher (nsenter/launch.c)
 * sets up and execs, computed and checked by the parent
 * (libcontainer/launch). A sequence of records, each a u32 type, a u32
 * payload length and the payload, zero-padded to a multiple of 8 bytes
 * (so every payload is 8-byte aligned in the frame).
 * Lengths are 32 bits and the payload is at most HUSK_PLAN_MAX bytes:
 * args and environment up to what execve takes (6 MiB), 65536 groups,
 * a 4096-instruction filter and the listener's message fit.
 */
#define HUSK_PLAN_MAX (16u << 20)

/*
 * The records, described once: X(NAME, type, flags), one line each, in
 * type order. HUSK_PLAN_<NAME> is the type; flags say the record must
 * be there (HUSK_REC_REQUIRED) or may come more than once
 * (HUSK_REC_REPEAT). A record added here must also be in the Go encoder
 * (plan.go), the C parser (nsenter/plan.c), the reference decoder and
 * the round trip (nsenter/ref_test.go): TestEveryRecordEverywhere fails
 * until it is (docs/architecture.md, "Adding a process attribute").
 * Types are 1 to 31 (plan.c keeps the records seen in a u32 mask).
 */
#define HUSK_REC_REQUIRED 1
#define HUSK_REC_REPEAT   2
#define HUSK_PLAN_RECORDS(X) \
	X(ARGS, 1, HUSK_REC_REQUIRED)         /* NUL-terminated strings, in order      */ \
	X(ENV, 2, HUSK_REC_REQUIRED)          /* NUL-terminated strings, deduplicated   */ \
	X(CWD, 3, HUSK_REC_REQUIRED)          /* NUL-terminated string                  */ \
	X(UID, 4, HUSK_REC_REQUIRED)          /* u32                                    */ \
	X(GID, 5, HUSK_REC_REQUIRED)          /* u32                                    */ \
	X(GROUPS, 6, 0)                       /* u32[]: additional gids                 */ \
	X(UMASK, 7, HUSK_REC_REQUIRED)        /* u32                                    */ \
	X(RLIMIT, 8, HUSK_REC_REPEAT)         /* struct husk_plan_rlimit, one per rlimit */ \
	X(CAPS, 9, HUSK_REC_REQUIRED)         /* struct husk_plan_caps                  */ \
	X(NNP, 10, 0)                         /* no payload: set no_new_privs           */ \
	X(SECCOMP, 11, 0)                     /* struct sock_filter[]: the filter       */ \
	X(SECCOMP_FLAGS, 12, 0)               /* u32: SECCOMP_FILTER_FLAG_*             */ \
	X(HOME, 13, 0)                        /* no payload: fill "HOME=" from
	                                         /etc/passwd                            */ \
	X(PATH, 14, 0)                        /* NUL-terminated string: the file to
	                                         execve, no PATH lookup (a hook's path) */ \
	X(AFFINITY, 15, 0)                    /* u64[]: CPU mask, execCPUAffinity.final */ \
	X(MEMPOLICY, 16, 0)                   /* struct husk_plan_mempolicy, u64[] nodes */ \
	X(PERSONALITY, 17, 0)                 /* u32: personality(2) persona            */ \
	X(IOPRIO, 18, 0)                      /* struct husk_plan_ioprio                */ \
	X(SCHED, 19, 0)                       /* struct husk_plan_sched                 */ \
	X(APPARMOR, 20, 0)                    /* NUL-terminated string: exec profile    */ \
	X(SELINUX, 21, 0)                     /* NUL-terminated string: exec label      */ \
	X(LISTENER, 22, 0)                    /* u32 n, u32 offsets[n], then the seccomp
	                                         listener's message; the process's pid
	                                         in decimal goes in at each offset
	                                         (ascending, at most
	                                         HUSK_PLAN_MAX_HOLES)                   */ \
	X(TTY, 23, 0)                         /* struct husk_plan_tty: process.terminal */ \
	X(KEYRING, 24, 0)                     /* no payload: join a new session keyring */ \
	X(ROOTFS, 25, 0)                      /* u32 HUSK_ROOTFS_* flags, then, with
	                                         HUSK_ROOTFS_RO_DEV, the read-only /dev
	                                         mount's name for errors (NUL-terminated):
	                                         a container's init with a mount
	                                         namespace of its own                   */ \
	X(MASKED, 26, 0)                      /* NUL-terminated clean absolute paths:
	                                         linux.maskedPaths                      */ \
	X(RDONLY, 27, 0)                      /* NUL-terminated clean absolute paths:
	                                         linux.readonlyPaths                    */ \
	X(MOUNT_LABEL, 28, 0)                 /* NUL-terminated string: linux.mountLabel */ \
	X(UTS, 29, 0)                         /* two NUL-terminated strings, either
	                                         empty: hostname, domainname            */ \
	X(SYSCTL, 30, 0)                      /* NUL-terminated strings, key then value,
	                                         for each of linux.sysctl               */

#define HUSK_PLAN_ENUM_(name, type, flags) HUSK_PLAN_##name = type,
enum husk_plan_record { HUSK_PLAN_RECORDS(HUSK_PLAN_ENUM_) };
#undef HUSK_PLAN_ENUM_

#define HUSK_PLAN_MAX_HOLES 4

/* Fixed payloads, native-endian. */
struct husk_plan_rlimit {
	uint32_t type;  /* RLIMIT_* */
	uint32_t index; /* in process.rlimits, for error messages */
	uint64_t soft, hard;
};
struct husk_plan_caps {
	uint64_t bounding, effective, permitted, inheritable, ambient;
	uint32_t last_cap; /* the kernel's, /proc/sys/kernel/cap_last_cap */
	uint32_t pad;
};
struct husk_plan_mempolicy {
	int32_t mode, flags; /* MPOL_*, MPOL_F_*; the node mask follows */
};
struct husk_plan_ioprio {
	int32_t class, priority;
};
struct husk_plan_sched { /* sched_setattr(2) */
	uint32_t policy;
	int32_t nice;
	uint32_t priority;
	uint32_t cpuset; /* 1: linux.resources.cpu.cpus is set (for runc's
	                    words when the kernel refuses: EPERM) */
	uint64_t flags, runtime, deadline, period;
};
#define HUSK_TTY_OPEN 1 /* make the pty (exec); else init already did */
#define HUSK_TTY_SIZE 2 /* rows and cols are process.consoleSize      */
struct husk_plan_tty {
	uint32_t flags;
	uint16_t rows, cols;
};

#define HUSK_ROOTFS_RO_DEV  1 /* a read-only /dev, mounted writable        */
#define HUSK_ROOTFS_RO_ROOT 2 /* root.readonly                             */
/* Bounds on the rootfs records (the parent refuses more, naming the
 * field): paths per list, and one path's bytes with its NUL (PATH_MAX). */
#define HUSK_PLAN_MAX_PATHS 4096
#define HUSK_PLAN_MAX_PATH  4096
/* Bounds on UTS and SYSCTL: a name's bytes with its NUL; sysctls; a
 * sysctl key's or value's bytes with its NUL (a procfs write takes a
 * page). */
#define HUSK_PLAN_MAX_NAME    4096
#define HUSK_PLAN_MAX_SYSCTLS 4096
#define HUSK_PLAN_MAX_SYSCTL  4096

/* Environment variables naming the fds passed to `husk init`. */
#define HUSK_ENV_INITPIPE "_HUSK_INITPIPE"
#define HUSK_ENV_LOGPIPE  "_HUSK_LOGPIPE"
#define HUSK_ENV_FIFOFD   "_HUSK_FIFOFD"
#define HUSK_ENV_CONSOLEFD  "_HUSK_CONSOLE_FD"  /* connected to --console-socket            */
#define HUSK_ENV_LISTENERFD "_HUSK_LISTENER_FD" /* connected to linux.seccomp.listenerPath */
/* Set when the parent logs debug lines (--debug): only then do nsexec and
 * init write theirs to the log pipe (each line wakes the parent). */
#define HUSK_ENV_LOGDEBUG "_HUSK_LOGDEBUG"
/* The trace file (HUSK_TRACE, libcontainer/trace) a `husk init` appends
 * its marks to. */
#define HUSK_ENV_TRACEFD "_HUSK_TRACE_FD"

/*
 * A line on the log pipe: one JSON object, the level then the message
 * (quotes and backslashes escaped, control characters made spaces), and
 * a newline. The parent re-logs it at its level (LogLine in logline.go);
 * a debug line starts with HUSK_LOG_LINE_HEAD for "debug", so a parent
 * without --debug skips it undecoded.
 */
#define HUSK_LOG_LINE_HEAD "{\"level\":\"%s\",\"msg\":\"" /* printf: level */
#define HUSK_LOG_LINE_TAIL "\"}\n"
/* A mark on the trace fd: libcontainer/trace's Record, as one JSON line. */
#define HUSK_TRACE_RECORD "{\"t\":%lld,\"pid\":%d,\"proc\":\"init\",\"phase\":\"%s\",\"ms\":%.6f}\n"


/*
 * What `husk init` starts: unset for a container's init, HUSK_INITTYPE_EXEC
 * for a process exec'd into a running container (no fifo, no rootfs, no Go
 * runtime: nsexec sets the process up and execs it).
 */
#define HUSK_ENV_INITTYPE  "_HUSK_INITTYPE"
#define HUSK_INITTYPE_EXEC "exec"

#endif
