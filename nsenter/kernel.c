/*
 * The real kernel behind the launcher's steps (kernel.h): each wrapper
 * makes the one call it is named for, so the steps make the same calls,
 * in the same order, as they would call the kernel directly.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <linux/mount.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "kernel.h"

static int k_open(const char *path, int flags)
{
	return open(path, flags);
}

static int k_openat2(int dirfd, const char *path, struct open_how *how, size_t size)
{
	return syscall(SYS_openat2, dirfd, path, how, size);
}

static ssize_t k_read(int fd, void *buf, size_t n)
{
	return read(fd, buf, n);
}

static ssize_t k_write(int fd, const void *buf, size_t n)
{
	return write(fd, buf, n);
}

static int k_faccessat2(int dirfd, const char *path, int mode, int flags)
{
	return syscall(SYS_faccessat2, dirfd, path, mode, flags);
}

static int k_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg);
}

static long k_getcwd(char *buf, size_t n)
{
	return syscall(SYS_getcwd, buf, n);
}

static int k_setrlimit(int resource, const struct rlimit *r)
{
	return setrlimit(resource, r);
}

static long k_keyctl(int op, unsigned long arg2)
{
	return syscall(SYS_keyctl, op, arg2);
}

static long k_set_mempolicy(int mode, const void *nodes, unsigned long maxnode)
{
	return syscall(SYS_set_mempolicy, mode, nodes, maxnode);
}

static long k_personality(unsigned long persona)
{
	return syscall(SYS_personality, persona);
}

static long k_ioprio_set(int which, int who, int ioprio)
{
	return syscall(SYS_ioprio_set, which, who, ioprio);
}

static long k_sched_setattr(pid_t pid, const void *attr, unsigned int flags)
{
	return syscall(SYS_sched_setattr, pid, attr, flags);
}

static long k_seccomp(unsigned int op, unsigned int flags, const void *args)
{
	return syscall(SYS_seccomp, op, flags, args);
}

static int k_prctl(int op, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5)
{
	return prctl(op, a2, a3, a4, a5);
}

static int k_setgroups(size_t n, const gid_t *groups)
{
	return setgroups(n, groups);
}

static long k_capset(void *hdr, void *data)
{
	return syscall(SYS_capset, hdr, data);
}

static int k_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	return openat(dirfd, path, flags, mode);
}

static int k_fsopen(const char *fstype)
{
	return syscall(SYS_fsopen, fstype, FSOPEN_CLOEXEC);
}

static int k_fsconfig(int fd, unsigned int cmd, const char *key, const char *value)
{
	return syscall(SYS_fsconfig, fd, cmd, key, value, 0);
}

static int k_fsmount(int fd, unsigned int attrs)
{
	return syscall(SYS_fsmount, fd, FSMOUNT_CLOEXEC, attrs);
}

static int k_open_tree(int dirfd, const char *path, unsigned int flags)
{
	return syscall(SYS_open_tree, dirfd, path, flags);
}

static int k_move_mount(int from, int to)
{
	return syscall(SYS_move_mount, from, "", to, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

static int k_mount_setattr(int dirfd, const char *path, unsigned int flags, struct mount_attr *attr, size_t size)
{
	return syscall(SYS_mount_setattr, dirfd, path, flags, attr, size);
}

static int k_pivot_root(const char *new_root, const char *put_old)
{
	return syscall(SYS_pivot_root, new_root, put_old);
}

static int k_umount2(const char *target, int flags)
{
	return syscall(SYS_umount2, target, flags);
}

static long k_getdents64(int fd, void *buf, size_t n)
{
	return syscall(SYS_getdents64, fd, buf, n);
}

static int k_mount(const char *source, const char *target, const char *fstype, unsigned long flags, const char *data)
{
	return syscall(SYS_mount, source, target, fstype, flags, data);
}

static int k_mount_bind(const char *from, const char *to)
{
	return syscall(SYS_mount, from, to, NULL, MS_BIND, NULL);
}

static int k_sethostname(const char *name, size_t n)
{
	return syscall(SYS_sethostname, name, n);
}

static int k_setdomainname(const char *name, size_t n)
{
	return syscall(SYS_setdomainname, name, n);
}

const struct husk_kernel husk_real_kernel = {
	.open = k_open,
	.access = access,
	.openat2 = k_openat2,
	.close = close,
	.read = k_read,
	.write = k_write,
	.dup2 = dup2,
	.stat = stat,
	.fstat = fstat,
	.fstatfs = fstatfs,
	.fchown = fchown,
	.faccessat2 = k_faccessat2,
	.ioctl = k_ioctl,
	.tcgetattr = tcgetattr,
	.tcsetattr = tcsetattr,
	.sendmsg = sendmsg,
	.chdir = chdir,
	.fchdir = fchdir,
	.getcwd = k_getcwd,
	.setsid = setsid,
	.setrlimit = k_setrlimit,
	.umask = umask,
	.keyctl = k_keyctl,
	.set_mempolicy = k_set_mempolicy,
	.personality = k_personality,
	.ioprio_set = k_ioprio_set,
	.sched_setaffinity = sched_setaffinity,
	.sched_setattr = k_sched_setattr,
	.seccomp = k_seccomp,
	.prctl = k_prctl,
	.setgroups = k_setgroups,
	.setresgid = setresgid,
	.setresuid = setresuid,
	.capset = k_capset,
	.execve = execve,
	.openat = k_openat,
	.mkdirat = mkdirat,
	.mknodat = mknodat,
	.readlinkat = readlinkat,
	.fsopen = k_fsopen,
	.fsconfig = k_fsconfig,
	.fsmount = k_fsmount,
	.open_tree = k_open_tree,
	.move_mount = k_move_mount,
	.mount_setattr = k_mount_setattr,
	.fstatat = fstatat,
	.getdents64 = k_getdents64,
	.symlinkat = symlinkat,
	.fchownat = fchownat,
	.fchmodat = fchmodat,
	.fchmod = fchmod,
	.utimensat = utimensat,
	.fsetxattr = fsetxattr,
	.unlinkat = unlinkat,
	.pivot_root = k_pivot_root,
	.umount2 = k_umount2,
	.chroot = chroot,
	.mount = k_mount,
	.mount_bind = k_mount_bind,
	.sethostname = k_sethostname,
	.setdomainname = k_setdomainname,
};

const struct husk_kernel *husk_k = &husk_real_kernel;
