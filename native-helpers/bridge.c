/*
 * bridge: the process that joins the command's proxy port to hmm's proxy
 * (net.c says where it runs and why it is safe there): one process, poll,
 * a pair of flows per connection; a CONNECT's head alone goes to the
 * proxy's CONNECT socket, and the bridge dials only the addresses the
 * proxy names in its answer.
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

/* One direction of a connection: bytes read from `from` (-1: nothing more
 * comes), not yet written to `to`. */
struct flow {
	int from, to;
	size_t len, off;
	int done;
	char buf[32768];
};

/* Where a connection of the command's stands:
 *   FIRST    its first bytes are read, to tell a CONNECT from the rest;
 *   HEAD     it opens with CONNECT: its head is read up to the blank line
 *            (what follows waits here for the host);
 *   VERDICT  the head went alone to the proxy's CONNECT socket, whose
 *            answer is read to its end;
 *   DIALING  connecting to the addresses the proxy gave: each in turn,
 *            the next one started when one fails or has not answered
 *            in ATTEMPT_MS, those started still waited for (Happy
 *            Eyeballs, RFC 8305: a host whose first address, often its
 *            IPv6 one, is unreachable costs ATTEMPT_MS, not the whole
 *            deadline); the first to connect is taken;
 *   RELAY    bytes both ways, with the proxy (anything but a CONNECT that
 *            opens the connection: the proxy relays it itself) or with the
 *            host (a tunnel), or the proxy's answer on its way to the
 *            command. */
enum stage { FIRST, HEAD, VERDICT, DIALING, RELAY };

/* The addresses of a host tried at most (a name may have many). */
#define MAX_ADDRESSES 16

/* A connection of the command's, and the one it is copied to. */
struct pair {
	int fd[2]; /* the command's; the proxy's or the host's (-1: none yet) */
	enum stage stage;
	struct flow f[2];	  /* f[0]: from the command; f[1]: to it */
	size_t scanned;		  /* HEAD: the bytes of f[0] searched for the head's end */
	long long deadline;	  /* FIRST, HEAD, DIALING: when the stage fails (ms, monotonic); 0: none */
	long long next_at;	  /* DIALING: when the next address is started; 0: none is left */
	struct sockaddr_storage to[MAX_ADDRESSES];
	socklen_t to_len[MAX_ADDRESSES];
	int trying[MAX_ADDRESSES]; /* DIALING: the socket connecting to each address started (-1: failed) */
	int count, next;	   /* DIALING: the addresses, and the next to start */
	const char *host;	   /* DIALING: the host's name, in the proxy's verdict (f[1]), for debug lines */
	size_t asked_len;	   /* VERDICT: the head asked about, to keep the verdict for (0: not kept) */
	char asked[KEPT_HEAD];
};

/* At most this many connections at once (the proxy takes 512); more wait in
 * the listener's backlog. */
#define MAX_PAIRS 256

/* How long the command has to send a request's head, and a host to take a
 * connection: the proxy's own bounds (proxy.ts). */
#define HEAD_TIMEOUT_MS 30000
#define DIAL_TIMEOUT_MS 30000
/* How long an address is waited for alone before the next is started
 * beside it: Node's autoSelectFamilyAttemptTimeout, which hmm's proxy
 * used before the bridge dialed. */
#define ATTEMPT_MS 250

/* Poll's entries for one pair: two, or one per address while DIALING. */
#define MAX_POLLED (MAX_ADDRESSES > 2 ? MAX_ADDRESSES : 2)

