/*
 * Small utilities shared by every mode of the helper, and the one way a
 * set-up failure is reported (setup_fail).
 */
#include "hmm-helper.h"

/* Write all of buf, retrying short writes and EINTR. Returns 0 or -1. */
int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A whole decimal number in [min, max], or -1. Used for fd numbers and
 * thread counts, so anything odd ("3x", "", "-1") is refused, not guessed. */
long parse_num(const char *s, long min, long max)
{
	if (*s == '\0')
		return -1;
	long v = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p - '0');
		if (v > max)
			return -1;
	}
	return v < min ? -1 : v;
}

void oom(void)
{
	static const char m[] = "hmm-helper: out of memory\n";
	(void)!write(2, m, sizeof m - 1);
	_exit(EXIT_SETUP);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = xmalloc(n);
	memcpy(p, s, n);
	return p;
}

/* a + "/" + b, treating a == "/" so the result never starts with "//". */
char *path_join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int slash = !(la > 0 && a[la - 1] == '/');
	char *p = xmalloc(la + (size_t)slash + lb + 1);
	memcpy(p, a, la);
	if (slash)
		p[la] = '/';
	memcpy(p + la + (size_t)slash, b, lb + 1);
	return p;
}

/* The directory holding `path` ("." for a bare name). */
char *dir_of(const char *path)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else
		slash[slash == dir] = 0; /* "/x" is in "/" */
	return dir;
}

/* rel + "/" + name, where rel "." is the top. */
char *rel_join(const char *rel, const char *name)
{
	return strcmp(rel, ".") == 0 ? xstrdup(name) : path_join(rel, name);
}

#ifdef __linux__
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#define HMM_RESOLVE_NO_SYMLINKS 0x04

struct hmm_open_how {
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
};

/* hmm passes every path canonical, its links resolved when the policy was
 * made. So a link met now on the way to one was put there since: by a
 * process of a workspace racing the set-up, or by the command itself in a
 * place the namespaces make its own and keep with the workspace (its /tmp,
 * a cache's or an agent's layer), where the mounts put it back before the
 * set-up looks. Followed, it would carry a grant, a mkdir or a mount
 * wherever the command chose (the home, / as root). Not following any link
 * keeps every such path where hmm named it: in the real places, or inside
 * the command's own. openat2 is there on every kernel with Landlock ABI 2
 * (5.19; openat2 came in 5.6). */
int open_no_links(const char *path, int flags)
{
	struct hmm_open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
				   .resolve = HMM_RESOLVE_NO_SYMLINKS};
	return (int)syscall(__NR_openat2, AT_FDCWD, path, &how, sizeof how);
}

#define HMM_RESOLVE_NO_MAGICLINKS 0x02
#define HMM_RESOLVE_BENEATH 0x08
#endif

/* Unlike the paths above, the workspace's tree is the command's: any link
 * in it is one it may have put there, and followed it leads wherever the
 * command chose, /proc/self/cwd/.. included (the directory the process
 * opening it stands in). So a directory of the tree is reached from the
 * tree's top through directories alone: no link is followed, the last
 * component's included, and nothing leads out of at (RESOLVE_BENEATH; rel
 * has no "." or ".." components, exec-args.c). Elsewhere than Linux one
 * component at a time, each opened O_NOFOLLOW. Close-on-exec; -1 with errno
 * set (ELOOP where a link is met). */
int open_dir_beneath(int at, const char *rel)
{
#ifdef __linux__
	struct hmm_open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				   .resolve = HMM_RESOLVE_BENEATH | HMM_RESOLVE_NO_SYMLINKS |
					      HMM_RESOLVE_NO_MAGICLINKS};
	return (int)syscall(__NR_openat2, at, rel, &how, sizeof how);
#else
	int fd = fcntl(at, F_DUPFD_CLOEXEC, 0);
	for (const char *c = rel; fd >= 0 && *c;) {
		const char *slash = strchr(c, '/');
		size_t len = slash ? (size_t)(slash - c) : strlen(c);
		char *name = xmalloc(len + 1);
		memcpy(name, c, len);
		name[len] = '\0';
		int next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		free(name);
		close(fd);
		errno = e;
		fd = next;
		c = slash ? slash + 1 : c + len;
	}
	return fd;
#endif
}

#ifdef __linux__
#ifndef __NR_close_range
#define __NR_close_range 436
#endif
#endif

/* exec's step 3: the command inherits stdin, stdout, stderr and the lock, nothing
 * else of hmm's (SPEC: "inherits no open file descriptor"). close_range does
 * it in one call; older kernels get /proc/self/fd, then brute force. */
static int close_fds_range(unsigned lo, unsigned hi)
{
#ifdef __linux__
	if (syscall(__NR_close_range, lo, hi, 0) == 0)
		return 0;
#else
	(void)lo;
	(void)hi;
#endif
	return -1;
}

void stdio_to(int null, int keep_stderr)
{
	if (null < 0)
		return;
	dup2(null, 0);
	dup2(null, 1);
	if (!keep_stderr)
		dup2(null, 2);
	close(null);
}

