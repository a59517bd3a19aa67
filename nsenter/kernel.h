/*
 * The launcher's kernel (kernel.c): every kernel call its steps make
 * (launch.c's table, with attrs.c, creds.c, cwd.c, lookup.c, pty.c),
 * each behind a function pointer named for the call. husk_k is the real kernel, thin wrappers making the
 * same calls (and the mounts of mounts.c the same way); the steps'
 * tests (nsenter/internal/stepfake) point it at a
 * fake that records each call and fails the one they choose, so the
 * order and the error paths are tested without root. The fork step has
 * its own seam (husk_launch.fork).
 */
#ifndef HUSK_KERNEL_H
#define HUSK_KERNEL_H

#include <linux/mount.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <termios.h>

struct husk_kernel {
	/* files and fds */
	int (*open)(const char *path, int flags);
	int (*access)(const char *path, int mode);
	int (*openat2)(int dirfd, const char *path, struct open_how *how, size_t size);
	int (*close)(int fd);
	ssize_t (*read)(int fd, void *buf, size_t n);
	ssize_t (*write)(int fd, const void *buf, size_t n);
	int (*dup2)(int from, int to);
	int (*stat)(const char *path, struct stat *st);
	int (*fstat)(int fd, struct stat *st);
	int (*fstatfs)(int fd, struct statfs *fs);
	int (*fchown)(int fd, uid_t uid, gid_t gid);
	int (*faccessat2)(int dirfd, const char *path, int mode, int flags);
	int (*ioctl)(int fd, unsigned long req, void *arg);
	int (*tcgetattr)(int fd, struct termios *t);
	int (*tcsetattr)(int fd, int act, const struct termios *t);
	ssize_t (*sendmsg)(int fd, const struct msghdr *m, int flags);
	/* cwd and session */
	int (*chdir)(const char *path);
	int (*fchdir)(int fd);
	long (*getcwd)(char *buf, size_t n);
	pid_t (*setsid)(void);
	/* attributes */
	int (*setrlimit)(int resource, const struct rlimit *r);
	mode_t (*umask)(mode_t mask);
	long (*keyctl)(int op, unsigned long arg2);
	long (*set_mempolicy)(int mode, const void *nodes, unsigned long maxnode);
	long (*personality)(unsigned long persona);
	long (*ioprio_set)(int which, int who, int ioprio);
	int (*sched_setaffinity)(pid_t pid, size_t size, const cpu_set_t *set);
	long (*sched_setattr)(pid_t pid, const void *attr, unsigned int flags);
	long (*seccomp)(unsigned int op, unsigned int flags, const void *args);
	/* credentials */
	int (*prctl)(int op, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5);
	int (*setgroups)(size_t n, const gid_t *groups);
	int (*setresgid)(gid_t r, gid_t e, gid_t s);
	int (*setresuid)(uid_t r, uid_t e, uid_t s);
	long (*capset)(void *hdr, void *data);
	int (*execve)(const char *path, char *const argv[], char *const envp[]);
	/* mounts (mounts.c) */
	int (*openat)(int dirfd, const char *path, int flags, mode_t mode);
	int (*mkdirat)(int dirfd, const char *name, mode_t mode);
	int (*mknodat)(int dirfd, const char *name, mode_t mode, dev_t dev);
	ssize_t (*readlinkat)(int dirfd, const char *path, char *buf, size_t n);
	int (*open_tree)(int dirfd, const char *path, unsigned int flags);
	int (*move_mount)(int from, int to); /* a detached tree onto an O_PATH fd */
	int (*fsopen)(const char *fstype);   /* FSOPEN_CLOEXEC */
	int (*fsconfig)(int fd, unsigned int cmd, const char *key, const char *value);
	int (*fsmount)(int fd, unsigned int attrs); /* FSMOUNT_CLOEXEC */
	int (*mount_setattr)(int dirfd, const char *path, unsigned int flags, struct mount_attr *attr, size_t size);
	/* tmpcopyup (copyup.c) */
	int (*fstatat)(int dirfd, const char *path, struct stat *st, int flags);
	long (*getdents64)(int fd, void *buf, size_t n);
	int (*symlinkat)(const char *target, int dirfd, const char *name);
	int (*fchownat)(int dirfd, const char *path, uid_t uid, gid_t gid, int flags);
	int (*fchmodat)(int dirfd, const char *path, mode_t mode, int flags);
	int (*fchmod)(int fd, mode_t mode);
	int (*utimensat)(int dirfd, const char *path, const struct timespec times[2], int flags);
	int (*fsetxattr)(int fd, const char *name, const void *value, size_t size, int flags);
	int (*unlinkat)(int dirfd, const char *name, int flags);
	int (*pivot_root)(const char *new_root, const char *put_old);
	int (*umount2)(const char *target, int flags);
	int (*chroot)(const char *path);
	/* mount(2), for what fsconfig(2) cannot say (mounts.c) */
	int (*mount)(const char *source, const char *target, const char *fstype, unsigned long flags, const char *data);
	/* fin40's (final.c, system.c) */
	int (*mount_bind)(const char *from, const char *to); /* mount(from, to, MS_BIND) */
	int (*sethostname)(const char *name, size_t n);
	int (*setdomainname)(const char *name, size_t n);
	/* Not a kernel call: the fake's mark where step i (0-based in
	 * husk_steps) starts; NULL in the real kernel. */
	void (*step)(size_t i, const char *name);
};

extern const struct husk_kernel husk_real_kernel;
extern const struct husk_kernel *husk_k; /* &husk_real_kernel but in the steps' tests */

#endif
