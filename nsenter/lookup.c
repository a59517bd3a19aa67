/*
 * The launcher's environment steps (launch.h): HOME from the container's
 * /etc/passwd when the parent asked (process.env had none, or an empty
 * one), and the file to exec: argv[0] looked up in the process's PATH as
 * a shell would, as the process's user.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "launch.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* The home of uid in /etc/passwd, "/" without one, into the env's
 * "HOME=" entry (the parent put exactly one there). */
int husk_fill_home(struct husk_launch *l)
{
	struct husk_plan *p = l->plan;
	char line[4096], uid[16];
	const char *home = "/";
	FILE *f = fopen("/etc/passwd", "re");

	snprintf(uid, sizeof(uid), "%u", p->uid);
	while (f && fgets(line, sizeof(line), f)) {
		char *field[7] = {0}, *rest = line;
		int n = 0;

		line[strcspn(line, "\n")] = '\0';
		while (n < 7 && rest)
			field[n++] = strsep(&rest, ":");
		if (n >= 6 && strcmp(field[2], uid) == 0 && field[5][0]) {
			home = field[5];
			break;
		}
	}
	snprintf(l->home, sizeof(l->home), "HOME=%s", home);
	if (f)
		fclose(f);
	for (size_t i = 0; i < p->envc; i++)
		if (strcmp(p->envp[i], "HOME=") == 0) {
			p->envp[i] = l->home;
			break;
		}
	return 0;
}

/*
 * 0 when path is a file the process may execute, else -1 and why. It asks
 * with the effective ids and capabilities (AT_EACCESS), as execve will: a
 * user with CAP_DAC_OVERRIDE may run a binary it cannot read. ENOSYS or
 * EPERM: faccessat2 refused by the filter; execve will decide.
 */
static int executable(const char *path, char *why, size_t n)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		snprintf(why, n, "stat %s: %s", path, husk_errtext(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(why, n, "is a directory");
		return -1;
	}
	if (syscall(SYS_faccessat2, AT_FDCWD, path, X_OK, AT_EACCESS) < 0 && errno != ENOSYS &&
	    errno != EPERM) {
		snprintf(why, n, "%s", husk_errtext(errno));
		return -1;
	}
	return 0;
}

int husk_look_path(struct husk_launch *l)
{
	const struct husk_plan *p = l->plan;
	const char *name = p->path ? p->path : p->argv[0], *path = NULL;
	char why[512], dirs[4096], *rest = dirs, *dir;

	if (strchr(name, '/')) {
		if (executable(name, why, sizeof(why)) < 0)
			return husk_launch_errf(l, "exec: \"%s\": %s", name, why);
		l->exe = name;
		return 0;
	}
	for (size_t i = 0; i < p->envc; i++)
		if (strncmp(p->envp[i], "PATH=", 5) == 0)
			path = p->envp[i] + 5;
	snprintf(dirs, sizeof(dirs), "%s", path && *path ? path : DEFAULT_PATH);
	while ((dir = strsep(&rest, ":"))) {
		size_t dl = strlen(dir);

		if (dl == 0)
			dir = ".", dl = 1;
		snprintf(l->found, sizeof(l->found), "%s%s%s", dir, dir[dl - 1] == '/' ? "" : "/", name);
		if (executable(l->found, why, sizeof(why)) == 0) {
			l->exe = l->found;
			return 0;
		}
	}
	return husk_launch_errf(l, "exec: \"%s\": executable file not found in $PATH", name);
}
