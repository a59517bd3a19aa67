/*
 * The createContainer hooks pid 1 runs (nsenter/hooks.c) before
 * pivot_root, as the parent gives them (libcontainer/launch). Records of
 * the PLAN frame's shape (bootstrap.h: u32 type, u32 length, payload
 * zero-padded to 8 bytes): KIND, STATE and DIR once each, first, then
 * one HOOK record per hook, in order.
 */
#ifndef HUSK_HOOKPLAN_H
#define HUSK_HOOKPLAN_H

#include <stdint.h>

#define HUSK_HOOKS_KIND  1 /* NUL-terminated: "createContainer", for errors   */
#define HUSK_HOOKS_STATE 2 /* the state's JSON: every hook's stdin            */
#define HUSK_HOOKS_DIR   3 /* NUL-terminated, absolute: the hooks' cwd        */
#define HUSK_HOOKS_HOOK  4 /* struct husk_hook_head, then NUL-terminated: the
                              path, argc args, envc environment entries    */

#define HUSK_HOOKS_MAX       (8u << 20) /* the payload's bytes          */
#define HUSK_HOOKS_MAX_COUNT 256        /* HOOK records                 */
#define HUSK_HOOKS_MAX_ARGS  4096       /* args, and env entries, of one */

struct husk_hook_head {
	uint32_t timeout; /* seconds; 0: none                                 */
	uint32_t has_env; /* 1: exactly envc entries; 0: an empty environment */
	uint32_t argc;    /* 0: argv is the path alone                        */
	uint32_t envc;
};

#endif