static const char CONNECT_METHOD[] = "CONNECT ";
static const char ESTABLISHED[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
static const struct pollfd NO_NEWS[2];

/* Whether to say on stderr why a host's address could not be connected
 * (exec's --proxy-debug: hmm's HMM_DEBUG). */
static int debugging;
#define READABLE (POLLIN | POLLHUP | POLLERR)

static long long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* The events a pair waits for, as poll's entries from `out` on; how many.
 * DIALING: each address started, to be connected (writable). Else one
 * entry per side: before it relays, the one its stage needs; relaying, a
 * flow with nothing buffered reads its source, one with bytes buffered
 * writes its destination. A side nothing waits on is left out of poll, or
 * its hang-up would wake it over and over. */
static size_t want(const struct pair *p, struct pollfd *out)
{
	if (p->stage == DIALING) {
		for (int i = 0; i < p->next; i++)
			out[i] = (struct pollfd){.fd = p->trying[i], .events = POLLOUT};
		return (size_t)p->next;
	}
	out[0] = (struct pollfd){.fd = p->fd[0]};
	out[1] = (struct pollfd){.fd = p->fd[1]};
	if (p->stage == FIRST || p->stage == HEAD)
		out[0].events = POLLIN;
	else if (p->stage == VERDICT)
		out[1].events = POLLIN;
	else
		for (int i = 0; i < 2; i++)
			if (!p->f[i].done)
				out[p->f[i].len ? 1 - i : i].events |= p->f[i].len ? POLLOUT : POLLIN;
	for (int k = 0; k < 2; k++)
		if (!out[k].events)
			out[k].fd = -1;
	return 2;
}

/* RELAY: moves what can be moved without blocking; a flow reads only when
 * poll said its source is readable (`ready`: the entries of fd[0], fd[1]).
 * 1 while the pair lives; 0 once both directions have ended (each end
 * passed on as a half-close) or a side is gone. */
static int pump(struct pair *p, const struct pollfd ready[2])
{
	for (int i = 0; i < 2; i++) {
		struct flow *x = &p->f[i];
		if (x->done)
			continue;
		if (x->len == 0) {
			if (x->from >= 0 && !(ready[i].revents & READABLE))
				continue;
			ssize_t n = x->from < 0 ? 0 : read(x->from, x->buf, sizeof x->buf);
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
		if (x->off < x->len)
			continue;
		x->len = x->off = 0;
		if (x->from < 0) {
			shutdown(x->to, SHUT_WR);
			x->done = 1;
		}
	}
	return !(p->f[0].done && p->f[1].done);
}

/* A connection to hmm's proxy at the abstract name (and suffix), or -1. An
 * abstract name is all the bytes of the address given: Node 20 binds the
 * name padded with NULs to the whole of sun_path, others (libuv's
 * uv_pipe_bind2) to its length. Both are tried. Unix sockets connect at
 * once or not at all. */
static int connect_proxy(const char *name, const char *suffix)
{
	struct sockaddr_un proxy = {.sun_family = AF_UNIX};
	size_t len = strlen(name), more = strlen(suffix);
	memcpy(proxy.sun_path + 1, name, len);
	memcpy(proxy.sun_path + 1 + len, suffix, more);
	const socklen_t sizes[] = {sizeof proxy, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len + more)};
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

/* Relaying from here on: `back` is what the command gets from fd[1] (-1:
 * only what f[1] holds), and what f[0] holds goes first to fd[1]. */
static int relay(struct pair *p, int back)
{
	p->f[0].from = p->f[1].to = p->fd[0];
	p->f[0].to = p->fd[1];
	p->f[1].from = back;
	p->stage = RELAY;
	p->deadline = p->next_at = 0;
	return pump(p, NO_NEWS);
}

/* The proxy's answer goes to the command, and the connection ends with it;
 * what the command sent after its head goes nowhere. */
static int answer(struct pair *p)
{
	p->f[0].done = 1;
	return relay(p, -1);
}

/* The host took the connection: the command is told, then bytes both ways
 * (the bytes it sent after its head first). */
static int tunnel(struct pair *p)
{
	memcpy(p->f[1].buf, ESTABLISHED, sizeof ESTABLISHED - 1);
	p->f[1].off = 0;
	p->f[1].len = sizeof ESTABLISHED - 1;
	return relay(p, p->fd[1]);
}

/* Under --proxy-debug, why address i of the host was not connected: the
 * line hmm's proxy gives when it connects itself. */
static void say_failed(const struct pair *p, int i, int error)
{
	if (!debugging)
		return;
	char text[INET6_ADDRSTRLEN] = "?";
	const struct sockaddr_storage *a = &p->to[i];
	const void *bytes = a->ss_family == AF_INET ? (const void *)&((const struct sockaddr_in *)a)->sin_addr
						    : (const void *)&((const struct sockaddr_in6 *)a)->sin6_addr;
	inet_ntop(a->ss_family, bytes, text, sizeof text);
	int port = ntohs(((const struct sockaddr_in *)a)->sin_port); /* where both families keep it */
	const char *v6 = a->ss_family == AF_INET6 ? "[" : "";
	fprintf(stderr, "hmm: debug: proxy: %s:%d: connect %s%s%s:%d: %s\n", p->host, port, v6, text, *v6 ? "]" : "", port,
		strerror(error));
}

/* Address i failed (`error`): its socket is closed. */
static void drop(struct pair *p, int i, int error)
{
	say_failed(p, i, error);
	close(p->trying[i]);
	p->trying[i] = -1;
}

/* Address i took the connection: the others started are given up. */
static int won(struct pair *p, int i)
{
	p->fd[1] = p->trying[i];
	for (int k = 0; k < p->next; k++)
		if (k != i && p->trying[k] >= 0)
			close(p->trying[k]);
	return tunnel(p);
}

/* DIALING: starts the next address (the ones started before still wait);
 * none left and none waited for: the command gets the proxy's answer for
 * that (in f[1]). */
static int dial(struct pair *p)
{
	while (p->next < p->count) {
		int i = p->next++;
		int s = socket(p->to[i].ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		p->trying[i] = s;
		if (s < 0) {
			say_failed(p, i, errno);
			continue;
		}
		/* Small writes go at once: a TLS handshake is all small writes. */
		int one = 1;
		setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		if (connect(s, (struct sockaddr *)&p->to[i], p->to_len[i]) == 0)
			return won(p, i);
		if (errno == EINPROGRESS) {
			p->stage = DIALING;
			p->next_at = now_ms() + ATTEMPT_MS;
			return 1;
		}
		drop(p, i, errno);
	}
	p->next_at = 0;
	for (int i = 0; i < p->next; i++)
		if (p->trying[i] >= 0)
			return 1;
	return answer(p);
}

/* DIALING, poll's news of the addresses started (`polled`, one entry
 * each): the first connected is taken; one that failed has the next
 * started at once. */
static int dialed(struct pair *p, const struct pollfd *polled)
{
	int failed = 0;
	for (int i = 0; i < p->next; i++) {
		if (p->trying[i] < 0 || !polled[i].revents)
			continue;
		int error = 0;
		socklen_t size = sizeof error;
		if (getsockopt(p->trying[i], SOL_SOCKET, SO_ERROR, &error, &size) < 0)
			error = errno;
		if (error == 0)
			return won(p, i);
		drop(p, i, error);
		failed = 1;
	}
	return failed ? dial(p) : 1;
}

/* DIALING, the time up: the next address started beside the others, or
 * (the whole deadline gone) every one given up. */
static int dial_late(struct pair *p, long long now)
{
	if (now < p->deadline)
		return dial(p);
	for (int i = 0; i < p->next; i++)
		if (p->trying[i] >= 0)
			drop(p, i, ETIMEDOUT);
	p->next = p->count;
	return dial(p);
}

/* "hmm-tunnel LENGTH KEEP HOST PORT ADDRESS..." into the host's name and the
 * addresses to dial (those that are not plain IPv4 or IPv6 addresses are
 * left out); 0 if it is not that. */
static int parse_tunnel(struct pair *p, char *line)
{
	char *rest;
	char *word = strtok_r(line, " ", &rest);
	if (!word || strcmp(word, "hmm-tunnel") != 0 || !strtok_r(NULL, " ", &rest) || !strtok_r(NULL, " ", &rest) ||
	    !(p->host = strtok_r(NULL, " ", &rest)) || !(word = strtok_r(NULL, " ", &rest)))
		return 0;
	long port = parse_num(word, 1, 65535);
	if (port < 0)
		return 0;
	while ((word = strtok_r(NULL, " ", &rest)) && p->count < MAX_ADDRESSES) {
		struct sockaddr_storage *a = &p->to[p->count];
		struct sockaddr_in *v4 = (struct sockaddr_in *)a;
		struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)a;
		memset(a, 0, sizeof *a);
		p->trying[p->count] = -1;
		if (inet_pton(AF_INET, word, &v4->sin_addr) == 1) {
			v4->sin_family = AF_INET;
			v4->sin_port = htons((uint16_t)port);
			p->to_len[p->count++] = sizeof *v4;
		} else if (inet_pton(AF_INET6, word, &v6->sin6_addr) == 1) {
			v6->sin6_family = AF_INET6;
			v6->sin6_port = htons((uint16_t)port);
			p->to_len[p->count++] = sizeof *v6;
		}
	}
	return 1;
}

/* The whole verdict in f[1] (its len), acted on: its first line says what
 * to do, "hmm-answer LENGTH" or "hmm-tunnel LENGTH KEEP HOST PORT
 * ADDRESS..."; the LENGTH bytes that follow are what the command gets
 * should there be no tunnel. */
static int act(struct pair *p)
{
	struct flow *x = &p->f[1];
	x->buf[x->len] = '\0';
	char *eol = memchr(x->buf, '\n', x->len);
	*eol = '\0';
	x->off = (size_t)(eol + 1 - x->buf);
	if (strncmp(x->buf, "hmm-answer ", 11) == 0)
		return answer(p);
	if (!parse_tunnel(p, x->buf))
		return 0;
	p->deadline = now_ms() + DIAL_TIMEOUT_MS;
	return dial(p);
}

/* VERDICT: the proxy's answer, acted on once it is whole (not at the
 * proxy's close, which may come a wake-up later); a tunnel's kept for the
 * head when the proxy says so. */
static int read_verdict(struct pair *p)
{
	struct flow *x = &p->f[1];
	ssize_t n = read(p->fd[1], x->buf + x->len, sizeof x->buf - 1 - x->len);
	if (n <= 0)
		return n < 0 && (errno == EINTR || errno == EAGAIN);
	x->len += (size_t)n;
	x->buf[x->len] = '\0';
	char *eol = memchr(x->buf, '\n', x->len);
	if (!eol)
		return x->len < sizeof x->buf - 1; /* a verdict's line is short */
	size_t line = (size_t)(eol + 1 - x->buf), length;
	if (sscanf(x->buf, "hmm-%*[a-z] %zu ", &length) != 1 || length > sizeof x->buf - 1 - line)
		return 0;
	if (x->len < line + length)
		return 1;
	close(p->fd[1]);
	p->fd[1] = -1;
	x->len = line + length;
	long keep;
	if (p->asked_len && x->len <= KEPT_VERDICT && sscanf(x->buf, "hmm-tunnel %*u %ld ", &keep) == 1 && keep > 0)
		verdict_keep(p->asked, p->asked_len, p->f[1].buf, p->f[1].len, keep, now_ms());
	return act(p);
}

/* FIRST and HEAD: the command's first bytes. A connection that opens with
 * CONNECT has its head asked about at the proxy's CONNECT socket (the
 * bytes after it wait in f[0] for the host); any other goes to the proxy as
 * it is. */
static int read_first(struct pair *p, const char *name)
{
	struct flow *x = &p->f[0];
	ssize_t n = read(p->fd[0], x->buf + x->len, sizeof x->buf - x->len);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	x->len += (size_t)n;
	if (x->len == 0)
		return 0;
	size_t method = sizeof CONNECT_METHOD - 1;
	if (p->stage == FIRST) {
		if (memcmp(x->buf, CONNECT_METHOD, x->len < method ? x->len : method) != 0 || (n == 0 && x->len < method)) {
			p->fd[1] = connect_proxy(name, "");
			return p->fd[1] >= 0 && relay(p, p->fd[1]);
		}
		if (x->len < method)
			return 1;
		p->stage = HEAD;
	}
	if (n == 0)
		return 0; /* it ended before its head did */
	size_t from = p->scanned > 3 ? p->scanned - 3 : 0;
	char *end = memmem(x->buf + from, x->len - from, "\r\n\r\n", 4);
	p->scanned = x->len;
	if (!end && x->len < sizeof x->buf)
		return 1;
	/* A head that fills the buffer goes as it is: the proxy refuses it. */
	size_t head = end ? (size_t)(end + 4 - x->buf) : x->len;
	int reused = verdict_kept(p->f[0].buf, head, p->f[1].buf, &p->f[1].len, now_ms());
	if (!reused) {
		p->fd[1] = connect_proxy(name, CONNECT_SUFFIX);
		/* A new unix connection takes the whole buffer at once. */
		if (p->fd[1] < 0 || send(p->fd[1], x->buf, head, MSG_NOSIGNAL) != (ssize_t)head)
			return 0;
		p->asked_len = head <= KEPT_HEAD ? head : 0;
		memcpy(p->asked, x->buf, p->asked_len);
	}
	memmove(x->buf, x->buf + head, x->len - head);
	x->len -= head;
	p->deadline = 0;
	p->stage = VERDICT;
	return reused ? act(p) : 1;
}

/* Takes a pair as far as poll's news (`polled`: its entries, as want()
 * made them) let it go; 0 once it is over. */
static int step(struct pair *p, const struct pollfd *polled, const char *name)
{
	switch (p->stage) {
	case FIRST:
	case HEAD:
		return read_first(p, name);
	case VERDICT:
		return read_verdict(p);
	case DIALING:
		return dialed(p, polled);
	case RELAY:
		return pump(p, polled);
	}
	return 0;
}

/* The bridge: one process, no fork per connection (forks are dear under
 * some kernels, gVisor's among them), copying every connection to the
 * port with poll. A CONNECT that opens a connection is judged by the proxy
 * but relayed here, straight to the host: its bytes pass through one
 * process instead of two. */
void net_bridge(int listener, const char *name, int debug)
{
	/* Debugging, its lines go where hmm's go. */
	debugging = debug;
	sigset_t all;
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* A connection gone between poll and accept must not block the rest. */
	fcntl(listener, F_SETFL, O_NONBLOCK);

	static struct pair *pairs[MAX_PAIRS];
	/* Poll's entries: the listener's, then each pair's from at[k] on. */
	static struct pollfd fds[1 + MAX_POLLED * MAX_PAIRS];
	static size_t at[MAX_PAIRS + 1];
	/* One ended pair's memory, for the next: connections one after the
	 * other then cost no allocation (its 64 KiB would be given back to the
	 * system and asked for again). */
	struct pair *spare = NULL;
	size_t n = 0;
	for (;;) {
		fds[0] = (struct pollfd){.fd = n < MAX_PAIRS ? listener : -1, .events = POLLIN};
		long long soonest = 0;
		at[0] = 1;
		for (size_t k = 0; k < n; k++) {
			const struct pair *p = pairs[k];
			at[k + 1] = at[k] + want(p, &fds[at[k]]);
			long long when = p->next_at && p->next_at < p->deadline ? p->next_at : p->deadline;
			if (when && (!soonest || when < soonest))
				soonest = when;
		}
		int timeout = -1;
		if (soonest) {
			long long left = soonest - now_ms();
			timeout = left < 0 ? 0 : (int)left;
		}
		if (poll(fds, at[n], timeout) < 0 && errno != EINTR)
			_exit(0);
		long long now = soonest ? now_ms() : 0;
		for (size_t k = n; k-- > 0;) {
			struct pair *p = pairs[k];
			int news = 0;
			for (size_t e = at[k]; e < at[k + 1]; e++)
				news |= fds[e].revents;
			int alive;
			if (news)
				alive = step(p, &fds[at[k]], name);
			else if (p->stage == DIALING && (now >= p->deadline || (p->next_at && now >= p->next_at)))
				alive = dial_late(p, now);
			else if (p->deadline && now >= p->deadline)
				alive = 0; /* the head took too long */
			else
				continue;
			if (alive)
				continue;
			close(p->fd[0]);
			if (p->fd[1] >= 0)
				close(p->fd[1]);
			if (spare)
				free(p);
			else
				spare = p;
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
		/* (TCP_NODELAY comes from the listener: net.c.) */
		struct pair *p = spare ? spare : malloc(sizeof *p);
		spare = NULL;
		if (!p) {
			close(c);
			continue;
		}
		/* Its buffers are not zeroed: only what was read into them is looked at. */
		p->fd[0] = c;
		p->fd[1] = -1;
		p->stage = FIRST;
		for (int i = 0; i < 2; i++)
			p->f[i].len = p->f[i].off = (size_t)(p->f[i].done = 0);
		p->scanned = 0;
		p->deadline = now_ms() + HEAD_TIMEOUT_MS;
		p->count = p->next = 0;
		p->next_at = 0;
		pairs[n++] = p;
	}
}
#endif /* __linux__ */
