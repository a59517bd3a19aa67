/*
 * The createContainer hooks (hooks.h), run by pid 1 in the container's
 * namespaces before pivot_root, with libcontainer/hooks's semantics and
 * words, which the parent's own hooks keep: each hook a child in a
 * process group of its own, in the plan's directory, with the state on
 * stdin and only stdio (every other fd close-on-exec), its stdout and
 * stderr kept (the last 4 KiB) for the error; killed with its whole group
 * when its timeout passes; after it exits, its output is read for at most
 * a second more (a child of it holding the pipe: Go's WaitDelay).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hooks.h"
#include "launch.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#define OUTPUT_LIMIT 4096 /* libcontainer/hooks's outputLimit */
#define WAIT_DELAY_MS 1000

/* ---- the plan --------------------------------------------------------- */

static int perr(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return -1;
}

/* count NUL-terminated strings from *p within end into out (malloc'd,
 * NULL-terminated), advancing *p. */
static int take_strings(const char **p, const char *end, uint32_t count, char ***out)
{
	char **v = calloc((size_t)count + 2, sizeof(char *));

	if (!v)
		return -1;
	for (uint32_t i = 0; i < count; i++) {
		const char *nul = memchr(*p, '\0', end - *p);

		if (!nul) {
			free(v);
			return -1;
		}
		v[i] = (char *)*p;
		*p = nul + 1;
	}
	*out = v;
	return 0;
}

static int parse_hook(const char *p, uint32_t len, struct husk_hook *hk, size_t i, char *err, size_t errlen)
{
	const char *end = p + len, *nul;

	if (len < sizeof(hk->h))
		return perr(err, errlen, "hook %zu: %u bytes, shorter than its head", i, len);
	memcpy(&hk->h, p, sizeof(hk->h));
	p += sizeof(hk->h);
	if (hk->h.argc > HUSK_HOOKS_MAX_ARGS || hk->h.envc > HUSK_HOOKS_MAX_ARGS || hk->h.has_env > 1 ||
	    (!hk->h.has_env && hk->h.envc))
		return perr(err, errlen, "hook %zu: %u args, %u env entries, env flag %u", i, hk->h.argc, hk->h.envc,
			    hk->h.has_env);
	nul = memchr(p, '\0', end - p);
	if (!nul || p[0] != '/')
		return perr(err, errlen, "hook %zu: the path is not an absolute NUL-terminated string", i);
	hk->path = p;
	p = nul + 1;
	if (take_strings(&p, end, hk->h.argc, &hk->argv) < 0)
		return perr(err, errlen, "hook %zu: %u args past the record's end", i, hk->h.argc);
	if (!hk->h.argc)
		hk->argv[0] = (char *)hk->path;
	if (take_strings(&p, end, hk->h.envc, &hk->envp) < 0)
		return perr(err, errlen, "hook %zu: %u env entries past the record's end", i, hk->h.envc);
	if (p != end)
		return perr(err, errlen, "hook %zu: %zu bytes after its strings", i, (size_t)(end - p));
	return 0;
}

int husk_parse_hooks(const char *buf, size_t len, struct husk_hooks *out, char *err, size_t errlen)
{
	size_t off = 0;

	memset(out, 0, sizeof(*out));
	if (len > HUSK_HOOKS_MAX)
		return perr(err, errlen, "%zu bytes, over %u", len, HUSK_HOOKS_MAX);
	out->hook = calloc(HUSK_HOOKS_MAX_COUNT, sizeof(*out->hook));
	if (!out->hook)
		return perr(err, errlen, "allocate: %s", husk_errtext(errno));
	while (off < len) {
		uint32_t type, n;
		const char *p;

		if (len - off < 8)
			goto bad_len;
		memcpy(&type, buf + off, 4);
		memcpy(&n, buf + off + 4, 4);
		p = buf + off + 8;
		if (n > len - off - 8)
			goto bad_len;
		off += 8 + (((size_t)n + 7) & ~(size_t)7);
		if (off > len)
			goto bad_len;
		switch (type) {
		case HUSK_HOOKS_KIND:
		case HUSK_HOOKS_DIR:
			if (!n || p[n - 1] != '\0' || strlen(p) != n - 1 || out->hook[0].path) {
				husk_hooks_free(out);
				return perr(err, errlen, "record %u: not one NUL-terminated string before the hooks", type);
			}
			if (type == HUSK_HOOKS_KIND)
				out->kind = p;
			else
				out->dir = p;
			break;
		case HUSK_HOOKS_STATE:
			out->state = p;
			out->state_len = n;
			break;
		case HUSK_HOOKS_HOOK:
			if (out->n == HUSK_HOOKS_MAX_COUNT) {
				husk_hooks_free(out);
				return perr(err, errlen, "over %u hooks", HUSK_HOOKS_MAX_COUNT);
			}
			if (parse_hook(p, n, &out->hook[out->n], out->n, err, errlen) < 0) {
				out->n++;
				husk_hooks_free(out);
				return -1;
			}
			out->n++;
			break;
		default:
			husk_hooks_free(out);
			return perr(err, errlen, "unknown record type %u", type);
		}
	}
	if (!out->kind || !out->dir || out->dir[0] != '/' || !out->state) {
		husk_hooks_free(out);
		return perr(err, errlen, "the kind, the state or an absolute directory is missing");
	}
	return 0;
bad_len:
	husk_hooks_free(out);
	return perr(err, errlen, "a record's length runs past the plan's %zu bytes", len);
}

