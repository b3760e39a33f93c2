/*
 * background: the terminal of a background run (`hmm run -d`), and
 * `hmm attach`'s end of it.
 *
 * The waiter (pty.c) of a background run relays to nobody: it keeps the
 * pty's master and appends what the command writes, unfiltered, to DIR/output
 * (`hmm peek` reads it: the last of it, made printable, never interpreted),
 * trimmed to its last SCROLLBACK bytes. DIR is the workspace's, in hmm's
 * data directory, which the command cannot reach. There the waiter listens
 * on DIR/socket (a unix socket, 0600) for `hmm-helper attach DIR`, which
 * proves it may by sending DIR/key (random, 0600: a socket's path is not
 * guarded by Landlock, reading a file of the data directory is), and is
 * then handed the master and the scrollback: it relays between them and
 * the user's terminal exactly as a foreground run's waiter does (the same
 * relay, the same terminal filter, the modes put back, the fence), while
 * the waiter stops reading the master until that connection closes. One
 * attach at a time: another is refused. The detach key (Ctrl-]) ends the
 * attach and leaves the command running; the command's end ends it, the
 * waiter saying so with the command's status.
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
#define KEY_LEN 32
/* The byte that detaches: Ctrl-]. */
#define DETACH_KEY 0x1d

static int dir = -1, listener = -1, output = -1;
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

/* Keeps the last SCROLLBACK bytes once there are twice as many. */
static void trim(void)
{
	struct stat st;
	if (fstat(output, &st) < 0 || st.st_size <= 2 * SCROLLBACK)
		return;
	static char kept[SCROLLBACK];
	ssize_t n = pread(output, kept, SCROLLBACK, st.st_size - SCROLLBACK);
	int fresh = openat(dir, "output.new", O_RDWR | O_APPEND | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (n <= 0 || fresh < 0 || write_all(fresh, kept, (size_t)n) < 0 || renameat(dir, "output.new", dir, "output") < 0) {
		if (fresh >= 0)
			close(fresh);
		return;
	}
	close(output);
	output = fresh;
}

static void keep_output(struct relay *r)
{
	char buf[RELAYED];
	ssize_t n;
	while ((n = read(r->master, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			write_all(output, buf, (size_t)n);
	trim();
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
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
				close(client);
				client = -1;
			}
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
			}
			if (r.master >= 0)
				keep_output(&r);
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

static enum attach_end relay_until_end(struct relay *r, int sock, int *status)
{
	sigset_t set;
	sigemptyset(&set);
	int caught[] = {SIGWINCH, SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGTSTP, SIGCONT};
	for (size_t i = 0; i < sizeof caught / sizeof *caught; i++)
		sigaddset(&set, caught[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int sigs = signalfd(-1, &set, SFD_CLOEXEC);
	int detach_after = 0;
	for (;;) {
		struct pollfd p[4] = {
			{sigs, POLLIN, 0},
			{sock, POLLIN, 0},
			{r->master, (short)(POLLIN | (r->len ? POLLOUT : 0)), 0},
			{r->len == 0 ? r->in : -1, POLLIN, 0},
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
		if (p[2].revents & POLLOUT) {
			ssize_t n = write(r->master, r->pending + r->off, r->len - r->off);
			if (n > 0 && (r->off += (size_t)n) == r->len)
				r->len = r->off = 0;
			else if (n < 0 && errno != EINTR && errno != EAGAIN)
				r->len = r->off = 0;
			if (r->len == 0 && detach_after)
				return DETACHED;
		}
		if (p[2].revents & POLLIN) {
			char buf[RELAYED];
			ssize_t n = read(r->master, buf, sizeof buf);
			if (n > 0)
				pty_to_user(r, buf, (size_t)n);
		}
		if (p[3].revents) {
			ssize_t n = read(r->in, r->pending, sizeof r->pending);
			if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
				return DETACHED; /* the user's terminal has gone */
			if (n > 0) {
				char *at = memchr(r->pending, DETACH_KEY, (size_t)n);
				r->len = at ? (size_t)(at - r->pending) : (size_t)n;
				r->off = 0;
				if (at && r->len == 0)
					return DETACHED;
				detach_after = at != NULL;
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
