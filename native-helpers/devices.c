/*
 * devices: the command's /dev, and the user's terminal once the command
 * has ended (attack-report findings 3 and 4). Runs in the init (isolate.c).
 *
 * /dev: a tmpfs of its own instead of the user's, which holds the user's
 * other terminals (/dev/pts/N: a fake password prompt written to another
 * one is answered there), raw disks (as root, a loop device holds other
 * workspaces' files), the kernel's log, the consoles. The command gets what
 * programs use: null, zero, full, random, urandom and tty (the user's nodes,
 * bound), a devpts of its own (ptys it opens; /dev/ptmx leads to its ptmx),
 * its own shm and mqueue, the fd, stdin, stdout and stderr links, and its
 * terminal as /dev/console, so that ttyname(3) finds a name for it (the
 * user's /dev/pts is not there to name it). Read-only; Landlock grants these
 * names only (policy.ts DEVICES, landlock.c).
 *
 * The terminal: the command may leave processes running (SPEC "Processes"),
 * not with the user's terminal, or they would read what the user types
 * after hmm has returned. The init notes the terminals the command was
 * given (fds 0-2, and the controlling terminal /dev/tty reaches). When the
 * command has ended, before hmm hears of it (the user's shell takes the
 * terminal back then), the init stops every other process of the
 * namespace, takes away the names that reach the terminal (/dev/console,
 * /dev/tty), kills every process that holds a descriptor of it (any thread's
 * table, O_PATH ones too: a holder could reopen it through /proc), and every
 * process in a mount namespace of its own (where those names may still be
 * mounted), until a scan of stopped processes finds none; then the others
 * go on. A process that let go of the terminal (nohup, a daemon) keeps
 * running and cannot open it again.
 *
 * What remains: a descriptor in flight, sent over a unix socket
 * (SCM_RIGHTS) and not yet received, is in no process's table; a process
 * that parked the terminal so and holds the socket's other end survives and
 * can take the terminal back. A process the kernel cannot stop or kill (in
 * uninterruptible sleep for longer than the init waits) is left as it is.
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <sys/mount.h>
#include <sys/wait.h>

/* Bound from the user's /dev: the devices every program may use. */
static const char *const NODES[] = {"null", "zero", "full", "random", "urandom", "tty"};

static const char *const LINKS[][2] = {
	{"fd", "/proc/self/fd"},     {"stdin", "/proc/self/fd/0"},
	{"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"},
	{"ptmx", "pts/ptmx"},
};

#define MAX_TERMINALS 4
static dev_t terminals[MAX_TERMINALS];
static size_t nterminals;

