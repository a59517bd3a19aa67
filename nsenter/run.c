/*
 * The two launches (nsexec.h), once nsexec has joined and made the
 * namespaces.
 *
 * An exec (husk_run_exec): nsexec's first process is still in the
 * runtime's pid namespace, invisible to the container. It runs the whole
 * setup there (launch.c: credentials, the filter, ...), then forks: the
 * child, the first thing of this exec the container can see, already has
 * the process's credentials and filter, and only execs. The first process
 * sends PID, hands the listener its fd, waits for the parent's GO (the
 * binary's view is sealed), lets the child go, and sends READY once the
 * child is about to execve, or ERROR with the child's reason.
 *
 * A container's init (husk_run_init): the forked process is the
 * container's pid 1. It builds the container from the parent's CONFIG
 * (build.c: the mounts, the createContainer hooks, pivot_root; without a
 * mount namespace of its own, the pty and a chroot). It never runs Go: it
 * is single-threaded and an image exec'd in the runtime's user
 * namespace, so a process in the container cannot ptrace it without
 * CAP_SYS_PTRACE over that namespace. It enters the root, finishes the
 * container and sets the process up (launch.c's steps), sends READY, and
 * execs once `start` opens exec.fifo.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "bootstrap.h"
#include "build.h"
#include "launch.h"
#include "nsexec.h"

#define debugf(fmt, ...) husk_logf("debug", "nsexec: " fmt, ##__VA_ARGS__)

static void must_pipe(int p[2])
{
	if (pipe2(p, O_CLOEXEC) < 0)
		husk_fail("nsexec: pipe: %s", strerror(errno));
}

/*
 * An execve that failed, after the PATH lookup checked the file (a
 * missing interpreter, a bad ELF): one line on the process's stderr,
 * where the user and the container's log see it, then the same text for
 * --log (the parent never repeats it on husk's stderr): on exec.fifo for
 * a container's init (fifo; `husk start` reads it until our end closes),
 * else as an error record on the log pipe (an exec: read while the
 * parent waits, gone after exec -d). SIGPIPE is blocked first: a reader
 * already gone makes that write EPIPE, not our death. Exit 127, as a
 * shell's.
 */
static void __attribute__((noreturn)) exec_failed(struct husk_launch *l, int fifo)
{
	sigset_t pipe;

	dprintf(STDERR_FILENO, "husk init: %s\n", l->err);
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	if (sigprocmask(SIG_BLOCK, &pipe, NULL) < 0)
		_exit(127); /* the line is all there is */
	if (fifo < 0)
		husk_logf("error", "%s", l->err);
	else if (write(fifo, l->err, strlen(l->err)) < 0)
		_exit(127); /* start is gone: the line is all there is */
	_exit(127);
}

/* The pipes between an exec's first process and the forked one: gate
 * (first → forked: the go, with the forked process's pid), status
 * (forked → first: one NUL byte once about to execve, or its error). */
static int exec_gate[2] = {-1, -1}, exec_status[2] = {-1, -1};

/*
 * The fork step of an exec (launch.c). The forked process waits for the
 * first's go, which carries its pid in the runtime's pid namespace (for a
 * listener's message), and returns to run the steps left. The first
 * process sends PID, waits for the parent's GO (the binary's view is
 * sealed by then: no exec of it can follow ours), lets the process go,
 * and sends READY once it is about to execve, or ERROR with its reason;
 * it never returns.
 */
static int exec_fork(struct husk_launch *l)
{
	char why[sizeof(l->err)];
	int32_t p;
	ssize_t n;
	pid_t pid;

	husk_mark("ready");
	husk_logf("debug", "setns_init: about to exec \"%s\": the launcher forks it into the container",
		  l->exe ? l->exe : l->plan->argv[0]);
	pid = husk_fork();
	if (pid == 0) {
		close(exec_gate[1]);
		close(exec_status[0]);
		while ((n = read(exec_gate[0], &p, sizeof(p))) < 0 && errno == EINTR)
			;
		if (n != sizeof(p))
			_exit(1); /* the first process failed and said why */
		close(exec_gate[0]);
		l->forked = 1;
		l->pid = p;
		return 0;
	}
	close(exec_gate[0]);
	close(exec_status[1]);
	p = pid;
	if (husk_send_frame(HUSK_SYNC_PID, &p, sizeof(p)) < 0)
		_exit(1); /* the parent is gone; the child sees EOF and exits */
	husk_expect(HUSK_SYNC_GO);
	if (write(exec_gate[1], &p, sizeof(p)) != sizeof(p))
		husk_fail("nsexec: let the process go: %s", strerror(errno));
	while ((n = read(exec_status[0], why, sizeof(why) - 1)) < 0 && errno == EINTR)
		;
	if (n <= 0)
		husk_fail("nsexec: the process ended before its execve");
	if (why[0] != '\0') {
		why[n] = '\0';
		husk_fail("%s", why);
	}
	husk_mark("execve");
	if (husk_send_frame(HUSK_SYNC_READY, NULL, 0) < 0)
		_exit(1);
	_exit(0);
}

