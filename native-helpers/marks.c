/*
 * marks: what network the commands running in a workspace have, kept where
 * "running" is kept: on the workspace's lock file, by whoever holds the
 * lock (exec.c), for exactly as long.
 *
 *   hmm-helper marked LOCK [HOSTS]
 *
 * A command hmm starts with a network limit confines that command only: a
 * process an earlier command left running with more network can lend it
 * through the files and /tmp they share. So hmm exec with --net none (or a
 * host list) is refused beside a command with more network, and only then:
 * the user's network is more than any host list, a host list more than
 * none, and two different host lists are each more than the other.
 *
 * Each command marks its network with an open file description read lock
 * on one byte of the lock file, taken on the lock's own descriptor (right
 * after its flock), so it goes when the lock goes, whatever happens to hmm,
 * and the command never holds it (on Linux the init or the keeper does):
 *   - MARKS + 0: the user's network (no --net);
 *   - MARKS + 1: a host list hmm did not name (--net proxy alone);
 *   - MARKS + 2 + N: the host list hmm names N (--net-mark N, a hash of it);
 *   - nothing: --net none, which nothing is less than.
 * MARKS lies above every byte mounts.c locks for a cache layer (an inode
 * number, less than 2^62).
 *
 * `marked` prints 1 when a process holds a mark other than HOSTS's (the
 * command about to start with that host list; without HOSTS, one with
 * none), else 0. It only asks (F_OFD_GETLK), never takes a lock. Without
 * open file description locks (macOS) it cannot tell, and says what
 * `locked` says: anything running counts as having more network.
 */
#include "hmm-helper.h"

#define MARKS ((off_t)1 << 62)
/* A host list's mark N is below this (a hash of 48 bits). */
#define HOSTS_MARKS ((long)1 << 48)
/* The end of the marks: the bytes above are not marks (PROBE_TURN). */
#define MARKS_END (MARKS + 2 + HOSTS_MARKS)

long parse_mark(const char *value)
{
	char *end;
	errno = 0;
	long n = strtol(value, &end, 10);
	if (errno || end == value || *end || n < 0 || n >= HOSTS_MARKS)
		return -1;
	return n;
}

#ifdef F_OFD_SETLK
/* The byte that marks this command's network, or -1 for none. */
static off_t mark_of(const struct exec_opts *o)
{
	if (o->net == NET_HOST)
		return MARKS;
	if (o->net == NET_PROXY)
		return MARKS + (o->net_mark < 0 ? 1 : 2 + o->net_mark);
	return -1;
}

/* Whether some process holds a lock on a byte of [start, end). */
static int held_in(int fd, off_t start, off_t end)
{
	if (end <= start)
		return 0; /* a length of 0 would mean "to the end" */
	struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = start, .l_len = end - start};
	/* Cannot tell: as if held, the refusal being the safe answer. */
	if (fcntl(fd, F_OFD_GETLK, &q) < 0)
		return 1;
	return q.l_type != F_UNLCK;
}
#endif

void mark_network(const struct exec_opts *o, int lock)
{
#ifdef F_OFD_SETLK
	off_t at = mark_of(o);
	struct flock byte = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = at, .l_len = 1};
	if (at >= 0 && fcntl(lock, F_OFD_SETLK, &byte) < 0)
		setup_fail("cannot mark the command's network on %s: %s", o->lock, strerror(errno));
#else
	(void)o;
	(void)lock;
#endif
}

int cmd_marked(int argc, char **argv)
{
	long hosts = argc == 4 ? parse_mark(argv[3]) : -1;
	if (argc < 3 || argc > 4 || (argc == 4 && hosts < 0)) {
		fputs("usage: hmm-helper marked LOCK [HOSTS]\n", stderr);
		return 2;
	}
#ifdef F_OFD_GETLK
	int fd = open(argv[2], O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		puts("0");
		return 0;
	}
	int held;
	if (hosts < 0) {
		held = held_in(fd, MARKS, MARKS_END);
	} else {
		off_t own = MARKS + 2 + hosts;
		held = held_in(fd, MARKS, own) || held_in(fd, own + 1, MARKS_END);
	}
	close(fd);
	printf("%d\n", held);
#else
	printf("%d\n", is_locked(argv[2]));
#endif
	return 0;
}
