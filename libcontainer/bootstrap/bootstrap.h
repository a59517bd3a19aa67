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
#define HUSK_ATTR_EXEC_PLAN      27287 /* nested: an exec's process, set up in C */
#define HUSK_ATTR_CGROUP_TASKS   27288 /* u32[]: fds of v1 tasks files; nsexec
                                          writes "0" to each, first thing      */

/*
 * The attributes nested in HUSK_ATTR_EXEC_PLAN (execplan.go): the process
 * of a `husk exec`, computed and checked by the parent, that nsenter's
 * execproc.c sets up and execs without starting the Go runtime.
 */
#define HUSK_PLAN_ARGS      1  /* NUL-terminated strings, in order           */
#define HUSK_PLAN_ENV       2  /* NUL-terminated strings, deduplicated        */
#define HUSK_PLAN_CWD       3  /* string                                      */
#define HUSK_PLAN_UID       4  /* u32                                         */
#define HUSK_PLAN_GID       5  /* u32                                         */
#define HUSK_PLAN_GROUPS    6  /* u32[]: additional gids                      */
#define HUSK_PLAN_UMASK     7  /* u32                                         */
#define HUSK_PLAN_RLIMIT    8  /* struct husk_plan_rlimit, one per rlimit     */
#define HUSK_PLAN_CAPS      9  /* struct husk_plan_caps                       */
#define HUSK_PLAN_NNP       10 /* no payload: set no_new_privs                */
#define HUSK_PLAN_SECCOMP   11 /* struct sock_filter[]: the compiled filter   */
#define HUSK_PLAN_SECCOMP_FLAGS 12 /* u32: SECCOMP_FILTER_FLAG_*             */
#define HUSK_PLAN_HOME      13 /* no payload: fill "HOME=" from /etc/passwd   */

/*
 * Sync frames after the bootstrap message: a header of two native-endian
 * u32 (type, payload length) followed by the payload.
 */
#define HUSK_SYNC_USERMAP_PLS 1 /* nsexec -> parent: write my uid/gid maps (u32 pid) */
#define HUSK_SYNC_USERMAP_ACK 2 /* parent -> nsexec: maps written                  */
#define HUSK_SYNC_PID         3 /* nsexec -> parent: u32 pid of the Go init       */
#define HUSK_SYNC_ERROR       4 /* either stage -> parent: error text; then exit  */
#define HUSK_SYNC_CONFIG      5 /* parent -> Go init: configs.Config JSON          */
#define HUSK_SYNC_READY       6 /* Go init -> parent: built, waiting on exec.fifo  */
#define HUSK_SYNC_CREATE_HOOKS      7 /* Go init -> parent: rootfs mounted, run prestart + createRuntime */
#define HUSK_SYNC_CREATE_HOOKS_DONE 8 /* parent -> Go init: they passed; run createContainer, pivot   */
#define HUSK_SYNC_MOUNT_SOURCE 9 /* Go init -> parent: open mounts[N]'s source (u32 N)           */
#define HUSK_SYNC_MOUNT_FD     10 /* parent -> Go init: its fd (SCM_RIGHTS), or why not (text)   */
#define HUSK_SYNC_EXEC_GO      11 /* parent -> Go init (exec): now in the container's cgroups; execve */

/* HUSK_PLAN_RLIMIT and HUSK_PLAN_CAPS payloads, native-endian. */
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

/* Environment variables naming the fds passed to `husk init`. */
#define HUSK_ENV_INITPIPE "_HUSK_INITPIPE"
#define HUSK_ENV_LOGPIPE  "_HUSK_LOGPIPE"
#define HUSK_ENV_FIFOFD   "_HUSK_FIFOFD"
#define HUSK_ENV_CONSOLEFD  "_HUSK_CONSOLE_FD"  /* connected to --console-socket            */
#define HUSK_ENV_LISTENERFD "_HUSK_LISTENER_FD" /* connected to linux.seccomp.listenerPath */
/* Set when the parent logs debug lines (--debug): only then do nsexec and
 * init write theirs to the log pipe (each line wakes the parent). */
#define HUSK_ENV_LOGDEBUG "_HUSK_LOGDEBUG"

/*
 * What `husk init` starts: unset for a container's init, HUSK_INITTYPE_EXEC
 * for a process exec'd into a running container (no fifo, no rootfs; nsexec
 * makes it non-dumpable so the container's processes cannot ptrace it or
 * open its /proc files while it still holds the runtime's fds).
 */
#define HUSK_ENV_INITTYPE  "_HUSK_INITTYPE"
#define HUSK_INITTYPE_EXEC "exec"

#endif
