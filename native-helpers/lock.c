/*
 * locked: is a workspace running? Each command hmm starts in it holds a
 * shared flock on the workspace's lock file for as long as it (or anything
 * it left running with the descriptor) lives, so several commands can run in
 * one workspace at once (`hmm exec`), and probing for an exclusive lock
 * without blocking answers "is any of them alive" even if the hmm that
 * started it was killed. Probes take turns on a lock of the directory
 * holding the file: two at once would each see the other's exclusive lock
 * as a command. A probe's lock is dropped at once, so a command starting
 * meanwhile waits a moment at most.
 */
#include "hmm-helper.h"

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
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int turn = -1;
	if (slash && (size_t)(slash - path) < sizeof dir) {
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
		turn = open(slash == path ? "/" : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (turn >= 0)
			flock_retry(turn, LOCK_EX);
	}
	int held = flock_retry(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd); /* also drops our lock if we got it */
	if (turn >= 0)
		close(turn);
	return held;
}

int cmd_locked(int argc, char **argv)
{
	for (int i = 2; i < argc; i++)
		printf("%d\n", is_locked(argv[i]));
	return 0;
}
