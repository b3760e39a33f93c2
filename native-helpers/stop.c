/*
 * stop: ends every process of the workspaces whose locks are given (SPEC
 * "hmm stop"). The holder of a workspace's lock is the init of its PID
 * namespace (isolate.c), found in /proc/locks, never through a PID stored
 * somewhere (PIDs are reused): while the lock is held its holder lives. It
 * gets SIGTERM, which it passes to every process of the namespace; 5 seconds
 * later, if the lock is still held, SIGKILL, after which the kernel ends the
 * rest of the namespace. Then the lock is free.
 *
 * Prints, for each lock in order, 1 when it stopped a workspace, 0 when none
 * was running, 2 when the lock is still held 5 seconds after SIGKILL (its
 * holder is not a helper this mode may signal).
 */
#include "hmm-helper.h"

#ifdef __linux__
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
static size_t holders(const struct stat *st, pid_t *out)
{
	FILE *f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	size_t n = 0;
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
		if (is_exec_helper((pid_t)pid))
			out[n++] = (pid_t)pid;
	}
	fclose(f);
	return n;
}

/* Signals the lock's holders through pidfds taken while they still hold it,
 * so a PID reused meanwhile is never signalled. */
static void signal_holders(const struct stat *st, int sig)
{
	pid_t pids[MAX_HOLDERS];
	size_t n = holders(st, pids);
	int fds[MAX_HOLDERS];
	for (size_t i = 0; i < n; i++)
		fds[i] = (int)syscall(SYS_pidfd_open, pids[i], 0);
	pid_t again[MAX_HOLDERS];
	size_t m = holders(st, again);
	for (size_t i = 0; i < n; i++) {
		int still = 0;
		for (size_t j = 0; j < m; j++)
			still |= again[j] == pids[i];
		if (still && fds[i] >= 0)
			syscall(SYS_pidfd_send_signal, fds[i], sig, NULL, 0);
		if (fds[i] >= 0)
			close(fds[i]);
	}
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
	struct stat *st = xmalloc(sizeof *st * (size_t)n);
	int *running = xmalloc(sizeof *running * (size_t)n);
	for (int i = 0; i < n; i++) {
		const char *lock = argv[2 + i];
		running[i] = stat(lock, &st[i]) == 0 && is_locked(lock);
		if (running[i])
			signal_holders(&st[i], SIGTERM);
	}
	for (int waited = 0, sig = SIGTERM;; waited += 20) {
		int left = 0;
		for (int i = 0; i < n; i++)
			left |= running[i] && is_locked(argv[2 + i]);
		if (!left)
			break;
		if (waited >= 2 * GRACE_MS) {
			for (int i = 0; i < n; i++)
				if (running[i] && is_locked(argv[2 + i]))
					running[i] = 2;
			break;
		}
		if (sig == SIGTERM && waited >= GRACE_MS) {
			sig = SIGKILL;
			for (int i = 0; i < n; i++)
				if (running[i] && is_locked(argv[2 + i]))
					signal_holders(&st[i], SIGKILL);
		}
		sleep_ms(20);
	}
	for (int i = 0; i < n; i++)
		printf("%d\n", running[i]);
	return 0;
}
#else
int cmd_stop(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("hmm-helper: stop needs Linux's PID namespaces\n", stderr);
	return 1;
}
#endif