static void note_terminal(int fd)
{
	struct stat st;
	if (!isatty(fd) || fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode))
		return;
	for (size_t i = 0; i < nterminals; i++)
		if (terminals[i] == st.st_rdev)
			return;
	if (nterminals < MAX_TERMINALS)
		terminals[nterminals++] = st.st_rdev;
}

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
	/* The terminals first: /dev/tty is the user's still. */
	for (int fd = 0; fd < 3; fd++)
		note_terminal(fd);
	int ctty = open("/dev/tty", O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (ctty >= 0) {
		note_terminal(ctty);
		close(ctty);
	}
	int nodes[sizeof NODES / sizeof *NODES];
	for (size_t i = 0; i < sizeof NODES / sizeof *NODES; i++) {
		char path[32];
		snprintf(path, sizeof path, "/dev/%s", NODES[i]);
		nodes[i] = open(path, O_PATH | O_CLOEXEC);
		if (nodes[i] < 0)
			setup_fail("dev: cannot open %s: %s", path, strerror(errno));
	}
	/* The terminal as this namespace's mounts reach it (a bind mount takes
	 * no descriptor opened in the user's namespace), if its name does. */
	int console = -1;
	for (int fd = 0; fd < 3 && console < 0; fd++) {
		char name[PATH_MAX];
		struct stat given, named;
		if (!isatty(fd) || fstat(fd, &given) < 0 || ttyname_r(fd, name, sizeof name) != 0)
			continue;
		console = open(name, O_PATH | O_CLOEXEC);
		if (console >= 0 && (fstat(console, &named) < 0 || named.st_rdev != given.st_rdev)) {
			close(console);
			console = -1;
		}
	}

	mount_or_fail("dev", "tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		      "mode=0755,size=64k");
	for (size_t i = 0; i < sizeof NODES / sizeof *NODES; i++) {
		char path[32];
		snprintf(path, sizeof path, "/dev/%s", NODES[i]);
		bind_fd(nodes[i], path);
		close(nodes[i]);
	}
	if (console >= 0) {
		bind_fd(console, "/dev/console");
		close(console);
	}
	mount_point("/dev/pts", 1);
	mount_or_fail("dev", "devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
		      "newinstance,ptmxmode=0666,mode=0620");
	/* Shared memory and message queues of its own (with its own IPC
	 * namespace), not the user's programs'. */
	mount_point("/dev/shm", 1);
	mount_or_fail("shm", "tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
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

static int is_terminal(dev_t d)
{
	for (size_t i = 0; i < nterminals; i++)
		if (terminals[i] == d)
			return 1;
	return 0;
}

/* Walks the numbered entries of a directory of /proc (threads,
 * descriptors) until found() says yes to one. 1 then, or when the
 * directory cannot be read: what cannot be looked at counts as found. */
static int any_entry(const char *dir, int (*found)(int dir, const char *name, void *arg), void *arg)
{
	DIR *d = opendir(dir);
	if (!d)
		return errno != ENOENT;
	int yes = 0;
	struct dirent *e;
	while (!yes && (e = readdir(d)) != NULL) {
		if (parse_num(e->d_name, 0, INT_MAX) >= 0)
			yes = found(dirfd(d), e->d_name, arg);
	}
	closedir(d);
	return yes;
}

/* Is a descriptor of a table (/proc/P/task/T/fd) one of the terminals?
 * One that cannot be looked at counts as one. */
static int terminal_fd(int dir, const char *name, void *arg)
{
	(void)arg;
	struct stat st;
	if (fstatat(dir, name, &st, 0) == 0)
		return S_ISCHR(st.st_mode) && is_terminal(st.st_rdev);
	return errno != ENOENT && errno != ENOTDIR;
}

/* Stopped (or dead), by a stat file of /proc: holds nothing it did not
 * hold when scanned. */
static int settled(const char *stat)
{
	char buf[512];
	int fd = open(stat, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	const char *paren = strrchr(buf, ')'); /* the name may hold anything */
	return !paren || (paren[1] == ' ' && paren[2] && strchr("TtZX", paren[2]));
}

/* A process scanned, and where to note a thread of it not stopped yet (one
 * stops a moment after the others: it may be opening something). */
struct scanned {
	long pid;
	int *unsettled;
};

/* Does a thread hold a terminal (a thread made without CLONE_FILES has a
 * table of its own)? */
static int thread_holds(int task, const char *tid, void *arg)
{
	(void)task;
	const struct scanned *p = arg;
	char path[64 + NAME_MAX]; /* tid is a directory entry's name */
	snprintf(path, sizeof path, "/proc/%ld/task/%s/stat", p->pid, tid);
	if (!settled(path))
		*p->unsettled = 1;
	snprintf(path, sizeof path, "/proc/%ld/task/%s/fd", p->pid, tid);
	return any_entry(path, terminal_fd, NULL);
}

/* Does any thread of pid hold a terminal? */
static int holds_terminal(long pid, int *unsettled)
{
	char task[64];
	snprintf(task, sizeof task, "/proc/%ld/task", pid);
	struct scanned p = {pid, unsettled};
	return any_entry(task, thread_holds, &p);
}

/* In a mount namespace other than the init's, where /dev/console and
 * /dev/tty may still be mounted? One that cannot be told counts as such. */
static int elsewhere(long pid, const char *mine)
{
	char link[64], ns[64];
	snprintf(link, sizeof link, "/proc/%ld/ns/mnt", pid);
	ssize_t n = readlink(link, ns, sizeof ns - 1);
	if (n < 0)
		return errno != ENOENT;
	ns[n] = '\0';
	return strcmp(ns, mine) != 0;
}

/* One pass over every other process: kills those that hold a terminal or
 * live in another mount namespace. 1 if it killed any or found one not yet
 * stopped (a later pass must look again). Without /proc to look in, every
 * process is killed. */
static int scan(const char *mine)
{
	DIR *d = opendir("/proc");
	if (!d) {
		kill(-1, SIGKILL);
		return 0;
	}
	int again = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		long pid = parse_num(e->d_name, 2, INT_MAX); /* the init itself aside */
		if (pid < 0)
			continue;
		if (elsewhere(pid, mine) || holds_terminal(pid, &again)) {
			kill((pid_t)pid, SIGKILL);
			again = 1;
		}
	}
	closedir(d);
	return again;
}

/* How long the init waits for processes to stop and die before it lets the
 * rest go on anyway (one stuck in the kernel cannot be helped). */
#define RELEASE_TRIES 5000 /* of 1 ms */

void terminal_release(void)
{
	if (nterminals == 0 || kill(-1, SIGSTOP) < 0)
		return; /* no terminal, or nobody left */
	umount2("/dev/console", MNT_DETACH);
	umount2("/dev/tty", MNT_DETACH);
	char mine[64];
	ssize_t n = readlink("/proc/self/ns/mnt", mine, sizeof mine - 1);
	mine[n < 0 ? 0 : n] = '\0';
	for (int tries = 0; scan(mine) && tries < RELEASE_TRIES; tries++) {
		/* Reaps the killed among the init's children; the others' parents
		 * reap theirs when they go on. */
		int ignored;
		while (waitpid(-1, &ignored, WNOHANG) > 0)
			;
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
		kill(-1, SIGSTOP); /* one forked meanwhile */
	}
	kill(-1, SIGCONT);
}
#endif /* __linux__ */
