/*
 * The parent <-> `husk init` protocol numbers, shared by nsenter/nsexec.c
 * and the Go package libcontainer/bootstrap (which reads them through cgo).
 * protocol.go documents who sends each message and what answers it.
 */
#ifndef HUSK_BOOTSTRAP_H
#define HUSK_BOOTSTRAP_H

/* nlmsghdr.nlmsg_type of the one bootstrap message. */
#define HUSK_BOOTSTRAP_MSG 62000

/* Netlink attributes of the bootstrap message (struct nlattr + payload). */
#define HUSK_ATTR_CLONE_FLAGS    27281 /* u32: CLONE_NEW* to unshare           */
#define HUSK_ATTR_NS_PATHS       27282 /* string: "user:/p,net:/q" user first  */
#define HUSK_ATTR_UIDMAP         27283 /* string: uid_map lines                */
#define HUSK_ATTR_GIDMAP         27284 /* string: gid_map lines                */
#define HUSK_ATTR_OOM_SCORE_ADJ  27285 /* string: decimal, written before fork */
#define HUSK_ATTR_TIMENS_OFFSETS 27286 /* string: timens_offsets lines         */

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

/* Environment variables naming the fds passed to `husk init`. */
#define HUSK_ENV_INITPIPE "_HUSK_INITPIPE"
#define HUSK_ENV_LOGPIPE  "_HUSK_LOGPIPE"
#define HUSK_ENV_FIFOFD   "_HUSK_FIFOFD"
#define HUSK_ENV_CONSOLEFD  "_HUSK_CONSOLE_FD"  /* connected to --console-socket            */
#define HUSK_ENV_LISTENERFD "_HUSK_LISTENER_FD" /* connected to linux.seccomp.listenerPath */

/*
 * What `husk init` starts: unset for a container's init, HUSK_INITTYPE_EXEC
 * for a process exec'd into a running container (no fifo, no rootfs; nsexec
 * makes it non-dumpable so the container's processes cannot ptrace it or
 * open its /proc files while it still holds the runtime's fds).
 */
#define HUSK_ENV_INITTYPE  "_HUSK_INITTYPE"
#define HUSK_INITTYPE_EXEC "exec"

#endif
