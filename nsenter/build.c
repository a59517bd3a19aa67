/*
 * Pid 1 builds the container's root (husk_build_root), before it
 * finishes the container and sets the process up (launch.c's steps).
 * What it does the parent decided: CONFIG's payload (bootstrap.h,
 * struct husk_build_head; libcontainer/launch/rootfsplan.go) carries the
 * mount plan (mountplan.h) and the createContainer hooks (hookplan.h).
 * In runc's order (its standard init's setupNetwork, prepareRootfs):
 *
 *   1. lo up, in a new network namespace (the hooks see it up);
 *   2. with a mount namespace of its own: the mounts (mounts.c: "/" and
 *      the rootfs's parents given their propagation, the rootfs bound
 *      onto itself, config.json's mounts, /dev's nodes and links, a
 *      missing cwd), asking the parent for each bind source it must
 *      open (MOUNT_SOURCE); then the host's /dev/null cloned, to mask
 *      files with once "/" is the container's;
 *      without one: the pty of process.terminal from the host's
 *      /dev/ptmx (runc's: there is no /dev/console to bind it on);
 *   3. CREATE_HOOKS: the parent applies the cgroup limits and runs the
 *      prestart and createRuntime hooks (when it asked for the stop);
 *   4. the createContainer hooks, in the container's namespaces, "/"
 *      still the host's, in the rootfs's directory;
 *   5. pivot_root (mountroot.c), or without a mount namespace a chroot
 *      into the rootfs and the missing cwd made there.
 *
 * Each failure ends pid 1 with the reason sent to the parent (husk_fail),
 * in the words Go init had, which the tests and scripts look for.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bootstrap.h"
#include "build.h"
#include "hooks.h"
#include "launch.h"
#include "mounts.h"
#include "nsexec.h"

/* CONFIG's payload, parsed: the parts point into buf. */
struct build {
	uint32_t flags;
	struct husk_mounts mounts;
	struct husk_hooks hooks;
	int has_hooks;
	const char *chroot; /* HUSK_BUILD_CHROOT: the rootfs's path */
	char *buf;
};

static void parse_build(struct build *b, char *buf, uint32_t len)
{
	struct husk_build_head h;
	char err[512];
	uint64_t want;
	const char *p;

	memset(b, 0, sizeof(*b));
	b->buf = buf;
	if (len < sizeof(h))
		husk_fail("nsexec: CONFIG of %u bytes, shorter than its head", len);
	memcpy(&h, buf, sizeof(h));
	want = (uint64_t)sizeof(h) + h.mounts_len + h.hooks_len + h.chroot_len;
	if (want != len)
		husk_fail("nsexec: CONFIG of %u bytes, its head says %llu", len, (unsigned long long)want);
	if (h.flags & ~HUSK_BUILD_FLAGS)
		husk_fail("nsexec: CONFIG with unknown flags %#x (is husk init the same version as husk?)", h.flags);
	if (!(h.flags & HUSK_BUILD_CHROOT) != !h.chroot_len)
		husk_fail("nsexec: CONFIG: a chroot path goes with the chroot flag only");
	b->flags = h.flags;
	p = buf + sizeof(h);
	if (husk_parse_mounts(p, h.mounts_len, &b->mounts, err, sizeof(err)) < 0)
		husk_fail("nsexec: CONFIG: the mount plan: %s", err);
	p += h.mounts_len;
	if (h.hooks_len) {
		if (husk_parse_hooks(p, h.hooks_len, &b->hooks, err, sizeof(err)) < 0)
			husk_fail("nsexec: CONFIG: the createContainer hooks: %s", err);
		b->has_hooks = 1;
	}
	p += h.hooks_len;
	if (h.chroot_len) {
		if (p[h.chroot_len - 1] != '\0' || strlen(p) != h.chroot_len - 1 || p[0] != '/')
			husk_fail("nsexec: CONFIG: the chroot path is not an absolute NUL-terminated string");
		b->chroot = p;
	}
}

/* Waits for the parent's next frame (what names it). A parent that
 * hangs up instead gave up for a reason of its own, which it says: one
 * more line would only hide it. */
static void await_parent(const char *what)
{
	ssize_t n;
	char c;

	while ((n = recv(husk_initpipe, &c, 1, MSG_PEEK)) < 0 && errno == EINTR)
		;
	if (n == 0) {
		husk_logf("debug", "nsexec: the parent hung up before %s", what);
		_exit(1);
	}
}

/* lo up in a new network namespace, as runc's setupNetwork. */
static void lo_up(void)
{
	struct ifreq req = {.ifr_name = "lo"};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		husk_fail("linux.namespaces: new network namespace: socket: %s", husk_errtext(errno));
	if (ioctl(fd, SIOCGIFFLAGS, &req) < 0)
		husk_fail("linux.namespaces: new network namespace: get the flags of lo: %s", husk_errtext(errno));
	req.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &req) < 0)
		husk_fail("linux.namespaces: new network namespace: set lo up: %s", husk_errtext(errno));
	close(fd);
}

/*
 * MOUNT_SOURCE(i): the parent opens mounts[i]'s source in our mount
 * namespace with the runtime's credentials (a user namespace, an idmap)
 * and sends the fd (MOUNT_FD, SCM_RIGHTS), or its error as text.
 */
