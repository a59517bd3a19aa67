/*
 * nsexec: the C stage of `husk init`, run by a constructor before the Go
 * runtime starts. See nsexec.c and libcontainer/bootstrap/protocol.go.
 */
#ifndef HUSK_NSEXEC_H
#define HUSK_NSEXEC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HUSK_MAX_NS 16 /* entries in NS_PATHS */
#define HUSK_MAX_CGROUPS 32 /* fds in CGROUP_TASKS */

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* The namespace types, by their names under /proc/PID/ns (parse.c). */
struct husk_ns_type {
	const char *name;
	int flag;
};
extern const struct husk_ns_type husk_ns_types[];
extern const size_t husk_n_ns_types;

/* One namespace to join: NS_PATHS entry "name:path". */
struct husk_ns {
	const char *name; /* as under /proc/PID/ns: "net", "mnt", ... */
	int flag;         /* its CLONE_NEW* flag */
	const char *path; /* points into husk_bootstrap.ns_paths */
};

/* The parsed bootstrap message. Strings are NUL-terminated copies, NULL
 * when the attribute was absent; release them with husk_bootstrap_free. */
struct husk_bootstrap {
	uint32_t clone_flags;
	char *ns_paths; /* NS_PATHS, split in place into ns[] */
	struct husk_ns ns[HUSK_MAX_NS];
	size_t n_ns;
	char *uid_map;
	char *gid_map;
	char *oom_score_adj;
	char *timens_offsets;
	int cgroup_tasks[HUSK_MAX_CGROUPS]; /* CGROUP_TASKS: fds of v1 tasks files */
	size_t n_cgroup_tasks;
	uint64_t *affinity; /* AFFINITY: the initial CPU mask (a copy), or NULL */
	size_t affinity_words;
};

/* Parses the netlink message buf[0:len]. Returns 0, or -1 with a
 * description of the problem in err (out is then left empty). */
int husk_parse_bootstrap(const char *buf, size_t len, struct husk_bootstrap *out,
			 char *err, size_t errlen);
void husk_bootstrap_free(struct husk_bootstrap *b);

/*
 * io.c, shared by nsexec.c, run.c and the launcher. husk_initpipe is the
 * init socket. husk_send_frame writes one sync frame on it; husk_fail
 * sends text as an ERROR frame (stderr if that fails) and exits 1;
 * husk_read reads exactly n bytes or fails; husk_read_frame reads a frame
 * of type want, at most max bytes (malloc'd); husk_expect one without a
 * payload (no malloc: it is read after the filter); husk_logf writes one JSON
 * log line at level to the log pipe (debug lines only when husk_debug_on:
 * the parent logs them); husk_mark a trace record;
 * husk_env_fd is the fd an environment variable names, or -1;
 * husk_close_stray_fds closes every fd from the init socket up but init's
 * own, which it makes close-on-exec.
 */
extern int husk_initpipe;
extern int husk_frames_by_write; /* set once the filter is loaded */
int husk_send_frame(uint32_t type, const void *payload, uint32_t len);
void husk_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void husk_read(void *buf, size_t n, const char *what);
char *husk_read_frame(uint32_t want, uint32_t max, uint32_t *len);
void husk_expect(uint32_t want); /* a frame of type want without payload */
void husk_logf(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int husk_debug_on(void);
void husk_mark(const char *phase);
int husk_env_fd(const char *name);
void husk_close_stray_fds(void);
pid_t husk_fork(void); /* fails naming pids.max when refused */

/*
 * run.c: the two launches once nsexec has joined the namespaces.
 * husk_run_exec sets an exec's process up and forks it, reports and
 * exits; husk_run_init is the container's pid 1: it builds the root
 * (build.c), sets the process up and execs it on `start`. Both get the
 * plan nsexec read; neither returns: `husk init` never runs Go.
 */
struct husk_launch;
void husk_run_exec(struct husk_launch *l) __attribute__((noreturn));
void husk_run_init(struct husk_launch *l) __attribute__((noreturn));

/* The constructor's body: returns at once unless _HUSK_INITPIPE is set. */
void husk_nsexec(void);

#endif