/*
 * An exec: the steps (launch.c) in nsexec's first process, up to the
 * fork; the rest in the forked process, which says so on the status pipe
 * (one NUL byte, or its error) and execs. An execve that fails after
 * that (the PATH lookup checked the file already) is said on its
 * stderr, and it exits 127 as a shell would.
 */
void husk_run_exec(struct husk_launch *l)
{
	husk_logf("debug", "launcher: child process in init(): an exec of \"%s\"", l->plan->argv[0]);
	/* Before the process's rlimits: RLIMIT_NOFILE may leave no room. */
	must_pipe(exec_gate);
	must_pipe(exec_status);
	if (l->plan->has_tty && (l->plan->tty.flags & HUSK_TTY_OPEN))
		l->console_fd = husk_env_fd(HUSK_ENV_CONSOLEFD);
	l->fork = exec_fork;
	if (husk_launch_prepare(l) < 0) {
		if (!l->forked)
			husk_fail("%s", l->err);
		if (write(exec_status[1], l->err, strlen(l->err)) < 0)
			_exit(126);
		_exit(127);
	}
	if (write(exec_status[1], "", 1) != 1)
		_exit(126);
	husk_launch_exec(l);
	exec_failed(l, -1);
}

/* ---- a container's init ----------------------------------------------- */

/* Stdio that is the runtime's /dev/null becomes the container's, as in
 * runc: a file on a mount outside the container is one CRIU cannot
 * checkpoint. A container without /dev/null keeps the runtime's. */
