/*
 * background: the terminal of a background run (`hmm run -d`), and
 * `hmm attach`'s end of it.
 *
 * The waiter (pty.c) of a background run relays to nobody: it keeps the
 * pty's master and appends what the command writes, unfiltered, to DIR/output
 * (`hmm peek` reads it: the last of it, made printable, never interpreted),
 * trimmed to its last SCROLLBACK bytes as it grows, by the waiter or,
 * while attached, the attach. It holds DIR/lock while it lives (one
 * background run per workspace: attach and peek take a workspace), and
 * names itself and the init in DIR/pids (`hmm ls` looks at what the
 * command's processes wait for). DIR is the workspace's, in hmm's
 * data directory, which the command cannot reach. There the waiter listens
 * on DIR/socket (a unix socket, 0600) for `hmm-helper attach DIR`, which
 * proves it may by sending DIR/key (random, 0600: a socket's path is not
 * guarded by Landlock, reading a file of the data directory is), and is
 * then handed the master and the scrollback: it shows the scrollback's
 * last lines, then relays between them and the user's terminal as a
 * foreground run's waiter does (the same terminal filter, the modes put
 * back, the fence), while the waiter stops reading the master until that
 * connection closes. One attach at a time: another is refused. The detach
 * key (Ctrl-]) ends the attach and leaves the command running, also when
 * the command reads nothing (the user's input is always read, what the
 * command does not take held up to TYPED_AHEAD, then dropped); the
 * command's end ends it, the waiter saying so with the command's status.
 *
 * Everything of DIR is opened before the namespaces are made: the
 * namespace's mounts cover the data directory, also for the waiter, which
 * shares the mount namespace, and a file open for writing on them would
 * keep them from being made read-only. The socket is bound through
 * /proc/self/fd, whose path stays short whatever the data directory's.
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <poll.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

/* What of the command's output is kept: trimmed to this when twice as much. */
#define SCROLLBACK (1 << 20)
/* The most of the scrollback an attach shows first (a screen's redraw fits). */
#define REPLAYED RELAYED
/* What the user typed that the command has not taken yet, held at most. */
#define TYPED_AHEAD (1 << 20)
#define KEY_LEN 32
/* The byte that detaches: Ctrl-]. */
#define DETACH_KEY 0x1d

static int dir = -1, listener = -1, output = -1, pids = -1;
static char key[KEY_LEN];

static void socket_path(struct sockaddr_un *a, int dirfd)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof a->sun_path, "/proc/self/fd/%d/socket", dirfd);
}