void stdio_to_null(int keep_stderr)
{
	stdio_to(open("/dev/null", O_RDWR | O_CLOEXEC), keep_stderr);
}

static int keep_fd(int fd, int k1, int k2)
{
	return fd < 3 || fd == k1 || fd == k2;
}

void close_other_fds(int k1, int k2)
{
	int a = k1 < k2 ? k1 : k2, b = k1 < k2 ? k2 : k1;
	unsigned lo = 3;
	int ok = 1;
	int keep[2] = {a, b};
	for (int i = 0; i < 2 && ok; i++) {
		if (keep[i] < 3)
			continue;
		if ((unsigned)keep[i] > lo && close_fds_range(lo, (unsigned)keep[i] - 1) < 0)
			ok = 0;
		if ((unsigned)keep[i] + 1 > lo)
			lo = (unsigned)keep[i] + 1;
	}
	if (ok && close_fds_range(lo, ~0U) == 0)
		return;

#ifdef __linux__
	/* Collect first, close after: closing while reading the directory would
	 * pull descriptors from under readdir (its own among them). */
	DIR *d = opendir("/proc/self/fd");
	if (d) {
		int self = dirfd(d);
		size_t n = 0, cap = 64;
		int *fds = xmalloc(cap * sizeof *fds);
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			long fd = parse_num(e->d_name, 0, INT_MAX);
			if (fd < 0 || fd == self || keep_fd((int)fd, k1, k2))
				continue;
			if (n == cap)
				fds = realloc(fds, (cap *= 2) * sizeof *fds);
			if (!fds)
				oom();
			fds[n++] = (int)fd;
		}
		closedir(d);
		for (size_t i = 0; i < n; i++)
			close(fds[i]);
		free(fds);
		return;
	}
#endif
	struct rlimit rl;
	long max = 65536;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < (rlim_t)(1 << 20))
		max = (long)rl.rlim_cur;
	for (long fd = 3; fd < max; fd++)
		if (!keep_fd((int)fd, k1, k2))
			close((int)fd);
}

/* Where set-up failures go: the report descriptor if hmm gave one (so it can
 * tell them from the command's own output and status), stderr otherwise. */
int report_fd = -1;

void setup_fail(const char *fmt, ...)
{
	char msg[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* The report is one line that hmm parses: a path with a newline in it
	 * must not split it. */
	for (char *p = msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = '?';
	/* hmm may have stopped listening; that must not kill us silently. */
	signal(SIGPIPE, SIG_IGN);
	char line[4200];
	int n;
	if (report_fd >= 0)
		n = snprintf(line, sizeof line, "setup %s\n", msg);
	else
		n = snprintf(line, sizeof line, "hmm-helper: %s\n", msg);
	if (n > (int)sizeof line - 1)
		n = (int)sizeof line - 1;
	write_all(report_fd >= 0 ? report_fd : 2, line, (size_t)n);
	_exit(EXIT_SETUP);
}

#ifdef __linux__
#include <sys/mount.h>
#include <sys/socket.h>

void mount_or_fail(const char *step, const char *src, const char *target, const char *type,
		   unsigned long flags, const char *data)
{
	if (mount(src, target, type, flags, data) < 0)
		setup_fail("%s: cannot mount %s on %s: %s", step, type ? type : src, target,
			   strerror(errno));
}

/* mkdir -p, for the workspace's own directories in hmm's data directory,
 * which the command never writes (0700), and own-run.c's, in its /run. */
void make_dirs(const char *step, const char *path, mode_t mode)
{
	char *p = xstrdup(path);
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			setup_fail("%s: cannot make %s: %s", step, p, strerror(errno));
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
}

/* Paths hmm named: canonical and absolute, compared as byte strings. */
int beneath_or_at(const char *p, const char *dir)
{
	size_t n = strlen(dir);
	if (strcmp(dir, "/") == 0)
		return 1;
	return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

int strictly_beneath(const char *p, const char *dir)
{
	return beneath_or_at(p, dir) && strcmp(p, dir) != 0;
}

/* A mount's target by a descriptor (util.c open_no_links), so that no link
 * on the way can move the mount elsewhere. */
char *fd_path(int fd)
{
	char *p = xmalloc(32);
	snprintf(p, 32, "/proc/self/fd/%d", fd);
	return p;
}

/* A descriptor handed to the process at the other end of a unix socket
 * (SCM_RIGHTS, with one byte): 0, or -1 with errno set. */
int send_fd(int sock, int fd)
{
	char byte = 'f';
	struct iovec iov = {&byte, 1};
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int))];
	} u;
	memset(&u, 0, sizeof u);
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.space,
			     .msg_controllen = sizeof u.space};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof fd);
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* The descriptor send_fd sent (close-on-exec), or -1 when the other end
 * closed without sending one (it reports why itself). */
int receive_fd(int sock)
{
	char byte;
	struct iovec iov = {&byte, 1};
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.space,
			     .msg_controllen = sizeof u.space};
	ssize_t n;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	struct cmsghdr *c = n == 1 ? CMSG_FIRSTHDR(&msg) : NULL;
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(c), sizeof fd);
	return fd;
}
#endif