static void reopen_dev_null(void)
{
	struct stat null, st;
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return;
	if (fstat(fd, &null) == 0 && S_ISCHR(null.st_mode))
		for (int i = 0; i <= 2; i++)
			if (fstat(i, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == null.st_rdev &&
			    dup2(fd, i) < 0)
				husk_fail("nsexec: reopen fd %d on the container's /dev/null: %s", i, strerror(errno));
	close(fd);
}

/* Takes the root built (pivot_root moved ours already; a chroot, with
 * --no-pivot, did not) and the pty slave as stdio: the one made before
 * a chroot, or the console step's (console: stdio is left for it). */
static void take_over(int root, int slave, int console)
{
	if (fchdir(root) < 0 || chroot(".") < 0)
		husk_fail("nsexec: enter the container's root: %s", strerror(errno));
	close(root);
	if (slave < 0 && !console)
		reopen_dev_null();
	if (slave < 0)
		return;
	for (int fd = 0; fd <= 2; fd++)
		if (dup2(slave, fd) < 0)
			husk_fail("process.terminal: dup the pty slave onto fd %d: %s", fd, strerror(errno));
	close(slave);
}

/* A directory to reopen exec.fifo through when the container's root
 * has no procfs on /proc (a chroot without a mount namespace): the one
 * the build opened before it entered that root (host_fd_dir), kept
 * close-on-exec until the fifo is open. -1 (host_fd_dir closed) when the
 * root has a procfs of its own on /proc, or there is no fifo. */
static int open_fifo_dir(int root, int host_fd_dir)
{
	struct statfs fs;
	int proc;

	if (host_fd_dir < 0)
		return -1;
	proc = openat(root, "proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (proc >= 0 && fstatfs(proc, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC) {
		close(proc);
		close(host_fd_dir);
		return -1;
	}
	if (proc >= 0)
		close(proc);
	return host_fd_dir;
}

/*
 * Pid 1's own fd directory on the container's /proc, to reopen exec.fifo
 * through once the filter is in (openat only): opened before the filter,
 * from a /proc that is a procfs, without crossing a mount. Never by path
 * at the wait: a volume at /proc/1 or /proc/self/fd would have handed the
 * open a file the container chose, and started the process during create.
 */
static int open_own_fd_dir(struct husk_launch *l)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_NO_XDEV | RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
	int proc = open("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), dir, err;
	struct statfs fs;

	if (proc < 0 || fstatfs(proc, &fs) < 0 || fs.f_type != PROC_SUPER_MAGIC) {
		err = proc < 0 ? errno : EXDEV;
		if (proc >= 0)
			close(proc);
		return husk_launch_errf(l, "exec.fifo: the container's /proc: %s",
					proc < 0 ? husk_errtext(err) : "not a procfs");
	}
	dir = syscall(SYS_openat2, proc, "self/fd", &how, sizeof(how));
	err = errno;
	close(proc);
	if (dir < 0)
		return husk_launch_errf(l, "exec.fifo: open /proc/self/fd on the container's procfs without "
					   "crossing a mount: %s", husk_errtext(err));
	return dir;
}

/* Blocks opening exec.fifo until `husk start` opens it, then says go;
 * returns the fifo, open until execve, or -1 when there is none. */
static int wait_for_start(struct husk_launch *l, int dir)
{
	char path[32];
	int fd = husk_env_fd(HUSK_ENV_FIFOFD), fifo;

	if (fd < 0)
		return -1;
	/* Reopen the O_PATH fd (opened on the host side) through dir: the
	 * container's /proc/self/fd (open_own_fd_dir), else the one kept
	 * from before the root. */
	snprintf(path, sizeof(path), "%d", fd);
	fifo = openat(dir, path, O_WRONLY | O_CLOEXEC);
	if (fifo < 0 || write(fifo, "0", 1) != 1) {
		husk_launch_errf(l, "exec.fifo: %s /proc/self/fd/%s: %s", fifo < 0 ? "open" : "write", path,
				 husk_errtext(errno));
		dprintf(STDERR_FILENO, "husk init: %s\n", l->err);
		_exit(1);
	}
	close(dir);
	return fifo;
}

/* A signal that ends a waiting runc init ends ours. */
static void die_on_signal(int sig)
{
	_exit(128 + sig);
}

/*
 * As the init of a pid namespace, pid 1 gets no signal it does not
 * handle (but SIGKILL and SIGSTOP from outside): a created container
 * would ignore `husk kill ID TERM`. runc's waiting init (Go, which
 * handles every signal) dies on them; so does ours: a handler for each
 * signal whose default action ends a process. Installed before the
 * setup, so that no rt_sigaction follows the filter; execve resets
 * them to the default, so the process starts as it would without. Not
 * the init of a pid namespace (no pid namespace of its own), the
 * defaults already end it.
 */
static void die_on_term_signals(void)
{
	static const int ends[] = {SIGHUP,  SIGINT,  SIGQUIT,   SIGILL,    SIGTRAP, SIGABRT, SIGBUS, SIGFPE,
				   SIGUSR1, SIGSEGV, SIGUSR2,   SIGPIPE,   SIGALRM, SIGTERM, SIGSTKFLT, SIGXCPU,
				   SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSYS};
	struct sigaction sa = {.sa_handler = die_on_signal};

	if (getpid() != 1)
		return;
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if (sigaction(ends[i], &sa, NULL) < 0)
			husk_fail("nsexec: handle signal %d: %s", ends[i], strerror(errno));
	/* The C library keeps some real-time signals for itself: those it
	 * refuses are ones no one can send us by number anyway. */
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaction(sig, &sa, NULL);
}

/* Our pid in the runtime's pid namespace, from its /proc (for the
 * listener's message): 0 if it cannot be read. */
static pid_t host_pid(void)
{
	char buf[32];
	ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return atoi(buf);
}

void husk_run_init(struct husk_launch *l)
{
	int fifo_dir, fifo, console = husk_env_fd(HUSK_ENV_CONSOLEFD);
	struct husk_built b;
	pid_t self;

	husk_logf("debug", "launcher: child process in init(): the container's pid 1, to run \"%s\"",
		  l->plan->argv[0]);
	/* Our cwd is the caller's: pivot_root moves only what is at the old
	 * root, and nothing of the host may stay with pid 1. */
	if (chdir("/") < 0)
		husk_fail("nsexec: chdir /: %s", strerror(errno));
	self = host_pid(); /* /proc is still the runtime's */
	if (husk_launch_open(l) < 0)
		husk_fail("%s", l->err);
	/* The console socket: the console step's, with a mount namespace of
	 * the container's own; else the build's, which makes the pty from
	 * the host's /dev/ptmx before its chroot. */
	if (l->plan->has_tty && (l->plan->tty.flags & HUSK_TTY_OPEN))
		l->console_fd = console;
	else if (!l->plan->has_tty && console >= 0)
		close(console);
	husk_build_root(l, l->plan->has_tty && l->console_fd < 0 ? console : -1, &b);
	l->dev_null_fd = b.dev_null;
	fifo_dir = open_fifo_dir(b.root, b.host_fd_dir);
	take_over(b.root, b.slave, l->console_fd >= 0);
	if (fifo_dir < 0 && husk_env_fd(HUSK_ENV_FIFOFD) >= 0 && (fifo_dir = open_own_fd_dir(l)) < 0)
		husk_fail("%s", l->err);
	die_on_term_signals();
	l->pid = self;
	if (husk_launch_prepare(l) < 0)
		husk_fail("%s", l->err);
	husk_mark("ready");
	/* The last log line: after READY the parent may be gone. */
	husk_logf("debug", "closing the pipe to signal completion: execs \"%s\" on start", l->exe);
	if (husk_send_frame(HUSK_SYNC_READY, NULL, 0) < 0)
		_exit(1);
	close(husk_initpipe);
	fifo = wait_for_start(l, fifo_dir);
	husk_mark("execve");
	husk_launch_exec(l);
	exec_failed(l, fifo);
}