void husk_hooks_free(struct husk_hooks *h)
{
	for (size_t i = 0; h->hook && i < h->n; i++) {
		free(h->hook[i].argv);
		free(h->hook[i].envp);
	}
	free(h->hook);
	memset(h, 0, sizeof(*h));
}

/* ---- running one ------------------------------------------------------ */

/* The last OUTPUT_LIMIT bytes of a hook's output. */
struct tail {
	char b[OUTPUT_LIMIT];
	size_t n;
};

static void tail_add(struct tail *t, const char *p, size_t n)
{
	if (n >= sizeof(t->b)) {
		memcpy(t->b, p + n - sizeof(t->b), sizeof(t->b));
		t->n = sizeof(t->b);
		return;
	}
	if (t->n + n > sizeof(t->b)) {
		size_t drop = t->n + n - sizeof(t->b);

		memmove(t->b, t->b + drop, t->n - drop);
		t->n -= drop;
	}
	memcpy(t->b + t->n, p, n);
	t->n += n;
}

/* Go's signal names (syscall.Signal's String on Linux). */
static const char *signal_name(int sig)
{
	static const char *const names[] = {
		NULL, "hangup", "interrupt", "quit", "illegal instruction", "trace/breakpoint trap", "aborted",
		"bus error", "floating point exception", "killed", "user defined signal 1", "segmentation fault",
		"user defined signal 2", "broken pipe", "alarm clock", "terminated", "stack fault", "child exited",
		"continued", "stopped (signal)", "stopped", "stopped (tty input)", "stopped (tty output)",
		"urgent I/O condition", "CPU time limit exceeded", "file size limit exceeded",
		"virtual timer expired", "profiling timer expired", "window changed", "I/O possible",
		"power failure", "bad system call",
	};
	static char buf[24];

	if (sig > 0 && sig < (int)(sizeof(names) / sizeof(names[0])))
		return names[sig];
	snprintf(buf, sizeof(buf), "signal %d", sig);
	return buf;
}

