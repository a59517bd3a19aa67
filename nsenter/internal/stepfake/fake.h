/*
 * The recording fake kernel (fake.c) and the run of the launcher's steps
 * against it (stepfake.go's Launch). Each call is recorded as one line,
 * "name(arguments)"; "#step I NAME" marks where step I of husk_steps
 * starts. The call numbered fail_at (from 0; -1: none) fails with
 * fail_errno.
 */
#ifndef STEPFAKE_H
#define STEPFAKE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define STEPFAKE_MAX_CALLS 1024
#define STEPFAKE_LINE 512

/* The fds the fake hands out, for the tests to look for. */
#define STEPFAKE_CONSOLE_FD 7
#define STEPFAKE_LISTENER_FD 8
#define STEPFAKE_NOTIFY_FD 300
#define STEPFAKE_PTY_SLAVE_FD 301
#define STEPFAKE_FORKED_PID 4242
#define STEPFAKE_INIT_PID 1234
#define STEPFAKE_DEV_NULL_FD 302 /* the host's /dev/null the build cloned */
#define STEPFAKE_TARGET_FD 200   /* what openat2 opens: a file */
#define STEPFAKE_DIR_FD 202      /* what openat2 opens of conf->dirs */
#define STEPFAKE_CLONE_FD 210    /* what open_tree makes */
#define STEPFAKE_FS_FD 220       /* fsopen's */
#define STEPFAKE_MOUNT_FD 221    /* fsmount's */

struct stepfake_conf {
	int fail_at, fail_errno;
	const char *passwd; /* /etc/passwd's bytes; NULL: there is none */
	const char *exe;    /* the one executable file there is */
	const char *getcwd; /* what getcwd answers */
	uint32_t stdio_uid; /* the owner of fds 0-2 */
	const char *dirs;   /* the paths that are directories, ':'-separated */
	int not_procfs;     /* STEPFAKE_TARGET_FD is on a tmpfs, not a procfs */
};

/* Parses the PLAN payload with plan.c and runs the launch's open, its
 * steps and its execve against the fake: 0 (execve reached), -1 (err
 * has the launcher's error), -2 (the plan did not parse). */
int stepfake_run(const char *plan, size_t len, int forks, const struct stepfake_conf *conf, char *err,
		 size_t errlen);
/* How many calls of the real kernel (real), or of the fake, are NULL. */
int stepfake_missing(int real);
size_t stepfake_n_calls(void);
const char *stepfake_call(size_t i);
size_t stepfake_n_steps(void);
const char *stepfake_step_name(size_t i);


/* The fake's internals that mountfake.c shares: a recorded call (1: it
 * fails, errno set), the fake kernel, a new record with conf. */
int stepfake_rec(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
struct husk_kernel;
const struct husk_kernel *stepfake_kernel(void);
void stepfake_begin(const struct stepfake_conf *c);

/*
 * The mounts' fake (mountfake.c): a small file tree, in-root and host
 * paths, that the mount calls look up and change. tree has one entry a
 * line: "d /path" (directory), "f /path" (file), "l /path TARGET"
 * (symlink) inside the root, "r" a directory whose mount is read-only,
 * nosuid (locked: statfs says so); "D", "F", "P" (a procfs directory)
 * for host paths. A mount tree attached at /x is the directory "@/x", what is made
 * in it "@/x/name" (a tmpcopyup's copy). Runs the mount plan payload with mounts.c against it: 0, -1
 * (err has the reason), -2 (the plan did not parse). open_fds: the fds
 * still open after the run (a leak).
 */
int stepfake_mounts_run(const char *plan, size_t len, const char *tree, int enter, int fail_at, int fail_errno,
			char *err, size_t errlen, int *open_fds);
int stepfake_openat(int dirfd, const char *path, int flags, mode_t mode);
int stepfake_mkdirat(int dirfd, const char *name, mode_t mode);
int stepfake_mknodat(int dirfd, const char *name, mode_t mode, dev_t dev);
ssize_t stepfake_readlinkat(int dirfd, const char *path, char *buf, size_t n);
struct stat;
struct timespec;
int stepfake_fstatat(int dirfd, const char *path, struct stat *st, int flags);
long stepfake_getdents64(int fd, void *buf, size_t n);
int stepfake_symlinkat(const char *target, int dirfd, const char *name);
int stepfake_fchownat(int dirfd, const char *path, uid_t uid, gid_t gid, int flags);
int stepfake_fchmodat(int dirfd, const char *path, mode_t mode, int flags);
int stepfake_fchmod(int fd, mode_t mode);
int stepfake_utimensat(int dirfd, const char *path, const struct timespec times[2], int flags);
int stepfake_fsetxattr(int fd, const char *name, const void *value, size_t size, int flags);
int stepfake_unlinkat(int dirfd, const char *name, int flags);

#endif
