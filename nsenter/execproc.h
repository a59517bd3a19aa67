/*
 * The Go-free exec: an exec's process, planned by the parent
 * (libcontainer/bootstrap/execplan.go), set up and exec'd in C by nsexec's
 * forked child, without starting the Go runtime. execplan.c parses the
 * plan (pure, tested from Go); execproc.c carries it out.
 */
#ifndef HUSK_EXECPROC_H
#define HUSK_EXECPROC_H

#include <linux/filter.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bootstrap.h"

struct husk_exec_plan {
	char **argv, **envp;   /* NULL-terminated; the strings point into buf */
	size_t argc, envc;
	const char *cwd;
	uint32_t uid, gid, umask;
	gid_t *groups;
	size_t n_groups;
	struct husk_plan_rlimit *rlimits;
	size_t n_rlimits;
	struct husk_plan_caps caps;
	int no_new_privs, fill_home;
	struct sock_filter *filter; /* NULL: no seccomp filter */
	size_t n_filter;
	uint32_t seccomp_flags;
	char *buf; /* owns the strings */
};

/* Parses the EXEC_PLAN payload buf[0:len]. Returns 0, or -1 with the
 * problem in err (out is then left empty). */
int husk_parse_exec_plan(const char *buf, size_t len, struct husk_exec_plan *out,
			 char *err, size_t errlen);
void husk_exec_plan_free(struct husk_exec_plan *p);

/* Closes every fd from initpipe up but init's own (the init socket, the
 * log pipe, the trace file) and makes those close-on-exec. */
void husk_close_stray_fds(int initpipe);

/* Sets up the process, sends READY on initpipe and execs it: never returns. */
void husk_exec_process(struct husk_exec_plan *p, int initpipe) __attribute__((noreturn));

#endif
