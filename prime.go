package main

// The kernel's first move of a process into a cgroup by pid after a quiet
// spell waits for an RCU grace period (cgroup_threadgroup_rwsem's
// rcu_sync: 4 to 30 ms on a 2-core host), and holds cgroup_mutex
// meanwhile, which every cgroup mkdir and write on the host waits for.
// husk's own starts mostly avoid it: with the cgroupfs driver, init and a
// plainly exec'd process enter their cgroups themselves (clone3 into the
// v2 directory, "0" written to the v1 tasks files; libcontainer/cgroup:
// Entry), which takes no such lock. Where husk still moves a process by
// pid (the systemd driver, a caller without root, an exec with a
// terminal whose launcher is moved in before its execve), a C constructor
// primes the lock before the Go runtime even boots: a thread moves husk
// into the cgroup it is already in (a no-op migration, which takes the
// same lock), so the wait runs in parallel with the runtime's boot and
// the config rather than on the start's path. Priming elsewhere would
// only hold cgroup_mutex while the start makes its cgroups. It does
// nothing for other commands (and `husk init`), and nothing when it
// cannot: it is only ever an optimisation.

/*
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char husk_prime_path[4096];

static void *husk_prime_run(void *arg)
{
	char pid[24];
	int n, fd = open(husk_prime_path, O_WRONLY | O_CLOEXEC);
	(void)arg;
	if (fd < 0)
		return NULL;
	n = snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (write(fd, pid, n) < 0)
		; // nothing to do: priming is an optimisation
	close(fd);
	return NULL;
}

// husk_prime_wanted: is this a create, run or exec that moves a process
// by pid (see above): --systemd-cgroup, a caller without root, or an exec
// with --cgroup? Any argument equal to a command name counts (a flag
// value that happens to be "run" only costs a prime).
static int husk_prime_wanted(void)
{
	char buf[4096];
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	int start = 0, exec = 0, moves = geteuid() != 0, sub = 0;
	char *p, *end;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	end = buf + n;
	p = buf + strlen(buf) + 1; // skip argv[0]
	if (p < end && strcmp(p, "init") == 0)
		return 0;
	for (; p < end; p += strlen(p) + 1) {
		start |= !strcmp(p, "create") || !strcmp(p, "run");
		exec |= !strcmp(p, "exec");
		moves |= !strncmp(p, "--systemd-cgroup", 16);
		sub |= !strcmp(p, "--cgroup") || !strncmp(p, "--cgroup=", 9);
	}
	return (start || exec) && (moves || (exec && sub));
}

// husk_prime_find sets husk_prime_path to this process's cgroup.procs in
// the first hierarchy of /proc/self/cgroup found at its usual mount.
static int husk_prime_find(void)
{
	char line[4096];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int found = 0;
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *ctrls = strchr(line, ':'), *path, *comma;
		if (!ctrls || !(path = strchr(ctrls + 1, ':')))
			continue;
		*ctrls++ = '\0';
		*path++ = '\0';
		path[strcspn(path, "\n")] = '\0';
		// The unified hierarchy is never primed: on a pure v2 host init
		// is born in its cgroup (CLONE_INTO_CGROUP) and moves nothing; on
		// a hybrid one it is not the costly hierarchy.
		if (strcmp(line, "0") == 0)
			continue;
		if ((comma = strchr(ctrls, ',')))
			*comma = '\0';
		if (strncmp(ctrls, "name=", 5) == 0)
			ctrls += 5;
		if (*ctrls == '\0')
			continue;
		snprintf(husk_prime_path, sizeof(husk_prime_path), "/sys/fs/cgroup/%s%s/cgroup.procs", ctrls, path);
		found = access(husk_prime_path, W_OK) == 0;
	}
	fclose(f);
	return found;
}

__attribute__((constructor)) static void husk_prime(void)
{
	pthread_t t;
	pthread_attr_t attr;
	if (!husk_prime_wanted() || !husk_prime_find())
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_create(&t, &attr, husk_prime_run, NULL);
	pthread_attr_destroy(&attr);
}
*/
import "C"
