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

#define STEPFAKE_MAX_CALLS 1024
#define STEPFAKE_LINE 512

/* The fds the fake hands out, for the tests to look for. */
#define STEPFAKE_CONSOLE_FD 7
#define STEPFAKE_LISTENER_FD 8
#define STEPFAKE_NOTIFY_FD 300
#define STEPFAKE_PTY_SLAVE_FD 301
#define STEPFAKE_FORKED_PID 4242
#define STEPFAKE_INIT_PID 1234
#define STEPFAKE_DEV_NULL_FD 302 /* the host's /dev/null Go init hands over */
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

#endif
