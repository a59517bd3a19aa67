/*
 * The launcher: the one code path that turns a planned process into a
 * running one, for a container's init and for every exec (and a
 * startContainer hook, which is launched like an exec). plan.c parses the
 * PLAN frame (pure, tested from Go); launch.c sets the process up in
 * runc's order (attrs.c, creds.c, lookup.c, pty.c do the steps) and execs
 * it. Nothing here exits: every function returns -1 with the reason in
 * l->err, text that names the config field and value.
 */
#ifndef HUSK_LAUNCH_H
#define HUSK_LAUNCH_H

#include <linux/filter.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bootstrap.h"

/* The parsed PLAN frame. Strings and arrays point into buf, the copy of
 * the frame, each inside its own record's payload. */
struct husk_plan {
	char **argv, **envp; /* NULL-terminated arrays (malloc'd) */
	size_t argc, envc;
	const char *cwd, *path; /* path: NULL to look argv[0] up in PATH */
	uint32_t uid, gid, umask;
	const uint32_t *groups;
	size_t n_groups;
	struct husk_plan_rlimit *rlimits; /* malloc'd */
	size_t n_rlimits;
	struct husk_plan_caps caps;
	int no_new_privs, fill_home, keyring;
	const struct sock_filter *filter; /* NULL: no seccomp filter */
	size_t n_filter;
	uint32_t seccomp_flags;
	const uint64_t *affinity; /* NULL: leave it */
	size_t affinity_words;
	int has_mempolicy;
	struct husk_plan_mempolicy mempolicy;
	const uint64_t *nodes;
	size_t node_words;
	int has_personality;
	uint32_t personality;
	int has_ioprio;
	struct husk_plan_ioprio ioprio;
	int has_sched;
	struct husk_plan_sched sched;
	const char *apparmor, *selinux; /* NULL: none */
	const char *listener_msg; /* NULL: no listener */
	size_t listener_len;
	uint32_t listener_holes[HUSK_PLAN_MAX_HOLES]; /* where the pid goes */
	size_t n_listener_holes;
	int has_tty;
	struct husk_plan_tty tty;
	/* A container's init with a mount namespace of its own: what pid 1
	 * finishes of the rootfs (final.c). */
	int has_rootfs;
	uint32_t rootfs_flags; /* HUSK_ROOTFS_* */
	const char *rodev_name; /* the read-only /dev mount, for errors */
	char **masked, **rdonly; /* NULL-terminated (malloc'd), or NULL */
	size_t n_masked, n_rdonly;
	const char *mount_label; /* NULL: none */
	/* A container's init: its host name and domain name ("": leave
	 * it), its sysctls (key, value, ...: malloc'd) (system.c). */
	int has_uts;
	const char *hostname, *domainname;
	char **sysctl;
	size_t n_sysctls;
	char *buf; /* owns the bytes */
};

/* Parses the PLAN payload buf[0:len]. Returns 0, or -1 with the problem
 * in err (out is then left empty). */
int husk_parse_plan(const char *buf, size_t len, struct husk_plan *out, char *err, size_t errlen);
void husk_plan_free(struct husk_plan *p);

/* One launch in progress. */
struct husk_launch {
	struct husk_plan *plan;
	int forks;       /* exec: the launcher forks the process (the fork step) */
	int forked;      /* exec: 1 in the forked process */
	int lsm_fd[3];   /* apparmor, selinux attr/exec files, selinux attr/keycreate, or -1 */
	const char *apparmor_attr; /* the file lsm_fd[0] is: "apparmor/exec" or "exec" */
	int notify_fd;   /* the filter's listener fd, or -1 */
	int console_fd;  /* exec with a terminal: the console socket, or -1 */
	int dev_null_fd; /* init: the host's /dev/null cloned by the build, or -1 */
	int cwd_done;    /* cwd entered before the credentials */
	pid_t pid;       /* the process's pid in the runtime's pid namespace */
	/* exec: forks the process (run.c). Returns 0 in the forked process,
	 * with pid set; the first process never returns from it. */
	int (*fork)(struct husk_launch *l);
	char *listener_buf; /* the listener's message, with the pid */
	const char *exe; /* the file execve gets: path, or found in PATH */
	char home[4200]; /* "HOME=..." when filled */
	char found[4200];
	char err[1024];
};

