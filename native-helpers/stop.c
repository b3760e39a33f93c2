/*
 * stop: ends every process of the workspaces whose locks are given (SPEC
 * "hmm stop"). The holder of a workspace's lock is the init of its PID
 * namespace (isolate.c), found in /proc/locks, never through a PID stored
 * somewhere (PIDs are reused): while the lock is held its holder lives. It
 * gets SIGTERM, which it passes to every process of the namespace; 5 seconds
 * later, if the lock is still held, SIGKILL, after which the kernel ends the
 * rest of the namespace. Then the lock is free.
 *
 * Without the namespace (isolation = "landlock-only"; UNISOLATED marks
 * the workspace) no init holds the lock: the command holds it itself, and
 * whatever it left running may have let it go. Then, while no init holds
 * it, its members (members.c) get the signals themselves,
 * SIGCONT after SIGTERM (a stopped process acts on SIGTERM only once
 * continued), and SIGKILL again each round after the grace, for those
 * forked meanwhile; it has stopped when the lock is free and no member is
 * left.
 *
 * Prints, for each lock in order, 1 when it stopped a workspace, 0 when none
 * was running, 2 when something of it is still there 5 seconds after
 * SIGKILL (its holder is not a helper this mode may signal).
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

static int init_holds(const struct stat *st)
{
	pid_t pids[MAX_HOLDERS];
	size_t n = holders(st, pids);
	for (size_t i = 0; i < n; i++)
		if (is_init(pids[i]))
			return 1;
	return 0;
}

/* A workspace to stop: its lock, and what ties a process to it without a
 * PID namespace (members.c). */
struct target {
	const char *lock;
	struct stat st;
	int unisolated; /* a command ran there without the namespaces */
	char *dir;	/* <data>/<id>, canonical */
	char *var;	/* HMM_WORKSPACE=<id> */
};

static void target_of(const char *lock, struct target *t)
{
	t->lock = lock;
	char *dir = dir_of(lock);
	t->dir = realpath(dir, NULL);
	if (!t->dir)
		t->dir = xstrdup(dir);
	free(dir);
	char *mark = path_join(t->dir, UNISOLATED);
	t->unisolated = access(mark, F_OK) == 0;
	free(mark);
	const char *id = strrchr(t->dir, '/');
	if (asprintf(&t->var, "HMM_WORKSPACE=%s", id ? id + 1 : t->dir) < 0)
		oom();
}

/* One round: signals (unless sig is 0) what holds the lock and, where no
 * init does, the members, through pidfds taken while they still are
 * members, so a PID reused meanwhile is never signalled. Returns whether
 * anything of the workspace is left. */
static int stop_round(const struct target *t, int sig)
{
	int held = is_locked(t->lock);
	if (held && sig)
		signal_holders(&t->st, sig);
	if (!t->unisolated || (held && init_holds(&t->st)))
		return held;
	pid_t *pids;
	size_t n = find_members(t->dir, t->var, &pids);
	for (size_t i = 0; sig && i < n; i++) {
		int fd = (int)syscall(SYS_pidfd_open, pids[i], 0);
		if (fd < 0)
			continue;
		if (is_member(pids[i], t->dir, t->var)) {
			syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
			if (sig == SIGTERM)
				syscall(SYS_pidfd_send_signal, fd, SIGCONT, NULL, 0);
		}
		close(fd);
	}
	free(pids);
	return held || n > 0;
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
	struct target *t = xmalloc(sizeof *t * (size_t)n);
	enum { NOT_RUNNING, STOPPING, STOPPED } *state = xmalloc(sizeof *state * (size_t)n);
	for (int i = 0; i < n; i++) {
		target_of(argv[2 + i], &t[i]);
		state[i] = stat(t[i].lock, &t[i].st) == 0 && stop_round(&t[i], SIGTERM) ? STOPPING : NOT_RUNNING;
	}
	for (int waited = 0, sig = 0;; waited += 20) {
		int left = 0;
		for (int i = 0; i < n; i++) {
			if (state[i] == STOPPING && !stop_round(&t[i], sig))
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
	fputs("hmm-helper: stop needs Linux's PID namespaces\n", stderr);
	return 1;
}
#endif