static int open_output(void)
{
	return openat(dir, "output", O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
}

void background_prepare(const char *path)
{
	dir = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		setup_fail("background: %s: %s", path, strerror(errno));
	/* Held (not closed) for the waiter's life; the init's copy goes with it. */
	int held = openat(dir, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (held < 0 || flock_retry(held, LOCK_EX | LOCK_NB) < 0) {
		const char *why = held >= 0 && errno == EWOULDBLOCK ? "another command runs in the background" : strerror(errno);
		setup_fail("background: %s", why);
	}
	pids = openat(dir, "pids", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (pids < 0)
		setup_fail("background: pids: %s", strerror(errno));
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[KEY_LEN];
	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
		setup_fail("background: getrandom: %s", strerror(errno));
	for (int i = 0; i < KEY_LEN; i++)
		key[i] = hex[raw[i] & 15];
	int k = openat(dir, "key", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (k < 0 || write_all(k, key, KEY_LEN) < 0)
		setup_fail("background: key: %s", strerror(errno));
	close(k);
	output = open_output();
	if (output < 0 || ftruncate(output, 0) < 0)
		setup_fail("background: output: %s", strerror(errno));
	unlinkat(dir, "socket", 0);
	listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_un a;
	socket_path(&a, dir);
	mode_t mask = umask(077);
	int bound = listener >= 0 ? bind(listener, (struct sockaddr *)&a, sizeof a) : -1;
	umask(mask);
	if (bound < 0 || listen(listener, 4) < 0)
		setup_fail("background: socket: %s", strerror(errno));
}

/* Keeps the last SCROLLBACK bytes of the scrollback open on *fd once there
 * are twice as many: a fresh file takes its place, *fd then open on it
 * (the other of waiter and attach opens it again when it takes over). */
static void trim(int *fd)
{
	struct stat st;
	if (fstat(*fd, &st) < 0 || st.st_size <= 2 * SCROLLBACK)
		return;
	static char kept[SCROLLBACK];
	ssize_t n = pread(*fd, kept, SCROLLBACK, st.st_size - SCROLLBACK);
	int fresh = openat(dir, "output.new", O_RDWR | O_APPEND | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (n <= 0 || fresh < 0 || write_all(fresh, kept, (size_t)n) < 0 || renameat(dir, "output.new", dir, "output") < 0) {
		if (fresh >= 0)
			close(fresh);
		return;
	}
	close(*fd);
	*fd = fresh;
}

/* Keeps what the command wrote, at most SCROLLBACK bytes a call, then back
 * to poll (a writer faster than the waiter does not hold it here); 1 if
 * there may be more. */
static int keep_output(struct relay *r)
{
	char buf[RELAYED];
	ssize_t n;
	size_t kept = 0;
	while (kept < SCROLLBACK) {
		n = read(r->master, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		write_all(output, buf, (size_t)n);
		kept += (size_t)n;
		trim(&output);
	}
	return 1;
}

/* An attach has gone: it may have trimmed the scrollback, so the file now
 * in its place is the one to append to. */
static void client_gone(int *client)
{
	close(*client);
	*client = -1;
	if (output >= 0)
		close(output);
	output = open_output();
}

/* One byte of meaning, with up to two descriptors. */
static int send_with(int sock, char what, const int *fds, int nfds)
{
	struct iovec iov = {&what, 1};
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(2 * sizeof(int))];
	} u;
	memset(&u, 0, sizeof u);
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds > 0) {
		msg.msg_control = u.space;
		msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* A client that knows the key gets the master and the scrollback, unless
 * another holds them. Waits for its key a second at most. */
static void accept_client(int *client, struct relay *r)
{
	int c = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return;
	struct pollfd p = {c, POLLIN, 0};
	char got[KEY_LEN + 1];
	ssize_t n = poll(&p, 1, 1000) == 1 ? recv(c, got, sizeof got, MSG_DONTWAIT) : -1;
	if (n != KEY_LEN || memcmp(got, key, KEY_LEN) != 0) {
		close(c);
		return;
	}
	if (*client >= 0) {
		send_with(c, 'b', NULL, 0);
		close(c);
		return;
	}
	int fds[2] = {r->master, output};
	if (send_with(c, 'a', fds, 2) < 0) {
		close(c);
		return;
	}
	*client = c;
}

void background_waiter(int status_fd, pid_t init)
{
	pty_waiting();
	struct relay r = {.init = init, .in = -1, .out = -1, .user = -1, .master = -1, .peer = -1, .record = -1};
	int client = -1;
	signal(SIGPIPE, SIG_IGN);
	sigset_t set;
	waited_signals(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int sigs = signalfd(-1, &set, SFD_CLOEXEC);
	if (sigs < 0)
		setup_fail("background: signalfd: %s", strerror(errno));
	dprintf(pids, "%d %d\n", (int)getpid(), (int)init);
	close(pids);
	for (;;) {
		struct pollfd p[6] = {
			{sigs, POLLIN, 0},
			{status_fd, POLLIN, 0},
			{pty_channel(), POLLIN, 0},
			{client < 0 ? r.master : -1, POLLIN, 0},
			{r.master >= 0 ? listener : -1, POLLIN, 0},
			{client, POLLIN, 0},
		};
		if (poll(p, 6, -1) < 0)
			continue;
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sigs, &si, sizeof si) == sizeof si && si.ssi_signo != SIGCHLD && si.ssi_signo != SIGWINCH &&
			    si.ssi_code != SI_KERNEL)
				pty_tell_init(&r, (int)si.ssi_signo); /* hmm's (stop's) */
			continue;
		}
		if (p[2].revents) {
			if (pty_take_master(&r) >= 0)
				fcntl(r.master, F_SETFL, fcntl(r.master, F_GETFL) | O_NONBLOCK);
			continue;
		}
		if (p[3].revents)
			keep_output(&r);
		if (p[4].revents)
			accept_client(&client, &r);
		if (p[5].revents) {
			/* The attach sends nothing more: this is its end. */
			char c;
			ssize_t n = recv(client, &c, 1, MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				client_gone(&client);
		}
		if (p[1].revents) {
			int status;
			ssize_t got;
			do
				got = read(status_fd, &status, sizeof status);
			while (got < 0 && errno == EINTR);
			if (got == sizeof status && WIFSTOPPED(status)) {
				/* Ctrl-Z typed while attached: nobody here to continue it later. */
				pty_tell_init(&r, SIGCONT);
				continue;
			}
			unlinkat(dir, "socket", 0);
			if (client >= 0) {
				/* The attach reads the rest and gives the terminal back. */
				char end[1 + sizeof status];
				end[0] = 'e';
				memcpy(end + 1, &status, sizeof status);
				send(client, end, sizeof end, MSG_NOSIGNAL);
				struct pollfd c = {client, POLLIN, 0};
				poll(&c, 1, 5000);
				client_gone(&client);
			}
			if (r.master >= 0)
				while (keep_output(&r))
					;
			end_as(got == sizeof status ? status : -1, init);
		}
	}
}

/* ---- hmm-helper attach DIR: reports on fd 3 how it ended ---- */

static int report(const char *what)
{
	dprintf(3, "%s\n", what);
	return 0;
}

/* Detached, or the command ended (then `status` holds its wait status), or the waiter went. */
enum attach_end { DETACHED, ENDED, GONE };

static char typed[TYPED_AHEAD];
static size_t typed_len, typed_off;

/* Gives the command what it takes now of what the user typed. */
static void to_command(struct relay *r)
{
	while (typed_off < typed_len) {
		ssize_t n = write(r->master, typed + typed_off, typed_len - typed_off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0)
			break; /* the pty takes nothing more: dropped */
		typed_off += (size_t)n;
	}
	typed_len = typed_off = 0;
}

/* Reads what the user typed, always (Ctrl-] must be seen even when the
 * command reads nothing), and holds it for the command up to TYPED_AHEAD;
 * more is dropped. -1: the user's terminal has gone; 1: the detach key
 * came (what came before it is held). */
static int from_user(struct relay *r)
{
	char buf[4096];
	ssize_t n = read(r->in, buf, sizeof buf);
	if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
		return -1;
	if (n < 0)
		return 0;
	const char *at = memchr(buf, DETACH_KEY, (size_t)n);
	size_t take = at ? (size_t)(at - buf) : (size_t)n;
	if (typed_off > 0) {
		memmove(typed, typed + typed_off, typed_len - typed_off);
		typed_len -= typed_off;
		typed_off = 0;
	}
	if (take > TYPED_AHEAD - typed_len)
		take = TYPED_AHEAD - typed_len;
	memcpy(typed + typed_len, buf, take);
	typed_len += take;
	return at != NULL;
}

/* The last of the scrollback, so the screen shows what the command last
 * showed: through the filter from its fresh state, from the first line
 * that starts in it (a sequence cut at its start shows nothing of itself). */
static void replay(struct relay *r)
{
	struct stat st;
	static char buf[REPLAYED];
	if (fstat(r->record, &st) < 0 || st.st_size == 0)
		return;
	off_t from = st.st_size > REPLAYED ? st.st_size - REPLAYED : 0;
	ssize_t n = pread(r->record, buf, REPLAYED, from);
	if (n <= 0)
		return;
	const char *start = buf;
	if (from > 0) {
		const char *line = memchr(buf, '\n', (size_t)n);
		if (!line)
			return;
		start = line + 1;
	}
	int record = r->record; /* shown, not kept again */
	r->record = -1;
	pty_to_user(r, start, (size_t)(buf + n - start));
	r->record = record;
}

static enum attach_end relay_until_end(struct relay *r, int sock, int *status)
{
	sigset_t set;
	sigemptyset(&set);
	int caught[] = {SIGWINCH, SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGTSTP, SIGCONT};
	for (size_t i = 0; i < sizeof caught / sizeof *caught; i++)
		sigaddset(&set, caught[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int sigs = signalfd(-1, &set, SFD_CLOEXEC);
	for (;;) {
		struct pollfd p[4] = {
			{sigs, POLLIN, 0},
			{sock, POLLIN, 0},
			{r->master, (short)(POLLIN | (typed_len ? POLLOUT : 0)), 0},
			{r->in, POLLIN, 0},
		};
		if (poll(p, 4, -1) < 0)
			continue;
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sigs, &si, sizeof si) == sizeof si) {
				if (si.ssi_signo == SIGWINCH)
					pty_copy_size(r);
				else if (si.ssi_signo == SIGCONT)
					pty_make_raw(r);
				else if (si.ssi_signo != SIGTSTP)
					return DETACHED;
			}
			continue;
		}
		if (p[1].revents) {
			char msg[1 + sizeof *status];
			ssize_t n = recv(sock, msg, sizeof msg, MSG_DONTWAIT);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (n == (ssize_t)sizeof msg && msg[0] == 'e') {
				memcpy(status, msg + 1, sizeof *status);
				return ENDED;
			}
			return GONE;
		}
		if (p[2].revents & POLLOUT)
			to_command(r);
		if (p[2].revents & POLLIN) {
			char buf[RELAYED];
			ssize_t n = read(r->master, buf, sizeof buf);
			if (n > 0) {
				pty_to_user(r, buf, (size_t)n);
				trim(&r->record);
			}
		}
		if (p[3].revents) {
			int got = from_user(r);
			if (got < 0)
				return DETACHED; /* the user's terminal has gone */
			if (got > 0) {
				to_command(r); /* what came before the key, as much as it takes now */
				return DETACHED;
			}
		}
	}
}

int cmd_attach(int argc, char **argv)
{
	if (argc != 3 || fcntl(3, F_GETFD) < 0) {
		fputs("usage: hmm-helper attach DIR (reports on descriptor 3)\n", stderr);
		return 2;
	}
	dir = open(argv[2], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int k = dir >= 0 ? openat(dir, "key", O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (k < 0 || read(k, key, KEY_LEN) != KEY_LEN)
		return report("not-running");
	close(k);
	int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un a;
	socket_path(&a, dir);
	if (sock < 0 || connect(sock, (struct sockaddr *)&a, sizeof a) < 0 || send(sock, key, KEY_LEN, MSG_NOSIGNAL) != KEY_LEN)
		return report("not-running");
	char what = 0;
	struct iovec iov = {&what, 1};
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(2 * sizeof(int))];
	} u;
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.space, .msg_controllen = sizeof u.space};
	ssize_t n;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n == 1 && what == 'b')
		return report("busy");
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	if (n != 1 || what != 'a' || !c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(2 * sizeof(int)))
		return report("not-running");
	int fds[2];
	memcpy(fds, CMSG_DATA(c), sizeof fds);
	struct relay r = {.in = 0, .out = 1, .user = 0, .master = fds[0], .peer = -1, .record = fds[1]};
	term_filter_init(&r.filter);
	fcntl(r.master, F_SETFL, fcntl(r.master, F_GETFL) | O_NONBLOCK);
	signal(SIGPIPE, SIG_IGN);
	pty_make_raw(&r);
	pty_copy_size(&r);
	replay(&r);
	int status = 0;
	enum attach_end end = relay_until_end(&r, sock, &status);
	if (end == DETACHED)
		pty_end_output(&r);
	else
		pty_drain(&r);
	pty_fence(&r);
	pty_restore(&r);
	if (end == ENDED)
		dprintf(3, "ended %d\n", status);
	else
		report(end == DETACHED ? "detached" : "gone");
	return 0;
}
#endif /* __linux__ */
