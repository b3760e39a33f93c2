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
#endif

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
#endif
