/*
 * hooks.c: the createContainer hooks, run by pid 1 before pivot_root
 * (build.c) from the parent's hook plan (hookplan.h), with
 * libcontainer/hooks's semantics and words.
 */
#ifndef HUSK_NSENTER_HOOKS_H
#define HUSK_NSENTER_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "hookplan.h"

struct husk_hook {
	struct husk_hook_head h;
	char **argv; /* argc entries, or the path alone; NULL-terminated */
	char **envp; /* envc entries (none without has_env); NULL-terminated */
	const char *path;
};

struct husk_hooks {
	const char *kind, *dir;
	const char *state;
	size_t state_len;
	struct husk_hook *hook; /* malloc'd */
	size_t n;
};

/* Parses the hook plan buf[0:len] (pointers into buf, which must stay):
 * 0, or -1 with the problem in err. Pure: no syscalls. */
int husk_parse_hooks(const char *buf, size_t len, struct husk_hooks *out, char *err, size_t errlen);
void husk_hooks_free(struct husk_hooks *h);

/* Runs the hooks in order, each with the state on stdin, stopping at the
 * first that fails: 0, or -1 with runc's words in err ("hooks.KIND[i]:
 * error running KIND hook #i: \"PATH\": exit status 3: OUTPUT"). */
int husk_run_hooks(const struct husk_hooks *h, char *err, size_t errlen);

#endif