/* How a hook ended, as os.ProcessState's String: "" when it exited 0. */
static void status_text(int st, char *why, size_t n)
{
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		why[0] = '\0';
	else if (WIFEXITED(st))
		snprintf(why, n, "exit status %d", WEXITSTATUS(st));
	else
		snprintf(why, n, "signal: %s%s", signal_name(WTERMSIG(st)), WCOREDUMP(st) ? " (core dumped)" : "");
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The hook's side of the fork: its own process group, the pipes as
 * stdio, nothing else inherited, the plan's directory; a failure before
 * execve goes back on the errno pipe. Never returns. */
static void __attribute__((noreturn)) child(const struct husk_hooks *hs, const struct husk_hook *hk, int in, int out,
					    int errp, const sigset_t *mask)
{
	static char *const empty[] = {NULL};
	int e;

	if (setpgid(0, 0) < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0 ||
	    syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0 || sigprocmask(SIG_SETMASK, mask, NULL) < 0) {
		e = errno;
	} else if (chdir(hs->dir) < 0) {
		e = -errno; /* negative: chdir's */
	} else {
		execve(hk->path, hk->argv, hk->h.has_env ? hk->envp : empty);
		e = errno;
	}
	if (write(errp, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* Feeds stdin, keeps the output, waits for the hook (pidfd) and its
 * output's end: 0 with why set to how it ended ("" for exit 0), or -1 on
 * its timeout (why says so; the group is killed). */
static int await(const struct husk_hooks *hs, const struct husk_hook *hk, pid_t pid, int in, int out, struct tail *t,
		 char *why, size_t n)
{
	long long deadline = hk->h.timeout ? now_ms() + hk->h.timeout * 1000LL : 0, delay = 0, left;
	int pidfd = syscall(SYS_pidfd_open, pid, 0), st = 0, exited = 0, timed_out = 0;
	size_t sent = 0;
	char buf[4096];

	if (pidfd < 0) {
		snprintf(why, n, "pidfd_open: %s", husk_errtext(errno));
		kill(-pid, SIGKILL);
		waitpid(pid, &st, 0);
		return 0;
	}
	fcntl(in, F_SETFL, O_NONBLOCK);
	fcntl(out, F_SETFL, O_NONBLOCK);
	while (out >= 0 || !exited) {
		struct pollfd p[3] = {{.fd = exited ? -1 : pidfd, .events = POLLIN},
				      {.fd = out, .events = POLLIN},
				      {.fd = sent < hs->state_len ? in : -1, .events = POLLOUT}};
		int wait = -1;

		if (deadline && (left = deadline - now_ms()) <= 0) {
			timed_out = 1;
			break;
		}
		if (deadline)
			wait = (int)left;
		if (exited) {
			left = delay - now_ms();
			if (left <= 0)
				break; /* WaitDelay: stop reading */
			if (wait < 0 || left < wait)
				wait = (int)left;
		}
		if (poll(p, 3, wait) < 0 && errno != EINTR)
			break;
		if (p[2].revents) {
			ssize_t w = write(in, hs->state + sent, hs->state_len - sent);

			if (w > 0)
				sent += w;
			else if (w < 0 && errno != EAGAIN && errno != EINTR)
				sent = hs->state_len; /* EPIPE: the hook does not read it */
			if (sent == hs->state_len)
				close_fd(&in);
		}
		if (p[1].revents) {
			ssize_t r = read(out, buf, sizeof(buf));

			if (r > 0)
				tail_add(t, buf, r);
			else if (r == 0 || (errno != EAGAIN && errno != EINTR))
				close_fd(&out);
		}
		if (p[0].revents) {
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			exited = 1;
			delay = now_ms() + WAIT_DELAY_MS;
			close_fd(&in);
		}
	}
	close(pidfd);
	close_fd(&in);
	delay = exited && out >= 0; /* the output still open: WaitDelay ran out */
	close_fd(&out);
	kill(-pid, SIGKILL); /* whatever the hook left behind */
	if (!exited)
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	if (timed_out) {
		snprintf(why, n, "timed out after %us", hk->h.timeout);
		return -1;
	}
	status_text(st, why, n);
	if (!why[0] && delay)
		snprintf(why, n, "exec: WaitDelay expired before I/O complete");
	return 0;
}

/* Runs hook i: 0 when it exited 0, else -1 with why. */
static int run_one(const struct husk_hooks *hs, size_t i, struct tail *t, char *why, size_t n)
{
	const struct husk_hook *hk = &hs->hook[i];
	int in[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1}, e;
	sigset_t pipe, old;
	ssize_t got;
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		snprintf(why, n, "pipe: %s", husk_errtext(errno));
		goto fail;
	}
	/* A hook that exits without reading its stdin must not kill pid 1
	 * with SIGPIPE: blocked here, and a pending one taken before the
	 * mask is restored. */
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe, &old);
	pid = fork();
	if (pid == 0)
		child(hs, hk, in[0], out[1], errp[1], &old);
	close_fd(&in[0]);
	close_fd(&out[1]);
	close_fd(&errp[1]);
	if (pid < 0) {
		snprintf(why, n, "fork/exec %s: %s", hk->path, husk_errtext(errno));
	} else {
		while ((got = read(errp[0], &e, sizeof(e))) < 0 && errno == EINTR)
			;
		if (got == sizeof(e)) {
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
			if (e < 0)
				snprintf(why, n, "chdir %s: %s", hs->dir, husk_errtext(-e));
			else
				snprintf(why, n, "fork/exec %s: %s", hk->path, husk_errtext(e));
		} else {
			await(hs, hk, pid, in[1], out[0], t, why, n);
			in[1] = out[0] = -1; /* await closed them */
		}
	}
	{
		struct timespec zero = {0, 0};

		while (sigtimedwait(&pipe, NULL, &zero) > 0)
			;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
fail:
	for (int k = 0; k < 2; k++) {
		close_fd(&in[k]);
		close_fd(&out[k]);
		close_fd(&errp[k]);
	}
	return why[0] ? -1 : 0;
}

static int is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

int husk_run_hooks(const struct husk_hooks *hs, char *err, size_t errlen)
{
	for (size_t i = 0; i < hs->n; i++) {
		struct tail t = {.n = 0};
		char why[512] = "";
		size_t a = 0, b;

		if (run_one(hs, i, &t, why, sizeof(why)) == 0)
			continue;
		/* The output, trimmed of white space, after ": " (tailBuffer). */
		while (a < t.n && is_space(t.b[a]))
			a++;
		b = t.n;
		while (b > a && is_space(t.b[b - 1]))
			b--;
		snprintf(err, errlen, "hooks.%s[%zu]: error running %s hook #%zu: \"%s\": %s%s%.*s", hs->kind, i, hs->kind, i,
			 hs->hook[i].path, why, b > a ? ": " : "", (int)(b - a), t.b + a);
		return -1;
	}
	return 0;
}
