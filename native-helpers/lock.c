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
	close(fd); /* also drops our flock if we got it, and the turn */
	return held;
}

int cmd_locked(int argc, char **argv)
{
	for (int i = 2; i < argc; i++)
		printf("%d\n", is_locked(argv[i]));
	return 0;
}
