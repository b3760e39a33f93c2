/*
 * locked: is a workspace running? Each command hmm starts in it holds a
 * shared flock on the workspace's lock file for as long as it (or anything
 * it left running with the descriptor) lives, so several commands can run in
 * one workspace at once (`hmm exec`), and probing for an exclusive lock
 * without blocking answers "is any of them alive" even if the hmm that
 * started it was killed. Probes take turns (two at once would each see the
 * other's exclusive lock as a command) on a byte of the lock file itself,
 * PROBE_TURN, with an open file description lock, which is not an flock
 * and so never meets a command's. Never on something the command can open:
 * it could hold it for ever, and every probe (hmm ls, stop, rm -f, the end
 * of hmm run) would wait as long (attacker's review 8, F3: the turn was the
 * workspace's directory, which the command may open). The lock file it
 * cannot (the data directory is hidden), nor has it the descriptor (on
 * Linux the init or the keeper holds it). A probe's locks are dropped at
 * once, so a command starting meanwhile waits a moment at most.
 */
#include "hmm-helper.h"

#ifdef F_OFD_SETLKW
/* Only probes lock the byte, each for two system calls: waiting is safe. */
#define TURN_CMD F_OFD_SETLKW
#else
/* macOS: the command inherits the lock's descriptor and could hold the
 * byte, so never wait; a probe without its turn can at worst take another
 * probe for a command. */
#define TURN_CMD F_SETLK
#endif

int flock_retry(int fd, int how)
{
	int r;
	do
		r = flock(fd, how);
	while (r < 0 && errno == EINTR);
	return r;
}

int is_locked(const char *path)
{
	/* Read-write for the turn's write lock; the file is the user's own.
	 * Where it cannot be written (a read-only mount) there is no turn. */
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int turns = fd >= 0;
	if (!turns)
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (turns) {
		struct flock turn = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = PROBE_TURN, .l_len = 1};
		while (fcntl(fd, TURN_CMD, &turn) < 0 && errno == EINTR)
			;
	}
	int held = flock_retry(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	/* Our flock goes before the turn: close drops a file's OFD locks
	 * first, and the next probe would see our flock as a command's. */
	if (!held)
		flock_retry(fd, LOCK_UN);
	close(fd);
	return held;
}

#ifdef __linux__
/* Whether the process's command line is `<helper> exec ... --lock LOCK ...`.
 * The whole of it is read: a helper's arguments hold its policy. */
static int names_lock(int proc, const char *pid, const char *lock)
{
	char path[64];
	snprintf(path, sizeof path, "%.32s/cmdline", pid);
	int fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t size = 4096, got = 0;
	char *argv = xmalloc(size + 1);
	for (ssize_t r; (r = read(fd, argv + got, size - got)) > 0;) {
		got += (size_t)r;
		if (got == size && size < (1 << 24)) {
			size *= 2;
			char *more = realloc(argv, size + 1);
			if (!more)
				break;
			argv = more;
		}
	}
	close(fd);
	argv[got] = 0;
	int found = 0;
	size_t first = strnlen(argv, got) + 1;
	if (first < got && strcmp(argv + first, "exec") == 0)
		for (size_t at = first; !found && at < got; at += strlen(argv + at) + 1)
			found = strcmp(argv + at, "--lock") == 0 && at + 7 < got && strcmp(argv + at + 7, lock) == 0;
	free(argv);
	return found;
}

/* Whether the process runs as the user (its real uid): a helper is not
 * dumpable, so its /proc entries may belong to root whoever runs it. */
static int is_own(int proc, const char *pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "%.32s/status", pid);
	int fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	const char *line = strstr(buf, "\nUid:\t");
	return line && strtol(line + 6, NULL, 10) == (long)getuid();
}

/* Whether the process holds an flock (/proc/locks): a helper holds its
 * lock's for as long as the workspace runs, and names it in its command
 * line a moment longer, while it exits. */
static int holds_flock(pid_t pid)
{
	FILE *f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	char line[256];
	int held = 0;
	while (!held && fgets(line, sizeof line, f)) {
		char kind[16];
		long holder;
		/* "->" lines are waiters, not holders */
		held = sscanf(line, "%*d: %15s %*s %*s %ld", kind, &holder) == 2 && strcmp(kind, "FLOCK") == 0 &&
		       holder == (long)pid;
	}
	fclose(f);
	return held;
}

size_t helpers_of_lock(const char *lock, pid_t *out, size_t max)
{
	int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = proc >= 0 ? fdopendir(dup(proc)) : NULL;
	size_t n = 0;
	for (struct dirent *e; dir && n < max && (e = readdir(dir));) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9' || !is_own(proc, e->d_name))
			continue;
		pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
		if (names_lock(proc, e->d_name, lock) && holds_flock(pid))
			out[n++] = pid;
	}
	if (dir)
		closedir(dir);
	if (proc >= 0)
		close(proc);
	return n;
}
#endif

int workspace_runs(const char *lock)
{
#ifdef __linux__
	pid_t one;
	return is_locked(lock) || helpers_of_lock(lock, &one, 1) > 0;
#else
	return is_locked(lock);
#endif
}

int cmd_locked(int argc, char **argv)
{
	for (int i = 2; i < argc; i++)
		printf("%d\n", workspace_runs(argv[i]));
	return 0;
}
