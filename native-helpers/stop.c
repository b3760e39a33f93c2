/*
 * stop: ends every process of the workspaces whose locks are given (SPEC
 * "hmm stop"). What holds a workspace's lock is a helper that outlives
 * every process of the workspace, found in /proc/locks, never through a
 * PID stored somewhere (PIDs are reused): while the lock is held its holder
 * lives.
 *   - The init of the workspace's PID namespace (isolate.c) gets SIGTERM,
 *     which it passes to every process of the namespace; 5 seconds later,
 *     if the lock is still held, SIGKILL, after which the kernel ends the
 *     rest of the namespace.
 *   - Without the namespace (isolation = "landlock-only") the keeper
 *     (keeper.c), a child subreaper, is never signalled itself (what it
 *     keeps would go to the system's subreaper, out of reach); every
 *     process that descends from it (members.c) is, through a pidfd taken
 *     while it still descends from it: SIGTERM with SIGCONT (a stopped
 *     process acts on SIGTERM only once continued), and after the grace
 *     SIGKILL each round, for those forked meanwhile. The keeper exits
 *     with its last descendant.
 * Either way the workspace has stopped when the lock is free.
 *
 * Prints, for each lock in order, 1 when it stopped a workspace, 0 when none
 * was running, 2 when something of it is still there 5 seconds after
 * SIGKILL (its holder is not a helper this mode may signal).
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <poll.h>
#include <sys/sysmacros.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

#define GRACE_MS 5000
#define MAX_HOLDERS 64

/* Whether the process was started as `<helper> exec ...`: its second
 * argument, after a first of any length (an install's path runs to ~100
 * bytes; PATH_MAX bounds it). */
static int is_exec_helper(pid_t pid)
{
	char path[64], argv[PATH_MAX + sizeof "exec"];
	snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t got = 0;
	for (ssize_t r; got < sizeof argv - 1 && (r = read(fd, argv + got, sizeof argv - 1 - got)) > 0;)
		got += (size_t)r;
	close(fd);
	argv[got] = 0;
	size_t first = strnlen(argv, got) + 1;
	return first < got && strcmp(argv + first, "exec") == 0;
}

/* The processes holding an flock on the file, by its device and inode:
 * only helpers in exec mode (a probe holding the lock for a moment is not
 * one to signal). */
