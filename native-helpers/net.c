/*
 * net: the command's network (SPEC "Network"), with --isolate only.
 *
 *   --net none    a network namespace of its own, with only its loopback up:
 *                 no route leads anywhere, so every connection out fails at
 *                 once (DNS too: the resolver's server is unreachable, or
 *                 refuses on the loopback, with no timeout to wait for).
 *   --net proxy --proxy-port N --proxy-socket NAME
 *                 the same, and 127.0.0.1:N inside is bridged to hmm's proxy,
 *                 listening outside on the abstract unix socket NAME.
 *
 * Where it stands on security: the namespace is the barrier (seccomp adds,
 * in these modes, that only unix, IPv4 and IPv6 sockets are made, none raw).
 * The bridge must reach hmm's proxy, which the command must not reach any
 * other way than through its port, so it is made of two halves:
 *   - the init (inside: the new network namespace is its) listens on the
 *     port and hands the listening socket to the waiter over a socket pair;
 *   - the waiter (still in the user's network namespace, where the
 *     abstract socket is) forks the bridge, which accepts on that socket
 *     and, for each connection, connects to NAME and copies bytes both
 *     ways (one process, poll). An abstract socket has no file: nothing is left behind when
 *     hmm is killed, and the command, in another network namespace, cannot
 *     name it. The bridge is a child of the waiter, so it lives in the
 *     workspace's PID namespace and ends with it; it takes no part in the
 *     lock, and leaves the terminal's process group (Ctrl-C is for the
 *     command, not for it).
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

/* The two ends over which the init hands the listening socket to the waiter. */
static int pass[2] = {-1, -1};

int net_option(struct exec_opts *o, const char *flag, const char *value)
{
	if (strcmp(flag, "--net") == 0) {
		if (strcmp(value, "none") == 0)
			o->net = NET_NONE;
		else if (strcmp(value, "proxy") == 0)
			o->net = NET_PROXY;
		else
			setup_fail("--net is none or proxy: %s", value);
	} else if (strcmp(flag, "--proxy-port") == 0) {
		long port = parse_num(value, 1, 65535);
		if (port < 0)
			setup_fail("--proxy-port needs a port number: %s", value);
		o->proxy_port = (int)port;
	} else if (strcmp(flag, "--proxy-socket") == 0) {
		/* An abstract name: sun_path less its leading NUL. */
		if (value[0] == '\0' || strlen(value) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			setup_fail("--proxy-socket needs a name of 1 to 107 bytes");
		o->proxy_socket = value;
	} else {
		return 0;
	}
	return 1;
}

void net_check(const struct exec_opts *o)
{
	if (o->net == NET_HOST && (o->proxy_port || o->proxy_socket))
		setup_fail("--proxy-port and --proxy-socket go with --net proxy");
	if (o->net == NET_HOST)
		return;
	if (!o->isolate)
		setup_fail("--net needs --isolate (a network namespace of its own)");
	if (o->net == NET_PROXY && (!o->proxy_port || !o->proxy_socket))
		setup_fail("--net proxy needs --proxy-port and --proxy-socket");
}

void net_prepare(const struct exec_opts *o)
{
	if (o->net == NET_PROXY && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pass) < 0)
		setup_fail("network: socketpair: %s", strerror(errno));
}

static void send_fd(int via, int fd)
{
	char byte = 'l';
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof u);
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(via, &m, MSG_NOSIGNAL) != 1)
		setup_fail("network: cannot hand the proxy's port to the bridge: %s", strerror(errno));
}

/* The descriptor the init sent, or -1 when it ended without sending one
 * (it reports why itself). */
static int receive_fd(int via)
{
	char byte;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	ssize_t n;
	do
		n = recvmsg(via, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	struct cmsghdr *c = n == 1 ? CMSG_FIRSTHDR(&m) : NULL;
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(c), sizeof fd);
	return fd;
}

static void loopback_up(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq r;
	memset(&r, 0, sizeof r);
	strcpy(r.ifr_name, "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &r) < 0)
		setup_fail("network: cannot read the loopback's flags: %s", strerror(errno));
	r.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &r) < 0)
		setup_fail("network: cannot bring the loopback up: %s", strerror(errno));
	close(s);
}

void net_isolate(const struct exec_opts *o)
{
	if (o->net == NET_HOST)
		return;
	if (unshare(CLONE_NEWNET) < 0)
		setup_fail("network: cannot make a network namespace: %s", strerror(errno));
	loopback_up();
	if (o->net != NET_PROXY)
		return;
	close(pass[0]);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o->proxy_port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 128) < 0)
		setup_fail("network: cannot listen on 127.0.0.1:%d: %s", o->proxy_port, strerror(errno));
	send_fd(pass[1], l);
	close(l);
	close(pass[1]);
}

/* One direction of a connection: bytes read from `from`, not yet written to `to`. */
struct flow {
	int from, to;
	size_t len, off;
	int done;
	char buf[32768];
};

/* A connection of the command's, and the one to the proxy it is copied to. */
struct pair {
	int fd[2];
	struct flow f[2];
};

/* At most this many connections at once (the proxy takes 512); more wait in
 * the listener's backlog. */
