/*
 * net: the command's network (SPEC "Network"), with --isolate only.
 *
 *   --net none    a network namespace of its own, with only its loopback up:
 *                 no route leads anywhere, so every connection out fails at
 *                 once (DNS too: the resolver's server is unreachable, or
 *                 refuses on the loopback, with no timeout to wait for).
 *   --net proxy --proxy-port N --proxy-socket NAME [--net-mark N] [--proxy-debug]
 *                 the same, and 127.0.0.1:N inside is bridged to hmm's proxy,
 *                 listening outside on the abstract unix socket NAME (with
 *                 --proxy-debug the bridge says on stderr why it could not
 *                 connect to a host, as the proxy does under HMM_DEBUG;
 *                 --net-mark names the host list, see marks.c).
 *
 * Where it stands on security: the namespace is the barrier (seccomp adds,
 * in these modes, that only unix, IPv4 and IPv6 sockets are made, none raw).
 * The bridge must reach hmm's proxy, which the command must not reach any
 * other way than through its port, so it is made of two halves:
 *   - the init (inside: the new network namespace is its) listens on the
 *     port and hands the listening socket over a socket pair to
 *   - the bridge (bridge.c), which accepts on that socket and, for each
 *     connection, connects to NAME and copies bytes both ways (one
 *     process, poll). The waiter forks it before it makes the PID
 *     namespace, so it stays in the user's network namespace, where the
 *     abstract socket is, and out of the command's sight: in the
 *     command's PID namespace its /proc/PID/net would show the user's
 *     network (every connection, listener and unix socket). An abstract
 *     socket has no file: nothing is left behind when hmm is killed, and
 *     the command, in another network namespace, cannot name it. The
 *     bridge dies with the waiter, which lives as long as the command; it
 *     takes no part in the lock, and leaves the terminal's process group
 *     (Ctrl-C is for the command, not for it).
 * A connection that opens with CONNECT (how HTTPS goes through a proxy) is
 * the exception, for speed: its head alone goes to the proxy's CONNECT
 * socket (NAME.connect), which judges it as the proxy judges everything and
 * answers with the addresses it checked (or with what the command is to be
 * told); the bridge dials them itself and copies the tunnel's bytes
 * straight to the host, so they pass through one process instead of two.
 * The bridge decides nothing: it reads of the command's bytes only whether
 * they start with "CONNECT " and where the head ends, and dials only what
 * the proxy names (a head sent again byte for byte gets the proxy's tunnel
 * verdict again for as long as the proxy said it may: bridge.c, kept).
 * Tunnels it holds outlive a killed hmm (as the command does) until they
 * end; new connections fail then, the proxy being gone (but for a head
 * whose verdict is kept, until its time is up: at most the proxy's 2 s,
 * and only to a host the proxy allowed).
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <arpa/inet.h>
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
		/* An abstract name: sun_path less its leading NUL, room left for the
		 * CONNECT socket's suffix. */
		if (value[0] == '\0' || strlen(value) + strlen(CONNECT_SUFFIX) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			setup_fail("--proxy-socket needs a name of 1 to 99 bytes");
		o->proxy_socket = value;
	} else if (strcmp(flag, "--net-mark") == 0) {
		o->net_mark = parse_mark(value);
		if (o->net_mark < 0)
			setup_fail("--net-mark needs a number below 2^48: %s", value);
	} else {
		return 0;
	}
	return 1;
}

void net_check(const struct exec_opts *o)
{
	if (o->net != NET_PROXY && (o->proxy_port || o->proxy_socket || o->proxy_debug || o->net_mark >= 0))
		setup_fail("--proxy-port, --proxy-socket, --net-mark and --proxy-debug go with --net proxy");
	if (o->net == NET_HOST)
		return;
	if (!o->isolate)
		setup_fail("--net needs --isolate (a network namespace of its own)");
	if (o->net == NET_PROXY && (!o->proxy_port || !o->proxy_socket))
		setup_fail("--net proxy needs --proxy-port and --proxy-socket");
}


void net_prepare(const struct exec_opts *o)
{
	if (o->net != NET_PROXY)
		return;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pass) < 0)
		setup_fail("network: socketpair: %s", strerror(errno));
	/* Opened here, before the init makes the command's /dev: a bridge
	 * that opened it there late (a loaded machine) could hold the empty
	 * file a bind of null covers, open for writing, and that /dev could
	 * not be made read-only. */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	pid_t waiter = getpid();
	pid_t pid = fork();
	if (pid < 0)
		setup_fail("network: cannot start the bridge: %s", strerror(errno));
	if (pid > 0) {
		close(pass[0]);
		if (null >= 0)
			close(null);
		return;
	}
	/* The bridge. It dies with the waiter, which lives as long as the
	 * command. At once, before it waits for the port: a session of its own
	 * (Ctrl-C is for the command), not dumpable, and nothing of what the
	 * waiter holds (the lock, the report, hmm's output and terminal; with
	 * --proxy-debug, stderr is kept for its lines). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != waiter)
		_exit(0);
	setsid();
	prctl(PR_SET_DUMPABLE, 0);
	close_other_fds(pass[0], null);
	stdio_to(null, o->proxy_debug);
	int listener = receive_fd(pass[0]);
	close(pass[0]);
	if (listener < 0)
		_exit(0); /* the init failed before; it has reported why */
	net_bridge(listener, o->proxy_socket, o->proxy_debug);
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
	/* Root's command, in a user namespace of its own (ids.c), holds no
	 * capability over this namespace, which the host's root made: the
	 * ports below 1024 of its own network are opened to it, as they
	 * were. */
	if (ids_userns() >= 0) {
		int fd = open("/proc/sys/net/ipv4/ip_unprivileged_port_start", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write_all(fd, "0\n", 2) < 0)
			setup_fail("network: cannot open the low ports: %s", strerror(errno));
		close(fd);
	}
	if (o->net != NET_PROXY)
		return;
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o->proxy_port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* Small writes go at once (a TLS handshake is all small writes): set
	 * here, every connection accepted has it. */
	int one = 1;
	if (l < 0 || setsockopt(l, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0 || bind(l, (struct sockaddr *)&a, sizeof a) < 0 ||
	    listen(l, 128) < 0)
		setup_fail("network: cannot listen on 127.0.0.1:%d: %s", o->proxy_port, strerror(errno));
	if (send_fd(pass[1], l) < 0)
		setup_fail("network: cannot hand the proxy's port to the bridge: %s", strerror(errno));
	close(l);
	close(pass[1]);
}

void net_waiter(const struct exec_opts *o)
{
	/* The init has its own: the bridge reads EOF if it ends without sending. */
	if (o->net == NET_PROXY)
		close(pass[1]);
}
#endif /* __linux__ */