static size_t holders(const char *lock, const struct stat *st, pid_t *out)
{
	/* Should the lock file have been replaced (its inode is not the one
	 * held), the helpers are found by their arguments, which name it. */
	size_t n = helpers_of_lock(lock, out, MAX_HOLDERS);
	FILE *f = fopen("/proc/locks", "re");
	if (!f)
		return n;
	char line[256];
	while (fgets(line, sizeof line, f) && n < MAX_HOLDERS) {
		char kind[16];
		long pid;
		unsigned maj, min;
		unsigned long ino;
		if (sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%lu", kind, &pid, &maj, &min, &ino) != 5)
			continue; /* "->" lines are waiters, not holders */
		if (strcmp(kind, "FLOCK") != 0 || pid <= 0 || ino != (unsigned long)st->st_ino ||
		    maj != major(st->st_dev) || min != minor(st->st_dev))
			continue;
		int known = 0;
		for (size_t i = 0; i < n; i++)
			known |= out[i] == (pid_t)pid;
		if (!known && is_exec_helper((pid_t)pid))
			out[n++] = (pid_t)pid;
	}
	fclose(f);
	return n;
}

/* Whether the process is the init of a PID namespace (isolate.c): the PID
 * it has in its innermost namespace, the last of its NSpid line, is 1. */
static int is_init(pid_t pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	char *line = strstr(buf, "\nNSpid:");
	char *end = line ? strchr(line + 1, '\n') : NULL;
	return end && end - line > 2 && end[-1] == '1' && end[-2] == '\t';
}

/* Signals the lock's holders that are inits through pidfds taken while
 * they still hold it, so a PID reused meanwhile is never signalled. */
static void signal_inits(const char *lock, const struct stat *st, int sig)
{
	pid_t pids[MAX_HOLDERS];
	size_t n = holders(lock, st, pids);
	int fds[MAX_HOLDERS];
	for (size_t i = 0; i < n; i++)
		fds[i] = (int)syscall(SYS_pidfd_open, pids[i], 0);
	pid_t again[MAX_HOLDERS];
	size_t m = holders(lock, st, again);
	for (size_t i = 0; i < n; i++) {
		int still = 0;
		for (size_t j = 0; j < m; j++)
			still |= again[j] == pids[i];
		if (still && fds[i] >= 0 && is_init(pids[i]))
			syscall(SYS_pidfd_send_signal, fds[i], sig, NULL, 0);
		if (fds[i] >= 0)
			close(fds[i]);
	}
}

/* Whether the process a pidfd refers to still runs. */
static int still_runs(int pidfd)
{
	struct pollfd p = {pidfd, POLLIN, 0};
	return poll(&p, 1, 0) == 0;
}

/* Signals every process that descends from the keepers. A member's PID is
 * signalled through a pidfd taken before its descent is checked again, and
 * only while every keeper still runs (so that no PID on its way up was
 * reused meanwhile): a PID reused by a process of the user's is never
 * signalled. */
static void signal_members(const pid_t *keepers, size_t k, int sig)
{
	int kfds[MAX_HOLDERS];
	for (size_t i = 0; i < k; i++)
		kfds[i] = (int)syscall(SYS_pidfd_open, keepers[i], 0);
	pid_t *pids;
	size_t n = find_members(keepers, k, &pids);
	for (size_t i = 0; i < n; i++) {
		int fd = (int)syscall(SYS_pidfd_open, pids[i], 0);
		if (fd < 0)
			continue;
		int sure = descends_from(pids[i], keepers, k);
		for (size_t j = 0; sure && j < k; j++)
			sure = kfds[j] >= 0 && still_runs(kfds[j]);
		if (sure) {
			syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
			if (sig == SIGTERM)
				syscall(SYS_pidfd_send_signal, fd, SIGCONT, NULL, 0);
		}
		close(fd);
	}
	free(pids);
	for (size_t i = 0; i < k; i++)
		if (kfds[i] >= 0)
			close(kfds[i]);
}

/* One round: signals (unless sig is 0) what the lock's holders keep, as
 * above. Returns whether the workspace still runs. */
static int stop_round(const char *lock, const struct stat *st, int sig)
{
	int held = workspace_runs(lock);
	if (!held || !sig)
		return held;
	signal_inits(lock, st, sig);
	pid_t pids[MAX_HOLDERS], keepers[MAX_HOLDERS];
	size_t n = holders(lock, st, pids), k = 0;
	for (size_t i = 0; i < n; i++)
		if (!is_init(pids[i]))
			keepers[k++] = pids[i];
	if (k)
		signal_members(keepers, k, sig);
	return held;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int cmd_stop(int argc, char **argv)
{
	if (argc < 3) {
		fputs("usage: hmm-helper stop LOCK...\n", stderr);
		return 2;
	}
	int n = argc - 2;
	const char **lock = (const char **)argv + 2;
	struct stat *st = xmalloc(sizeof *st * (size_t)n);
	enum { NOT_RUNNING, STOPPING, STOPPED } *state = xmalloc(sizeof *state * (size_t)n);
	for (int i = 0; i < n; i++) {
		/* A lock file gone: its helpers are still found by name. */
		if (stat(lock[i], &st[i]) < 0)
			memset(&st[i], 0, sizeof st[i]);
		state[i] = stop_round(lock[i], &st[i], SIGTERM) ? STOPPING : NOT_RUNNING;
	}
	for (int waited = 0, sig = 0;; waited += 20) {
		int left = 0;
		for (int i = 0; i < n; i++) {
			if (state[i] == STOPPING && !stop_round(lock[i], &st[i], sig))
				state[i] = STOPPED;
			left |= state[i] == STOPPING;
		}
		if (!left || waited >= 2 * GRACE_MS)
			break;
		if (waited >= GRACE_MS)
			sig = SIGKILL;
		sleep_ms(20);
	}
	for (int i = 0; i < n; i++)
		printf("%d\n", state[i] == STOPPED ? 1 : state[i] == STOPPING ? 2 : 0);
	return 0;
}
#else
int cmd_stop(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	/* No /proc to find what holds a lock, nor what descends from it:
	 * hmm says so rather than end less than it promises (MANUAL). */
	fputs("hmm-helper: stop needs Linux: on macOS hmm cannot end what a command left running "
	      "(lsof <data>/<id>/lock lists the processes that hold the workspace's lock)\n",
	      stderr);
	return 1;
}
#endif