/*
 * The steps, in order: husk_steps (launch.c), one table, each step with
 * when it applies and what it runs, logged under --debug as it runs;
 * docs/architecture.md ("One launcher") states the same order, and
 * nsenter's tests check the two against each other and the order's
 * constraints. open runs first, while /proc is still the runtime's
 * (before the exec joins the container's mount namespace): the LSM
 * attribute files. prepare runs every step that applies up to execve
 * (for an exec, the fork among them); exec: execve.
 */
struct husk_step {
	const char *name;
	int (*applies)(const struct husk_launch *l);
	int (*run)(struct husk_launch *l);
};
extern const struct husk_step husk_steps[];
extern const size_t husk_n_steps;

void husk_launch_init(struct husk_launch *l, struct husk_plan *p, int forks);
int husk_launch_open(struct husk_launch *l);
int husk_launch_prepare(struct husk_launch *l);
int husk_launch_exec(struct husk_launch *l);

/* The steps' own files: each returns 0 or -1 with l->err set. */
int husk_launch_errf(struct husk_launch *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *husk_errtext(int err);
int husk_set_affinity(const char *field, const uint64_t *mask, size_t words, char *err, size_t errlen);
void husk_log_affinity(const char *prefix, const char *why); /* only under --debug */
int husk_set_attrs(struct husk_launch *l);     /* attrs.c: rlimits .. final affinity */
int husk_set_scheduler(struct husk_launch *l); /* attrs.c */
int husk_set_labels(struct husk_launch *l);    /* attrs.c */
int husk_sched_after_fork(const struct husk_plan *p);
int husk_set_credentials(struct husk_launch *l); /* creds.c */
/* creds.c: capability v's name ("CAP_KILL"), or "cap(v)" in buf. */
const char *husk_cap_name(uint32_t v, char *buf, size_t n);
/* cwd.c: process.cwd entered inside the root: 1, or 0 when only the
 * user may enter it (EACCES, EPERM; as_user 0), or -1. */
int husk_enter_cwd(struct husk_launch *l, int as_user);
int husk_set_hostname(struct husk_launch *l);    /* system.c */
int husk_set_domainname(struct husk_launch *l);
int husk_write_sysctls(struct husk_launch *l);
/* final.c: s quoted as Go's %q quotes a path, cut to fit buf; the
 * reason a step's helper failed, into a buffer of HUSK_WHY bytes (-1). */
const char *husk_quote(const char *s, char *buf, size_t n);
#define HUSK_WHY 512
int husk_whyf(char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int husk_mask_paths(struct husk_launch *l);      /* final.c */
int husk_readonly_paths(struct husk_launch *l);
int husk_readonly_dev(struct husk_launch *l);
int husk_readonly_root(struct husk_launch *l);
int husk_fill_home(struct husk_launch *l);       /* lookup.c */
int husk_look_path(struct husk_launch *l);

/*
 * pty.c. husk_pty_send makes a pty on the current mount namespace's
 * /dev/ptmx (its slave must be on a devpts), sized and without ONLCR,
 * the slave owned by uid; sends the master over sock (SCM_RIGHTS) and
 * returns the slave, or -1 with err set. husk_take_ctty makes fd 0 the
 * controlling terminal of a new session.
 */
int husk_pty_send(int sock, const struct husk_plan_tty *tty, uint32_t uid, char *err, size_t errlen);
int husk_take_ctty(char *err, size_t errlen);
/* pty.c: binds the slave onto /dev/console (a container's init with a
 * mount namespace of its own), both ends by fd. */
int husk_bind_console(int slave, char *err, size_t errlen);

#endif