int husk_ask_source(void *ctx, uint32_t i, char *err, size_t errlen)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	uint32_t hdr[2];
	struct iovec iov = {.iov_base = hdr, .iov_len = sizeof(hdr)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;
	ssize_t n;
	int fd;

	(void)ctx;
	if (husk_send_frame(HUSK_SYNC_MOUNT_SOURCE, &i, sizeof(i)) < 0)
		return snprintf(err, errlen, "ask the parent for the source: %s", husk_errtext(errno)), -1;
	await_parent("MOUNT_FD");
	while ((n = recvmsg(husk_initpipe, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n != sizeof(hdr) || hdr[0] != HUSK_SYNC_MOUNT_FD)
		husk_fail("nsexec: waiting for MOUNT_FD: got %zd bytes, type %u", n, n >= 4 ? hdr[0] : 0);
	c = CMSG_FIRSTHDR(&mh);
	if (hdr[1] > 0) {
		/* The parent's error: its text, no fd. */
		char *why = hdr[1] < errlen ? err : NULL;

		if (c || !why)
			husk_fail("nsexec: MOUNT_FD: an error of %u bytes", hdr[1]);
		husk_read(why, hdr[1], "MOUNT_FD's error");
		why[hdr[1]] = '\0';
		return -1;
	}
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)) ||
	    (mh.msg_flags & MSG_CTRUNC))
		husk_fail("nsexec: MOUNT_FD without its fd");
	memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	return fd;
}

/* The host's /dev/null, cloned while "/" is still the host's: pid 1
 * masks files with it (final.c). */
static int clone_dev_null(void)
{
	int fd = syscall(SYS_open_tree, AT_FDCWD, "/dev/null", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	struct stat st;

	if (fd < 0)
		husk_fail("maskedPaths: clone the host's /dev/null: %s", husk_errtext(errno));
	if (fstat(fd, &st) < 0)
		husk_fail("maskedPaths: the host's /dev/null: %s", husk_errtext(errno));
	if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
		husk_fail("maskedPaths: the host's /dev/null: not the character device 1:3 (mode %#o, device %u:%u)",
			  st.st_mode, major(st.st_rdev), minor(st.st_rdev));
	return fd;
}

/* Steps 3 and 4: CREATE_HOOKS when asked, then the createContainer
 * hooks. */
static void run_hooks(struct build *b)
{
	char err[8192];

	husk_mark("rootfs");
	if (b->flags & HUSK_BUILD_ASK_HOOKS) {
		if (husk_send_frame(HUSK_SYNC_CREATE_HOOKS, NULL, 0) < 0)
			_exit(1); /* the parent is gone */
		await_parent("CREATE_HOOKS_DONE");
		husk_expect(HUSK_SYNC_CREATE_HOOKS_DONE);
	}
	if (b->has_hooks && husk_run_hooks(&b->hooks, err, sizeof(err)) < 0)
		husk_fail("%s", err);
	husk_mark("hooks");
}

/* Without a mount namespace: "/" becomes the rootfs by chroot, as Go
 * init's chrootRoot. */
static void enter_chroot(const char *path)
{
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		husk_fail("root.path \"%s\": %s", path, husk_errtext(errno));
	if (fchdir(fd) < 0)
		husk_fail("root.path \"%s\": %s", path, husk_errtext(errno));
	if (chroot(".") < 0)
		husk_fail("root.path \"%s\": without a mount namespace: %s", path, husk_errtext(errno));
	if (chdir("/") < 0)
		husk_fail("root.path \"%s\": chdir /: %s", path, husk_errtext(errno));
	close(fd);
}


void husk_build_root(struct husk_launch *l, int console, struct husk_built *out)
{
	char err[4096];
	struct build b;
	uint32_t len;
	char *payload;

	out->root = out->slave = out->dev_null = out->host_fd_dir = -1;
	await_parent("CONFIG");
	payload = husk_read_frame(HUSK_SYNC_CONFIG, sizeof(struct husk_build_head) + 3u * HUSK_BUILD_MAX, &len);
	parse_build(&b, payload, len);
	husk_mark("config");
	if (b.flags & HUSK_BUILD_LO_UP)
		lo_up();
	b.mounts.ask_source = husk_ask_source;
	if (b.chroot) {
		if (console >= 0) {
			out->slave = husk_pty_send(console, &l->plan->tty, l->plan->uid, err, sizeof(err));
			if (out->slave < 0)
				husk_fail("%s", err);
			close(console);
		}
		run_hooks(&b);
		if (husk_env_fd(HUSK_ENV_FIFOFD) >= 0 &&
		    (out->host_fd_dir = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
			husk_fail("exec.fifo: open the host's /proc/self/fd: %s", husk_errtext(errno));
		enter_chroot(b.chroot);
		if (husk_do_mounts(&b.mounts, err, sizeof(err)) < 0)
			husk_fail("%s", err);
	} else {
		if (husk_do_mounts(&b.mounts, err, sizeof(err)) < 0)
			husk_fail("%s", err);
		if (b.flags & HUSK_BUILD_DEV_NULL)
			out->dev_null = clone_dev_null();
		run_hooks(&b);
		if (husk_enter_root(&b.mounts, err, sizeof(err)) < 0)
			husk_fail("%s", err);
	}
	husk_mark("setup");
	out->root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (out->root < 0)
		husk_fail("nsexec: open the container's root: %s", husk_errtext(errno));
	husk_mounts_free(&b.mounts);
	if (b.has_hooks)
		husk_hooks_free(&b.hooks);
	free(b.buf);
}
