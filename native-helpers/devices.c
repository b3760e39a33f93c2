/*
 * devices: the command's /dev (attack-report findings 3 and 4). Runs in the
 * init (isolate.c).
 *
 * A tmpfs of its own instead of the user's, which holds the user's other
 * terminals (/dev/pts/N: a fake password prompt written to another one is
 * answered there), raw disks (as root, a loop device holds other
 * workspaces' files), the kernel's log, the consoles. The command gets what
 * programs use: null, zero, full, random, urandom and tty (the user's nodes,
 * bound; /dev/tty opens the caller's controlling terminal, which for the
 * command is its own pty, pty.c), a devpts of its own (its pty, and those it
 * opens; /dev/ptmx leads to its ptmx), its own shm and mqueue, and the fd,
 * stdin, stdout and stderr links. No name of the user's terminal: the
 * command never has it. Read-only; Landlock grants these names only
 * (policy.ts DEVICES, landlock.c).
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <sys/mount.h>

/* Bound from the user's /dev: the devices every program may use. */
static const char *const NODES[] = {"null", "zero", "full", "random", "urandom", "tty"};

static const char *const LINKS[][2] = {
	{"fd", "/proc/self/fd"},     {"stdin", "/proc/self/fd/0"},
	{"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"},
	{"ptmx", "pts/ptmx"},
};

/* An empty file or directory for a mount to cover. */
static void mount_point(const char *path, int dir)
{
	int r = dir ? mkdir(path, 0755) : close(open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
	if (r < 0)
		setup_fail("dev: cannot make %s: %s", path, strerror(errno));
}

/* Binds what fd refers to (opened before the user's /dev was covered) on path. */
static void bind_fd(int fd, const char *path)
{
	char from[32];
	snprintf(from, sizeof from, "/proc/self/fd/%d", fd);
	mount_point(path, 0);
	mount_or_fail("dev", from, path, NULL, MS_BIND, NULL);
}

void isolate_dev(void)
{
	int nodes[sizeof NODES / sizeof *NODES];
	for (size_t i = 0; i < sizeof NODES / sizeof *NODES; i++) {
		char path[32];
		snprintf(path, sizeof path, "/dev/%s", NODES[i]);
		nodes[i] = open(path, O_PATH | O_CLOEXEC);
		if (nodes[i] < 0)
			setup_fail("dev: cannot open %s: %s", path, strerror(errno));
	}

	mount_or_fail("dev", "tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		      "mode=0755,size=64k");
	for (size_t i = 0; i < sizeof NODES / sizeof *NODES; i++) {
		char path[32];
		snprintf(path, sizeof path, "/dev/%s", NODES[i]);
		bind_fd(nodes[i], path);
		close(nodes[i]);
	}
	mount_point("/dev/pts", 1);
	char pts[128];
	snprintf(pts, sizeof pts, "newinstance,ptmxmode=0666,mode=0620%s", ids_devpts_options());
	mount_or_fail("dev", "devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, pts);
	/* Shared memory and message queues of its own (with its own IPC
	 * namespace), not the user's programs'. Bounded (attacker's review 9,
	 * F5): a tmpfs takes half of the RAM by default, in pages no process
	 * owns; a tenth is more than browsers and multiprocessing need, and
	 * the files (each an inode in memory) are bounded too. oom.c makes
	 * the sandbox, not the user's programs, what the OOM killer ends. */
	mount_point("/dev/shm", 1);
	mount_or_fail("shm", "tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
		      "mode=1777,size=10%,nr_inodes=64k");
	mount_point("/dev/mqueue", 1);
	if (mount("mqueue", "/dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0 &&
	    errno != ENODEV) /* a kernel without POSIX message queues */
		setup_fail("mqueue: cannot mount mqueue on /dev/mqueue: %s", strerror(errno));
	for (size_t i = 0; i < sizeof LINKS / sizeof *LINKS; i++) {
		char path[32];
		snprintf(path, sizeof path, "/dev/%s", LINKS[i][0]);
		if (symlink(LINKS[i][1], path) < 0)
			setup_fail("dev: cannot make %s: %s", path, strerror(errno));
	}
	mount_or_fail("dev", NULL, "/dev", NULL,
		      MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}

#endif /* __linux__ */