#define MAX_PAIRS 256

/* The events a pair waits for on each side: a flow with nothing buffered
 * reads its source, one with bytes buffered writes its destination. A side
 * nothing waits on is left out of poll, or its hang-up would wake it over
 * and over. */
static void want(const struct pair *p, struct pollfd out[2])
{
	out[0] = (struct pollfd){.fd = p->fd[0]};
	out[1] = (struct pollfd){.fd = p->fd[1]};
	for (int i = 0; i < 2; i++)
		if (!p->f[i].done)
			out[p->f[i].len ? 1 - i : i].events |= p->f[i].len ? POLLOUT : POLLIN;
	for (int k = 0; k < 2; k++)
		if (!out[k].events)
			out[k].fd = -1;
}

/* Moves what can be moved without blocking. 1 while the pair lives; 0 once
 * both directions have ended (each end passed on as a half-close) or a
 * side is gone. */
static int pump(struct pair *p)
{
	for (int i = 0; i < 2; i++) {
		struct flow *x = &p->f[i];
		if (x->done)
			continue;
		if (x->len == 0) {
			ssize_t n = read(x->from, x->buf, sizeof x->buf);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				shutdown(x->to, SHUT_WR);
				x->done = 1;
				continue;
			}
			x->len = (size_t)n;
			x->off = 0;
		}
		ssize_t n = send(x->to, x->buf + x->off, x->len - x->off, MSG_NOSIGNAL);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return 0; /* the other side is gone: so is the connection */
		x->off += (size_t)n;
		if (x->off == x->len)
			x->len = x->off = 0;
	}
	return !(p->f[0].done && p->f[1].done);
}

/* A connection to hmm's proxy at the abstract name, or -1. An abstract
 * name is all the bytes of the address given: Node 20 binds the name
 * padded with NULs to the whole of sun_path, others (libuv's
 * uv_pipe_bind2) to its length. Both are tried. Unix sockets connect at
 * once or not at all. */
static int connect_proxy(const char *name)
{
	struct sockaddr_un proxy = {.sun_family = AF_UNIX};
	size_t len = strlen(name);
	memcpy(proxy.sun_path + 1, name, len);
	const socklen_t sizes[] = {sizeof proxy, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)};
	for (int i = 0; i < 2; i++) {
		int u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (u < 0)
			return -1;
		if (connect(u, (struct sockaddr *)&proxy, sizes[i]) == 0)
			return u;
		int refused = errno == ECONNREFUSED;
		close(u);
		if (!refused)
			return -1;
	}
	return -1;
}

/* The bridge: one process, no fork per connection (forks are dear under
 * some kernels, gVisor's among them), copying every connection to the
 * port with poll. */
static void bridge(int listener, const char *name) __attribute__((noreturn));
static void bridge(int listener, const char *name)
{
	setsid();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_DUMPABLE, 0);
	close_other_fds(listener, -1);
	stdio_to_null();
	sigset_t all;
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* A connection gone between poll and accept must not block the rest. */
	fcntl(listener, F_SETFL, O_NONBLOCK);

	static struct pair *pairs[MAX_PAIRS];
	static struct pollfd fds[1 + 2 * MAX_PAIRS];
	size_t n = 0;
	for (;;) {
		fds[0] = (struct pollfd){.fd = n < MAX_PAIRS ? listener : -1, .events = POLLIN};
		for (size_t k = 0; k < n; k++)
			want(pairs[k], &fds[1 + 2 * k]);
		if (poll(fds, 1 + 2 * n, -1) < 0 && errno != EINTR)
			_exit(0);
		for (size_t k = n; k-- > 0;) {
			if (!fds[1 + 2 * k].revents && !fds[2 + 2 * k].revents)
				continue;
			if (pump(pairs[k]))
				continue;
			close(pairs[k]->fd[0]);
			close(pairs[k]->fd[1]);
			free(pairs[k]);
			pairs[k] = pairs[--n];
		}
		if (!(fds[0].revents & POLLIN))
			continue;
		int c = accept4(listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (c < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED || errno == EMFILE ||
			    errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				continue;
			_exit(0);
		}
		/* Small writes go at once: a TLS handshake is all small writes. */
		int one = 1;
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		int u = connect_proxy(name);
		struct pair *p = u < 0 ? NULL : calloc(1, sizeof *p);
		if (!p) {
			close(c);
			if (u >= 0)
				close(u);
			continue;
		}
		*p = (struct pair){.fd = {c, u}};
		p->f[0].from = p->f[1].to = c;
		p->f[0].to = p->f[1].from = u;
		pairs[n++] = p;
	}
}

void net_waiter(const struct exec_opts *o)
{
	if (o->net != NET_PROXY)
		return;
	close(pass[1]);
	int listener = receive_fd(pass[0]);
	close(pass[0]);
	if (listener < 0)
		return; /* the init failed before; it has reported why */
	pid_t pid = fork();
	if (pid == 0)
		bridge(listener, o->proxy_socket);
	if (pid < 0)
		fprintf(stderr, "hmm-helper: cannot start the network bridge: %s\n", strerror(errno));
	close(listener);
}
#endif /* __linux__ */
