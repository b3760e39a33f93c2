/*
 * hmm-helper: the small native part of hmm, for what Node cannot do itself.
 *
 *   hmm-helper abi
 *   hmm-helper locked FILE...
 *   hmm-helper exec --lock FILE [--report-fd N] [--read PATH]... [--write PATH]...
 *                   [--dev PATH]... [--hide PATH]... -- CMD [ARG...]
 *   hmm-helper clone [--threads N] [--progress-fd N] [--stat-pairs] SRC DST
 *   hmm-helper stat-pairs ROOT_A ROOT_B < NUL-separated relative paths
 *
 * Where it stands on security: `exec` is the sandbox. It takes the lock that
 * marks a workspace running, closes every descriptor hmm did not mean the
 * command to have, confines itself with Landlock (rights are only ever
 * granted, so anything this file forgets to grant stays denied), forbids
 * gaining privileges, and replaces itself with the command, so no process of
 * hmm's sits between the command and the kernel. The policy arrives only in
 * argv; no environment variable changes what the helper does. Whatever goes
 * wrong before the command starts is reported on a separate descriptor and
 * with its own exit status (125), never confused with the command's own.
 *
 * `clone` copies the origin into a workspace the way `cp -a --reflink=auto`
 * does, from several threads, because that copy is the bulk of `hmm run`'s
 * time. With --stat-pairs it also answers, for the paths on stdin, what
 * stat-pairs would right after (see there). It reads the source only
 * through *at() calls relative to directory descriptors opened with
 * O_NOFOLLOW, so it never follows a link in SRC.
 *
 * Linux-only parts (Landlock, FICLONE, copy_file_range, close_range) are
 * behind __linux__; the rest also builds on macOS, where hmm confines the
 * command with sandbox-exec instead and only uses `locked`, `exec` (lock,
 * descriptors, exec) and `clone`.
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/ioctl.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#endif

/* Nanosecond times are spelt differently on macOS. */
#ifdef __APPLE__
#define ST_ATIM(st) ((st).st_atimespec)
#define ST_MTIM(st) ((st).st_mtimespec)
#else
#define ST_ATIM(st) ((st).st_atim)
#define ST_MTIM(st) ((st).st_mtim)
#endif

#ifndef O_NOATIME
#define O_NOATIME 0
#endif

#define EXIT_SETUP 125

/* ------------------------------------------------------------------------
 * Small utilities shared by every mode.
 * ------------------------------------------------------------------------ */

/* Write all of buf, retrying short writes and EINTR. Returns 0 or -1. */
static int write_all(int fd, const char *buf, size_t len)
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
static long parse_num(const char *s, long min, long max)
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

static void oom(void) __attribute__((noreturn));
static void oom(void)
{
	static const char m[] = "hmm-helper: out of memory\n";
	(void)!write(2, m, sizeof m - 1);
	_exit(EXIT_SETUP);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = xmalloc(n);
	memcpy(p, s, n);
	return p;
}

/* a + "/" + b, treating a == "/" so the result never starts with "//". */
static char *path_join(const char *a, const char *b)
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

/* ------------------------------------------------------------------------
 * abi: which Landlock ABI the kernel offers, so the TS side can refuse to
 * run (and say why) before it makes a workspace.
 * ------------------------------------------------------------------------ */

#ifdef __linux__
/* The machine's <linux/landlock.h> may predate the rights we use (6.1 lacks
 * TRUNCATE, IOCTL_DEV and scopes), so the ABI is spelt out here. */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
#ifndef __NR_close_range
#define __NR_close_range 436
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#define HMM_LANDLOCK_RULE_PATH_BENEATH 1
#ifndef LANDLOCK_ACCESS_FS_EXECUTE
#define LANDLOCK_ACCESS_FS_EXECUTE (1ULL << 0)
#define LANDLOCK_ACCESS_FS_WRITE_FILE (1ULL << 1)
#define LANDLOCK_ACCESS_FS_READ_FILE (1ULL << 2)
#define LANDLOCK_ACCESS_FS_READ_DIR (1ULL << 3)
#define LANDLOCK_ACCESS_FS_REMOVE_DIR (1ULL << 4)
#define LANDLOCK_ACCESS_FS_REMOVE_FILE (1ULL << 5)
#define LANDLOCK_ACCESS_FS_MAKE_CHAR (1ULL << 6)
#define LANDLOCK_ACCESS_FS_MAKE_DIR (1ULL << 7)
#define LANDLOCK_ACCESS_FS_MAKE_REG (1ULL << 8)
#define LANDLOCK_ACCESS_FS_MAKE_SOCK (1ULL << 9)
#define LANDLOCK_ACCESS_FS_MAKE_FIFO (1ULL << 10)
#define LANDLOCK_ACCESS_FS_MAKE_BLOCK (1ULL << 11)
#define LANDLOCK_ACCESS_FS_MAKE_SYM (1ULL << 12)
#endif
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* Our own names, so they cannot clash with an older header's structs. The
 * kernel takes the size we pass and ignores nothing: fields it does not know
 * must be zero, which is why the size passed depends on the ABI. */
struct hmm_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;	     /* ABI 6 */
};

struct hmm_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* The kernel's Landlock ABI, 0 when it has none or it is disabled. */
static int landlock_abi(void)
{
	long v = syscall(__NR_landlock_create_ruleset, NULL, 0,
			 LANDLOCK_CREATE_RULESET_VERSION);
	return v < 0 ? 0 : (int)v;
}
#else
static int landlock_abi(void)
{
	return 0;
}
#endif

static int cmd_abi(int argc, char **argv)
{
	(void)argv;
	if (argc != 2) {
		fprintf(stderr, "usage: hmm-helper abi\n");
		return 2;
	}
	printf("%d\n", landlock_abi());
	return 0;
}

/* ------------------------------------------------------------------------
 * locked: is a workspace running? The command holds an flock on the
 * workspace's lock file for as long as it (or anything it left running with
 * the descriptor) lives, so probing the lock without blocking answers that
 * even if the hmm that started it was killed. A shared probe is dropped at
 * once, so it never keeps a lock from the helper for longer than a moment.
 * ------------------------------------------------------------------------ */

static int is_locked(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	int r;
	do
		r = flock(fd, LOCK_SH | LOCK_NB);
	while (r < 0 && errno == EINTR);
	int held = r < 0 && errno == EWOULDBLOCK;
	close(fd); /* also drops our shared lock if we got it */
	return held;
}

static int cmd_locked(int argc, char **argv)
{
	for (int i = 2; i < argc; i++)
		printf("%d\n", is_locked(argv[i]));
	return 0;
}

/* ------------------------------------------------------------------------
 * exec: lock, close, confine, exec.
 * ------------------------------------------------------------------------ */

/* Where set-up failures go: the report descriptor if hmm gave one (so it can
 * tell them from the command's own output and status), stderr otherwise. */
static int report_fd = -1;

static void setup_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void setup_fail(const char *fmt, ...)
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

#define EXEC_USAGE                                                                       \
	"usage: hmm-helper exec --lock FILE [--report-fd N] [--wait-fd N] [--chdir DIR] " \
	"[--read PATH]... [--write PATH]... " \
	"[--dev PATH]... [--hide PATH]... -- CMD [ARG...]"

/* Rights classes, in the order a grant widens them. */
enum { CLASS_READ, CLASS_WRITE, CLASS_DEV };

struct grant {
	const char *path;
	int cls;
};

struct exec_opts {
	const char *lock;
	int wait_fd;	   /* -1, or where hmm sends the go-ahead */
	const char *chdir; /* NULL, or where the command starts */
	struct grant *grants;
	size_t ngrants;
	const char **hides;
	size_t nhides;
	char **cmd;
};

/* Paths must come absolute and canonical (the TS side resolves them), because
 * hidden paths are compared with grant paths as byte strings: "/a/./b" or a
 * trailing slash would silently fail to hide. So anything else is refused. */
static void check_canonical(const char *flag, const char *p)
{
	if (p[0] != '/')
		setup_fail("%s needs an absolute path: %s", flag, p);
	if (p[1] == '\0')
		return;
	for (const char *c = p + 1;;) {
		const char *e = strchr(c, '/');
		size_t len = e ? (size_t)(e - c) : strlen(c);
		if (len == 0 || (len == 1 && c[0] == '.') ||
		    (len == 2 && c[0] == '.' && c[1] == '.'))
			setup_fail("%s needs a canonical path: %s", flag, p);
		if (!e)
			break;
		c = e + 1;
	}
}

static void parse_exec(int argc, char **argv, struct exec_opts *o)
{
	memset(o, 0, sizeof *o);
	o->wait_fd = -1;
	o->grants = xmalloc(sizeof *o->grants * (size_t)argc);
	o->hides = xmalloc(sizeof *o->hides * (size_t)argc);
	int i = 2;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0)
			break;
		if (i + 1 >= argc)
			setup_fail("%s", EXEC_USAGE);
		const char *v = argv[++i];
		if (strcmp(a, "--lock") == 0) {
			o->lock = v;
		} else if (strcmp(a, "--report-fd") == 0) {
			/* already taken by the first pass in cmd_exec */
		} else if (strcmp(a, "--wait-fd") == 0) {
			long fd = parse_num(v, 3, INT_MAX);
			if (fd < 0 || fcntl((int)fd, F_GETFD) < 0)
				setup_fail("--wait-fd needs an open descriptor of 3 or more: %s", v);
			o->wait_fd = (int)fd;
		} else if (strcmp(a, "--chdir") == 0) {
			o->chdir = v;
		} else if (strcmp(a, "--read") == 0 || strcmp(a, "--write") == 0 ||
			   strcmp(a, "--dev") == 0) {
			check_canonical(a, v);
			o->grants[o->ngrants].path = v;
			o->grants[o->ngrants].cls = a[2] == 'r'   ? CLASS_READ
						    : a[2] == 'w' ? CLASS_WRITE
								  : CLASS_DEV;
			o->ngrants++;
		} else if (strcmp(a, "--hide") == 0) {
			check_canonical(a, v);
			o->hides[o->nhides++] = v;
		} else {
			setup_fail("%s", EXEC_USAGE);
		}
	}
	if (i >= argc || i + 1 >= argc || o->lock == NULL || o->lock[0] == '\0')
		setup_fail("%s", EXEC_USAGE);
	o->cmd = &argv[i + 1];
}

/* Step 3: the command inherits stdin, stdout, stderr and the lock, nothing
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

static int keep_fd(int fd, int k1, int k2)
{
	return fd < 3 || fd == k1 || fd == k2;
}

static void close_other_fds(int k1, int k2)
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

#ifdef __linux__
/* Step 4: Landlock. */

static int ruleset_fd = -1;
static const struct exec_opts *policy;

/* Only these rights mean anything on a non-directory; the kernel refuses a
 * rule on a file that names any other. */
#define ACCESS_FILE                                                         \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |        \
	 LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |      \
	 LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* Everything the ABI knows how to deny, except READ_DIR: listing directories
 * stays allowed everywhere (a deliberate choice: the names in a hidden
 * directory can be listed, its files cannot be read), and except network
 * rights (ABI 4), which no feature asks to restrict. A bit the kernel does
 * not know would make it refuse the whole ruleset, so each comes with its ABI. */
static uint64_t handled_fs(int abi)
{
	uint64_t m = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
		     LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
		     LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
		     LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
		     LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
		     LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
	if (abi >= 2)
		m |= LANDLOCK_ACCESS_FS_REFER; /* renames across directories */
	if (abi >= 3)
		m |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		m |= LANDLOCK_ACCESS_FS_IOCTL_DEV; /* terminals need ioctls on /dev */
	return m;
}

static uint64_t handled_mask;

/* READ: run and read files. WRITE: also change anything beneath. DEV: also
 * ioctls on devices (granted on /dev so terminals keep working). */
static uint64_t class_rights(int cls)
{
	uint64_t r = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE;
	/* No device nodes anywhere (MAKE_CHAR, MAKE_BLOCK stay denied): a
	 * command has no business making them, and one of a disk could be
	 * read raw where it is made. */
	if (cls >= CLASS_WRITE)
		r |= LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
		     LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_DIR |
		     LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
		     LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_SYM |
		     LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE;
	if (cls >= CLASS_DEV)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return r & handled_mask;
}

/* Grant rights beneath the object fd refers to. strict: a failure is a
 * set-up failure (a path hmm named); otherwise (an entry met while walking
 * around a hidden path) an object Landlock cannot take a rule on is skipped,
 * which only ever denies more. */
static void add_rule(int fd, uint64_t rights, const char *path, int strict)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		if (strict)
			setup_fail("cannot stat %s: %s", path, strerror(errno));
		return;
	}
	if (!S_ISDIR(st.st_mode))
		rights &= ACCESS_FILE;
	if (rights == 0)
		return;
	struct hmm_path_beneath_attr attr = {.allowed_access = rights, .parent_fd = fd};
	if (syscall(__NR_landlock_add_rule, ruleset_fd, HMM_LANDLOCK_RULE_PATH_BENEATH,
		    &attr, 0) < 0) {
		if (strict || errno != EBADFD)
			setup_fail("cannot add a Landlock rule for %s: %s", path,
				   strerror(errno));
	}
}

/* Is h strictly beneath p? Byte strings, both canonical and absolute. */
static int beneath(const char *p, const char *h)
{
	size_t lp = strlen(p);
	if (lp == 1 && p[0] == '/')
		return h[0] == '/' && h[1] != '\0';
	return strncmp(p, h, lp) == 0 && h[lp] == '/';
}

static int is_hidden(const char *p)
{
	for (size_t i = 0; i < policy->nhides; i++)
		if (strcmp(policy->hides[i], p) == 0)
			return 1;
	return 0;
}

static int hides_beneath(const char *p)
{
	for (size_t i = 0; i < policy->nhides; i++)
		if (beneath(p, policy->hides[i]))
			return 1;
	return 0;
}

/* Rights are granted, never denied, so a hidden path beneath a grant is cut
 * out by granting, instead of the directory, each of its entries that is
 * neither hidden nor above something hidden, and walking down into those
 * that are above. The directories on the way down get no rule themselves:
 * files made in them later are not readable, which errs on the safe side. */
static void walk_around_hidden(int dfd, const char *path, uint64_t rights)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char *child = path_join(path, e->d_name);
		if (is_hidden(child)) {
			/* gets nothing from this grant */
		} else if (hides_beneath(child)) {
			int cfd = openat(dirfd(d), e->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd >= 0)
				walk_around_hidden(cfd, child, rights);
		} else {
			/* O_NOFOLLOW: a link here (say ~/keys -> ~/.ssh) must not
			 * carry the grant to its target; links get no rule, their
			 * targets are judged where they really are. */
			int cfd = openat(dirfd(d), e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (cfd >= 0) {
				struct stat st;
				if (fstat(cfd, &st) == 0 && !S_ISLNK(st.st_mode))
					add_rule(cfd, rights, child, 0);
				close(cfd);
			}
		}
		free(child);
	}
	closedir(d);
}

static void grant(const struct grant *g)
{
	uint64_t rights = class_rights(g->cls);
	if (!hides_beneath(g->path)) {
		int fd = open(g->path, O_PATH | O_CLOEXEC);
		if (fd < 0) {
			/* Caches like ~/.cargo need not exist. */
			if (errno == ENOENT || errno == ENOTDIR)
				return;
			setup_fail("cannot open %s: %s", g->path, strerror(errno));
		}
		add_rule(fd, rights, g->path, 1);
		close(fd);
		return;
	}
	int fd = open(g->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return;
		setup_fail("cannot open %s: %s", g->path, strerror(errno));
	}
	walk_around_hidden(fd, g->path, rights);
}

/* What the command keeps of root's capabilities when hmm runs as root:
 * what root's tools need within the files they may write (owners, modes,
 * set-user-ID tools that switch users, low ports, signals). Everything that
 * reaches past Landlock's file rules goes: loading kernel modules, raw I/O,
 * device nodes (a disk read raw holds every secret), the system clock
 * (which would also let it forge the ctimes hmm trusts), mounts and the
 * rest of SYS_ADMIN, tracing, BPF, DAC_READ_SEARCH (open_by_handle_at). */
static const int KEPT_CAPS[] = {CAP_CHOWN,	CAP_DAC_OVERRIDE,     CAP_FOWNER,
				CAP_FSETID,	CAP_KILL,	      CAP_SETGID,
				CAP_SETUID,	CAP_NET_BIND_SERVICE, CAP_NET_RAW,
				CAP_SYS_CHROOT, CAP_AUDIT_WRITE};

static void drop_capabilities(void)
{
	uint64_t keep = 0;
	for (size_t i = 0; i < sizeof KEPT_CAPS / sizeof *KEPT_CAPS; i++)
		keep |= 1ULL << KEPT_CAPS[i];
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct caps[2];
	if (syscall(SYS_capget, &hdr, caps) < 0)
		setup_fail("cannot read the capabilities: %s", strerror(errno));
	/* The bounding set too, so that no exec (as root, or of a program
	 * with file capabilities) brings them back. Needs CAP_SETPCAP, which
	 * root has; a process without it has nothing to drop here. */
	if (caps[0].effective & (1U << CAP_SETPCAP)) {
		for (int cap = 0; cap < 64; cap++) {
			if (keep & (1ULL << cap))
				continue;
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
				if (errno == EINVAL)
					break; /* past the last capability this kernel has */
				setup_fail("cannot drop capability %d: %s", cap, strerror(errno));
			}
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		setup_fail("cannot clear the ambient capabilities: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		uint32_t mask = (uint32_t)(keep >> (32 * i));
		caps[i].effective &= mask;
		caps[i].permitted &= mask;
		caps[i].inheritable &= mask;
	}
	if (syscall(SYS_capset, &hdr, caps) < 0)
		setup_fail("cannot drop capabilities: %s", strerror(errno));
}

static void confine(const struct exec_opts *o)
{
	int abi = landlock_abi();
	if (abi == 0)
		setup_fail("Landlock is not enabled in this kernel");
	if (abi < 2)
		setup_fail("the sandbox needs Landlock ABI 2 or later (Linux 5.19+); "
			   "this kernel has ABI %d",
			   abi);
	if (abi > 7)
		abi = 7; /* newer rights are unknown to this file; leave them */
	handled_mask = handled_fs(abi);
	policy = o;

	struct hmm_ruleset_attr attr = {.handled_access_fs = handled_mask};
	size_t size = 8; /* up to ABI 3 the kernel knows only the first field */
	if (abi >= 4)
		size = 16; /* network: known, left unhandled (zero) */
	if (abi >= 6) {
		/* The command may not signal processes outside its sandbox
		 * (hmm, the user's shell, other workspaces). Abstract unix
		 * sockets stay unscoped: agents' tools use them. */
		attr.scoped = LANDLOCK_SCOPE_SIGNAL;
		size = 24;
	}
	ruleset_fd = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
	if (ruleset_fd < 0)
		setup_fail("cannot create a Landlock ruleset: %s", strerror(errno));

	for (size_t i = 0; i < o->ngrants; i++)
		grant(&o->grants[i]);

	/* Required by landlock_restrict_self for an unprivileged process, and
	 * wanted anyway: no set-user-ID program can regain what we drop. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		setup_fail("cannot set no_new_privs: %s", strerror(errno));
	if (syscall(__NR_landlock_restrict_self, ruleset_fd, 0) < 0)
		setup_fail("cannot enforce the Landlock ruleset: %s", strerror(errno));
	close(ruleset_fd);
	drop_capabilities();
}
#endif /* __linux__ */

static const char *errno_name(int e)
{
	switch (e) {
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case ENOEXEC: return "ENOEXEC";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case ELOOP: return "ELOOP";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case E2BIG: return "E2BIG";
	case ENOMEM: return "ENOMEM";
	case ETXTBSY: return "ETXTBSY";
	case EPERM: return "EPERM";
	case EIO: return "EIO";
	case EINVAL: return "EINVAL";
	case EMFILE: return "EMFILE";
	case ENFILE: return "ENFILE";
	case EFAULT: return "EFAULT";
	default: return "EOTHER";
	}
}

/* execvp's EACCES for a name looked up in PATH also comes from a directory
 * of PATH that may not be searched (root's ~/.cargo/bin in a plain user's
 * PATH). A shell says "not found" (127) then: EACCES only counts where a
 * file of that name exists in some directory of PATH. */
static int found_on_path(const char *name)
{
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin"; /* execvp's own default */
	size_t len = strlen(name);
	for (const char *dir = path;; dir++) {
		const char *end = strchr(dir, ':');
		size_t dlen = end ? (size_t)(end - dir) : strlen(dir);
		char *file = xmalloc(dlen + len + 3);
		/* An empty entry is the working directory, as for execvp. */
		snprintf(file, dlen + len + 3, "%.*s/%s", (int)(dlen ? dlen : 1), dlen ? dir : ".", name);
		struct stat st;
		int found = stat(file, &st) == 0;
		free(file);
		if (found)
			return 1;
		if (!end)
			return 0;
		dir = end;
	}
}

static int cmd_exec(int argc, char **argv)
{
	/* Step 1, first, so that even a usage error is reported where hmm
	 * listens: find --report-fd before reading anything else. */
	for (int i = 2; i + 1 < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--report-fd") == 0) {
			long fd = parse_num(argv[i + 1], 3, INT_MAX);
			if (fd < 0)
				setup_fail("--report-fd needs a descriptor number of 3 or more: %s",
					   argv[i + 1]);
			int flags = fcntl((int)fd, F_GETFD);
			if (flags < 0)
				setup_fail("--report-fd %ld is not open", fd);
			/* Close-on-exec: hmm reads EOF once the command has started. */
			if (fcntl((int)fd, F_SETFD, flags | FD_CLOEXEC) < 0)
				setup_fail("--report-fd %ld: %s", fd, strerror(errno));
			report_fd = (int)fd;
			break;
		}
		if (strcmp(argv[i], "--lock") == 0 || strcmp(argv[i], "--read") == 0 ||
		    strcmp(argv[i], "--wait-fd") == 0 || strcmp(argv[i], "--chdir") == 0 ||
		    strcmp(argv[i], "--write") == 0 || strcmp(argv[i], "--dev") == 0 ||
		    strcmp(argv[i], "--hide") == 0)
			i++; /* skip the value, which may look like a flag */
	}

	struct exec_opts o;
	parse_exec(argc, argv, &o);

#ifndef __linux__
	if (o.ngrants || o.nhides)
		setup_fail("Landlock rules need Linux; this system confines commands otherwise");
#endif

	/* Step 2: the lock that marks the workspace running. Not close-on-exec:
	 * the command inherits it, so it is held exactly while the command (or
	 * whatever it left running with the descriptor) lives, whatever happens
	 * to hmm. Read-write, though flock alone would not need it: over NFS
	 * an exclusive flock is emulated with a POSIX lock, which does. */
	int lock = open(o.lock, O_RDWR | O_CREAT | O_NOCTTY, 0600);
	if (lock < 0)
		setup_fail("cannot open the lock %s: %s", o.lock, strerror(errno));
	if (lock < 3) {
		/* Never let the lock take the place of stdin/stdout/stderr. */
		int moved = fcntl(lock, F_DUPFD, 3);
		if (moved < 0)
			setup_fail("cannot move the lock's descriptor: %s", strerror(errno));
		close(lock);
		lock = moved;
	}
	int r;
	do
		r = flock(lock, LOCK_EX);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		setup_fail("cannot lock %s: %s", o.lock, strerror(errno));

	/* Step 2b: hmm makes the tree while this process already holds the
	 * lock, so a half-made workspace shows as running, never as broken,
	 * while hmm is alive; if hmm dies meanwhile, the pipe closes and this
	 * process exits without running anything, releasing the lock. */
	if (o.wait_fd >= 0) {
		char go = 0;
		ssize_t got;
		do
			got = read(o.wait_fd, &go, 1);
		while (got < 0 && errno == EINTR);
		if (got != 1 || go != 'g')
			setup_fail("hmm gave up before the command started");
		close(o.wait_fd);
	}
	if (o.chdir && chdir(o.chdir) < 0)
		setup_fail("cannot enter %s: %s", o.chdir, strerror(errno));

	/* Step 3. */
	close_other_fds(lock, report_fd);

	/* Step 4. */
#ifdef __linux__
	confine(&o);
#endif

	/* Step 5. PATH is looked up as a shell would; on success the report
	 * descriptor closes with the exec and hmm reads EOF: "started". */
	execvp(o.cmd[0], o.cmd);
	int e = errno;
	if (e == EACCES && !strchr(o.cmd[0], '/') && !found_on_path(o.cmd[0]))
		e = ENOENT;
	signal(SIGPIPE, SIG_IGN);
	char line[512];
	int n;
	if (report_fd >= 0)
		n = snprintf(line, sizeof line, "exec %s %s\n", errno_name(e), strerror(e));
	else
		n = snprintf(line, sizeof line, "hmm-helper: %.256s: %s\n", o.cmd[0], strerror(e));
	if (n > (int)sizeof line - 1)
		n = (int)sizeof line - 1;
	write_all(report_fd >= 0 ? report_fd : 2, line, (size_t)n);
	return e == ENOENT ? 127 : 126;
}

/* ------------------------------------------------------------------------
 * clone: SRC -> DST like `cp -a --reflink=auto`, from a pool of threads.
 *
 * The unit of work is a directory: a worker opens it, makes its twin, reads
 * all its entries, and copies them, every call relative to the two directory
 * descriptors (no path strings to resolve, no link followed). Big
 * directories are cut into chunks that other workers take; subdirectories
 * found on the way are queued for whoever is free. A directory's own mode,
 * owner and times are set only when everything beneath it is done (its
 * mtime would move with every entry made in it), tracked by a count of
 * pending work per directory.
 * ------------------------------------------------------------------------ */

/* A destination directory waiting for its contents before its metadata. */
struct dnode {
	struct dnode *parent;
	atomic_long pending; /* own chunks not done + subdirectories not done */
	char *rel;	     /* path relative to SRC/DST; "." for the top */
	mode_t mode;
	uid_t uid;
	gid_t gid;
	struct timespec times[2];
};

struct entry {
	char *name;
	unsigned char type; /* d_type, DT_UNKNOWN when the fs does not say */
};

/* An open pair of directories and its entries, shared by its chunks. */
struct dopen {
	atomic_int refs;
	DIR *sdir;
	int sfd, dfd;
	struct dnode *node;
	struct entry *ents;
	size_t nents;
	char *names; /* storage for the entries' names */
};

struct job {
	struct job *next;
	struct dopen *dir; /* a chunk of an open directory, or */
	size_t from, to;
	struct dnode *node; /* a directory still to read (sfd/dfd opened) */
	int sfd, dfd;
};

static struct {
	const char *src, *dst;
	int dst_root;		/* DST, for hard links made by path */
	dev_t dst_dev;
	ino_t dst_ino;		/* never copy DST into itself */
	uid_t euid;
	gid_t egid;
	int always_chmod;	/* a default ACL makes creation modes unreliable */
	int progress_fd;
	atomic_int noatime;	/* O_NOATIME works (we own the files, or root) */
	atomic_int failed;
	atomic_ullong files, bytes;
	/* the queue */
	pthread_mutex_t mu;
	pthread_cond_t cv, done_cv;
	struct job *head;
	atomic_long queued;
	long queue_limit;
	int nthreads, idle, done;
} C = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.cv = PTHREAD_COND_INITIALIZER,
	.done_cv = PTHREAD_COND_INITIALIZER,
};

/* Entries per chunk: big enough that queueing costs nothing next to copying,
 * small enough that one huge directory still spreads over all workers. */
#define CHUNK 64

static char *rel_join(const char *rel, const char *name)
{
	return strcmp(rel, ".") == 0 ? xstrdup(name) : path_join(rel, name);
}

/* "hmm: clone: <path>: <reason>", and stop: the TS side removes what was made. */
static void clone_fail(int side_dst, const char *rel, const char *name, int err)
{
	const char *root = side_dst ? C.dst : C.src;
	char *r = name ? rel_join(rel, name) : xstrdup(rel);
	char *p = strcmp(r, ".") == 0 ? xstrdup(root) : path_join(root, r);
	size_t len = strlen(p) + 256;
	char *line = xmalloc(len);
	int n = snprintf(line, len, "hmm: clone: %s: %s\n", p,
			 err ? strerror(err) : "cannot clone a directory into itself");
	write_all(2, line, (size_t)n);
	free(line);
	free(p);
	free(r);
	atomic_store(&C.failed, 1);
}

static void clone_note(const char *what, const char *rel, const char *name)
{
	char *r = rel_join(rel, name);
	char *p = path_join(C.src, r);
	size_t len = strlen(p) + 64;
	char *line = xmalloc(len);
	int n = snprintf(line, len, "hmm: skipped %s %s\n", what, p);
	write_all(2, line, (size_t)n);
	free(line);
	free(p);
	free(r);
}

/* ---- the queue ---- */

static void push(struct job *j)
{
	pthread_mutex_lock(&C.mu);
	j->next = C.head;
	C.head = j; /* LIFO: depth first, so few directories are open at once */
	atomic_fetch_add(&C.queued, 1);
	pthread_cond_signal(&C.cv);
	pthread_mutex_unlock(&C.mu);
}

/* The next job, or NULL when every worker is idle with nothing queued:
 * then nothing can make more work, and the copy is complete. */
static struct job *pop(void)
{
	pthread_mutex_lock(&C.mu);
	for (;;) {
		if (C.head) {
			struct job *j = C.head;
			C.head = j->next;
			atomic_fetch_sub(&C.queued, 1);
			pthread_mutex_unlock(&C.mu);
			return j;
		}
		if (C.done)
			break;
		if (++C.idle == C.nthreads) {
			C.done = 1;
			pthread_cond_broadcast(&C.cv);
			pthread_cond_broadcast(&C.done_cv);
			break;
		}
		pthread_cond_wait(&C.cv, &C.mu);
		C.idle--;
	}
	pthread_mutex_unlock(&C.mu);
	return NULL;
}

/* ---- metadata ---- */

/* Owner first, then mode (chown clears set-user-ID), times last. Not being
 * root, we cannot give files away: keep ours, as cp does. */
static int set_owner(int fd, const char *name, uid_t uid, gid_t gid, int force)
{
	if (!force && uid == C.euid && gid == C.egid)
		return 0; /* new files are already ours (no setgid parent, see below) */
	int r = name ? fchownat(fd, name, uid, gid, AT_SYMLINK_NOFOLLOW) : fchown(fd, uid, gid);
	if (r < 0 && errno == EPERM && C.euid != 0)
		return 0;
	return r;
}

static void finish_dir(struct dnode *n)
{
	int root = C.dst_root;
	if (!atomic_load(&C.failed)) {
		int e = 0;
		int force = n->parent == NULL; /* DST's gid came from its parent */
		if (set_owner(root, n->rel, n->uid, n->gid, force) < 0 ||
		    fchmodat(root, n->rel, n->mode & 07777, 0) < 0 ||
		    utimensat(root, n->rel, n->times, AT_SYMLINK_NOFOLLOW) < 0)
			e = errno;
		if (e)
			clone_fail(1, n->rel, NULL, e);
	}
}

/* One piece of a directory's work is done; the last one sets its metadata
 * and passes the news up. */
static void release(struct dnode *n)
{
	while (n && atomic_fetch_sub(&n->pending, 1) == 1) {
		struct dnode *p = n->parent;
		finish_dir(n);
		free(n->rel);
		free(n);
		n = p;
	}
}

static void dopen_put(struct dopen *d)
{
	if (atomic_fetch_sub(&d->refs, 1) != 1)
		return;
	closedir(d->sdir);
	close(d->dfd);
	free(d->ents);
	free(d->names);
	free(d);
}

/* ---- hard links ----
 * Names of one inode (st_nlink > 1) stay one inode: the first name met is
 * copied, later names are linked to it. Later names wait until the first is
 * made (the wait is short: whoever made the claim is creating it now). */

enum { L_CREATING, L_MADE, L_SKIPPED };

struct link {
	struct link *next;
	dev_t dev;
	ino_t ino;
	char *rel; /* first name, relative to DST */
	int state;
};

#define LINK_BUCKETS 4096
static struct link *links[LINK_BUCKETS];
static pthread_mutex_t links_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t links_cv = PTHREAD_COND_INITIALIZER;

/* Returns NULL when the caller is first (and must call link_made), else the
 * first name's entry once it exists. */
static struct link *link_claim(dev_t dev, ino_t ino, const char *rel, struct link **mine)
{
	size_t h = ((size_t)ino * 2654435761u ^ (size_t)dev) % LINK_BUCKETS;
	pthread_mutex_lock(&links_mu);
	struct link *l = links[h];
	while (l && !(l->dev == dev && l->ino == ino))
		l = l->next;
	if (!l) {
		l = xmalloc(sizeof *l);
		l->dev = dev;
		l->ino = ino;
		l->rel = xstrdup(rel);
		l->state = L_CREATING;
		l->next = links[h];
		links[h] = l;
		pthread_mutex_unlock(&links_mu);
		*mine = l;
		return NULL;
	}
	while (l->state == L_CREATING && !atomic_load(&C.failed))
		pthread_cond_wait(&links_cv, &links_mu);
	pthread_mutex_unlock(&links_mu);
	*mine = NULL;
	return l;
}

static void link_made(struct link *l, int state)
{
	if (!l)
		return;
	pthread_mutex_lock(&links_mu);
	l->state = state;
	pthread_cond_broadcast(&links_cv);
	pthread_mutex_unlock(&links_mu);
}

/* Wake any waiter when the copy fails, so nobody waits for a name that will
 * never be made. */
static void links_wake(void)
{
	pthread_mutex_lock(&links_mu);
	pthread_cond_broadcast(&links_cv);
	pthread_mutex_unlock(&links_mu);
}

#define STAT_RECORD 41

static void put32(unsigned char *p, uint64_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* One record of the layout described at stat-pairs, below. */
static void put_stat(const struct stat *st, unsigned char *out)
{
	out[0] = S_ISREG(st->st_mode) ? 1 : S_ISLNK(st->st_mode) ? 2 : 3;
#ifdef __APPLE__
	struct timespec ctime = st->st_ctimespec, mtime = st->st_mtimespec;
#else
	struct timespec ctime = st->st_ctim, mtime = st->st_mtim;
#endif
	uint64_t fields[10] = {(uint64_t)ctime.tv_sec, (uint64_t)ctime.tv_nsec,
			       (uint64_t)mtime.tv_sec, (uint64_t)mtime.tv_nsec,
			       (uint64_t)st->st_dev,   (uint64_t)st->st_ino,
			       (uint64_t)st->st_mode,  (uint64_t)st->st_uid,
			       (uint64_t)st->st_gid,   (uint64_t)st->st_size};
	for (int i = 0; i < 10; i++)
		put32(out + 1 + 4 * i, fields[i]);
}

/* Relative paths from stdin, each ended by NUL. */
static char **read_paths(size_t *count)
{
	size_t n = 0, cap = 1024;
	char **paths = xmalloc(cap * sizeof *paths);
	char *line = NULL;
	size_t linecap = 0;
	ssize_t len;
	while ((len = getdelim(&line, &linecap, '\0', stdin)) > 0 && line[len - 1] == '\0') {
		if (n == cap) {
			cap *= 2;
			paths = realloc(paths, cap * sizeof *paths);
			if (!paths)
				oom();
		}
		paths[n++] = xstrdup(line);
	}
	free(line);
	*count = n;
	return paths;
}

/* ---- stat pairs while cloning (clone --stat-pairs) ----
 * The answer the stat-pairs mode (below) would give right after the clone,
 * without looking every path up again: for each regular file made, the
 * source's stat data taken after its bytes were copied (so a change during
 * the copy shows) and the copy's after its last change. Names of files with
 * several links, and anything else, are answered "missing": hmm then lets
 * git read them. */
static struct {
	int on;
	char **paths;
	size_t n;
	size_t *slots; /* open addressing: index + 1; 0 is empty */
	size_t mask;
	unsigned char *out;
} SP;

static size_t sp_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)h;
}

static void sp_load(void)
{
	SP.paths = read_paths(&SP.n);
	size_t size = 1024;
	while (size < 2 * SP.n)
		size *= 2;
	SP.mask = size - 1;
	SP.slots = calloc(size, sizeof *SP.slots);
	SP.out = calloc(SP.n ? 2 * STAT_RECORD * SP.n : 1, 1);
	if (!SP.slots || !SP.out)
		oom();
	for (size_t i = 0; i < SP.n; i++) {
		size_t h = sp_hash(SP.paths[i]) & SP.mask;
		while (SP.slots[h])
			h = (h + 1) & SP.mask;
		SP.slots[h] = i + 1;
	}
	SP.on = 1;
}

/* The index of a relative path in the input, or -1. */
static long sp_find(const char *rel)
{
	for (size_t h = sp_hash(rel) & SP.mask; SP.slots[h]; h = (h + 1) & SP.mask)
		if (strcmp(SP.paths[SP.slots[h] - 1], rel) == 0)
			return (long)(SP.slots[h] - 1);
	return -1;
}

/* A regular file was copied from s to t, its metadata all set. Each path
 * has one slot, written by the one thread that copies it. */
static void sp_note(const char *rel, const char *name, int s, int t, const struct stat *st)
{
	if (!SP.on || st->st_nlink != 1)
		return;
	char *r = rel_join(rel, name);
	long i = sp_find(r);
	free(r);
	struct stat after_src, after_dst;
	if (i < 0 || fstat(s, &after_src) < 0 || fstat(t, &after_dst) < 0)
		return;
	put_stat(&after_src, SP.out + 2 * STAT_RECORD * (size_t)i);
	put_stat(&after_dst, SP.out + 2 * STAT_RECORD * (size_t)i + STAT_RECORD);
}

/* ---- regular files ---- */

static _Thread_local char *rw_buf;
#ifdef __linux__
static _Thread_local dev_t noreflink_dev = (dev_t)-1;
#endif

/* Copy size bytes from s to t: a reflink where the file system shares
 * blocks (nothing is copied), else an in-kernel copy, else read/write.
 * Stops at the size seen by fstat: the clone is a snapshot of that moment. */
static int copy_data(int s, int t, const struct stat *st)
{
	off_t size = st->st_size, done = 0;
	if (size == 0)
		return 0;
#ifdef __linux__
#ifndef FICLONE
#define FICLONE _IOW(0x94, 9, int)
#endif
	if (st->st_dev != noreflink_dev) {
		if (ioctl(t, FICLONE, s) == 0)
			return 0;
		/* Not on this file system: stop asking. Any other refusal
		 * (e.g. btrfs nodatacow) is this file's: copy it instead. */
		if (errno == EOPNOTSUPP || errno == ENOTTY || errno == EXDEV ||
		    errno == ENOSYS)
			noreflink_dev = st->st_dev;
	}
	while (done < size) {
		ssize_t n = copy_file_range(s, NULL, t, NULL, (size_t)(size - done), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (done == 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
					  errno == EOPNOTSUPP || errno == EBADF))
				break; /* read/write below */
			return -1;
		}
		if (n == 0)
			return 0; /* it shrank */
		done += n;
	}
	if (done >= size)
		return 0;
#endif
	if (!rw_buf)
		rw_buf = xmalloc(1 << 17);
	while (done < size) {
		ssize_t n = read(s, rw_buf, 1 << 17);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		if (write_all(t, rw_buf, (size_t)n) < 0)
			return -1;
		done += n;
	}
	return 0;
}

static void copy_entry(struct dopen *d, const struct entry *e);

/* A name of a file with several links: if another name of it was claimed
 * first, this one becomes a hard link to it (once it is made) and the answer
 * is 1; otherwise *mine is this name's claim, to be marked made or skipped. */
static int linked_to_first(struct dopen *d, const char *name, const struct stat *st,
			   struct link **mine)
{
	*mine = NULL;
	if (st->st_nlink <= 1)
		return 0;
	char *r = rel_join(d->node->rel, name);
	struct link *first = link_claim(st->st_dev, st->st_ino, r, mine);
	free(r);
	if (!first)
		return 0;
	if (first->state == L_MADE) {
		if (linkat(C.dst_root, first->rel, d->dfd, name, 0) < 0)
			clone_fail(1, d->node->rel, name, errno);
		else
			atomic_fetch_add(&C.files, 1);
	}
	return 1;
}

/* The source file is open (s) and fstat'ed; make its twin in d. */
static void copy_regular(struct dopen *d, const char *name, int s, const struct stat *st)
{
	const char *rel = d->node->rel;
	struct link *mine;
	if (linked_to_first(d, name, st, &mine)) {
		close(s);
		return;
	}
	/* Made with its final permission bits (umask is 0): no chmod needed
	 * unless set-user-ID and friends must be restored after chown. */
	int t = openat(d->dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY,
		       st->st_mode & 0777);
	if (t < 0) {
		clone_fail(1, rel, name, errno);
		close(s);
		link_made(mine, L_SKIPPED);
		return;
	}
	int side = 1, e = 0;
	if (copy_data(s, t, st) < 0) {
		e = errno;
		side = 0; /* most likely the read; either way, name the source */
	} else if (set_owner(t, NULL, st->st_uid, st->st_gid, 0) < 0 ||
		   ((C.always_chmod || (st->st_mode & 07000)) &&
		    fchmod(t, st->st_mode & 07777) < 0)) {
		e = errno;
	} else {
		struct timespec ts[2] = {ST_ATIM(*st), ST_MTIM(*st)};
		if (futimens(t, ts) < 0)
			e = errno;
		else
			sp_note(rel, name, s, t, st);
	}
	if (close(t) < 0 && !e)
		e = errno; /* e.g. a delayed write error */
	close(s);
	if (e) {
		clone_fail(side, rel, name, e);
		link_made(mine, L_SKIPPED);
		return;
	}
	atomic_fetch_add(&C.files, 1);
	atomic_fetch_add(&C.bytes, (unsigned long long)st->st_size);
	link_made(mine, L_MADE);
}

/* ---- directories ---- */

static void run_dir(struct dnode *node, int sfd, int dfd);

/* A subdirectory: make it now (so its parent's entries are all there when
 * the parent is finished) and read it now or later. */
static void copy_subdir(struct dopen *d, const char *name, int sfd, const struct stat *st)
{
	const char *rel = d->node->rel;
	if (st->st_dev == C.dst_dev && st->st_ino == C.dst_ino) {
		close(sfd);
		clone_fail(0, rel, name, 0);
		return;
	}
	if (mkdirat(d->dfd, name, 0700) < 0) {
		clone_fail(1, rel, name, errno);
		close(sfd);
		return;
	}
	int dfd = openat(d->dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		clone_fail(1, rel, name, errno);
		close(sfd);
		return;
	}
	struct dnode *n = xmalloc(sizeof *n);
	n->parent = d->node;
	atomic_init(&n->pending, 1);
	n->rel = rel_join(rel, name);
	n->mode = st->st_mode;
	n->uid = st->st_uid;
	n->gid = st->st_gid;
	n->times[0] = ST_ATIM(*st);
	n->times[1] = ST_MTIM(*st);
	atomic_fetch_add(&d->node->pending, 1);
	if (atomic_load(&C.queued) < C.queue_limit) {
		struct job *j = xmalloc(sizeof *j);
		memset(j, 0, sizeof *j);
		j->node = n;
		j->sfd = sfd;
		j->dfd = dfd;
		push(j);
	} else {
		/* Queued directories hold descriptors; past the limit, do it
		 * here and now (depth first) instead. */
		run_dir(n, sfd, dfd);
	}
}

/* Everything that is not a directory or a regular file. */
static void copy_special(struct dopen *d, const char *name, const struct stat *st)
{
	const char *rel = d->node->rel;
	if (S_ISSOCK(st->st_mode)) {
		/* A socket is only a name without its server; cp -a remakes it,
		 * hmm leaves it out and says so. */
		clone_note("socket", rel, name);
		return;
	}
	struct link *mine;
	if (linked_to_first(d, name, st, &mine))
		return;
	int r = 0, is_link = S_ISLNK(st->st_mode);
	if (is_link) {
		size_t cap = (size_t)st->st_size + 2;
		char *target;
		ssize_t n;
		for (;;) {
			target = xmalloc(cap);
			n = readlinkat(d->sfd, name, target, cap);
			if (n < 0 || (size_t)n < cap)
				break;
			free(target); /* it grew since lstat: try again bigger */
			cap *= 2;
		}
		if (n < 0) {
			clone_fail(0, rel, name, errno);
			free(target);
			link_made(mine, L_SKIPPED);
			return;
		}
		target[n] = '\0';
		r = symlinkat(target, d->dfd, name);
		free(target);
	} else if (S_ISFIFO(st->st_mode) || S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) {
#ifdef __linux__
		r = mknodat(d->dfd, name, (st->st_mode & S_IFMT) | (st->st_mode & 0777),
			    S_ISFIFO(st->st_mode) ? 0 : st->st_rdev);
#else
		/* macOS: no mknodat before 13; this is rare enough for a path. */
		char *rr = rel_join(rel, name);
		char *p = path_join(C.dst, rr);
		r = S_ISFIFO(st->st_mode) ? mkfifo(p, st->st_mode & 0777)
					  : mknod(p, (st->st_mode & S_IFMT) | (st->st_mode & 0777),
						  st->st_rdev);
		free(p);
		free(rr);
#endif
		if (r < 0 && errno == EPERM && !S_ISFIFO(st->st_mode)) {
			/* Only root may make devices; cp -a fails here, hmm goes on. */
			clone_note("device", rel, name);
			link_made(mine, L_SKIPPED);
			return;
		}
	} else {
		clone_note("file of unknown type", rel, name);
		link_made(mine, L_SKIPPED);
		return;
	}
	if (r < 0) {
		clone_fail(1, rel, name, errno);
		link_made(mine, L_SKIPPED);
		return;
	}
	struct timespec ts[2] = {ST_ATIM(*st), ST_MTIM(*st)};
	/* A link's mode cannot be set on Linux (and is not looked at). */
	if (set_owner(d->dfd, name, st->st_uid, st->st_gid, 0) < 0 ||
	    (!is_link && (C.always_chmod || (st->st_mode & 07000)) &&
	     fchmodat(d->dfd, name, st->st_mode & 07777, 0) < 0) ||
	    utimensat(d->dfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0) {
		clone_fail(1, rel, name, errno);
		link_made(mine, L_SKIPPED);
		return;
	}
	atomic_fetch_add(&C.files, 1);
	link_made(mine, L_MADE);
}

static void copy_entry(struct dopen *d, const struct entry *e)
{
	const char *name = e->name;
	int noatime = atomic_load(&C.noatime) ? O_NOATIME : 0;
	struct stat st;
	/* Regular files and directories are opened first and fstat'ed, so what
	 * is copied is what was looked at, even if the name changes meanwhile.
	 * O_NOFOLLOW|O_NONBLOCK: a name that became a link or a FIFO since
	 * readdir is neither followed nor waited on. */
	if (e->type == DT_REG || e->type == DT_DIR) {
		int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
			    (e->type == DT_DIR ? O_DIRECTORY : 0);
		int s = openat(d->sfd, name, flags | noatime);
		if (s < 0 && errno == EPERM && noatime) {
			/* O_NOATIME is for files we own; keep atimes where we can. */
			atomic_store(&C.noatime, 0);
			s = openat(d->sfd, name, flags);
		}
		if (s >= 0) {
			if (fstat(s, &st) < 0) {
				clone_fail(0, d->node->rel, name, errno);
				close(s);
				return;
			}
			if (S_ISREG(st.st_mode) && e->type == DT_REG) {
				copy_regular(d, name, s, &st);
				return;
			}
			if (S_ISDIR(st.st_mode) && e->type == DT_DIR) {
				copy_subdir(d, name, s, &st);
				return;
			}
			close(s);
		} else if (errno != ELOOP && errno != ENOTDIR && errno != ENXIO) {
			clone_fail(0, d->node->rel, name, errno);
			return;
		}
		/* it changed type since readdir: look again below */
	}
	if (fstatat(d->sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		clone_fail(0, d->node->rel, name, errno);
		return;
	}
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
		struct entry again = {.name = e->name, .type = S_ISREG(st.st_mode) ? DT_REG : DT_DIR};
		if (e->type == again.type) {
			/* opened as one type, now another, twice: give up */
			clone_fail(0, d->node->rel, name, EAGAIN);
			return;
		}
		copy_entry(d, &again);
		return;
	}
	copy_special(d, name, &st);
}

static void run_chunk(struct dopen *d, size_t from, size_t to)
{
	for (size_t i = from; i < to && !atomic_load(&C.failed); i++)
		copy_entry(d, &d->ents[i]);
}

/* Read a directory whole, then hand out its entries in chunks. */
static void run_dir(struct dnode *node, int sfd, int dfd)
{
	if (atomic_load(&C.failed)) {
		close(sfd);
		close(dfd);
		release(node);
		return;
	}
	DIR *sdir = fdopendir(sfd);
	if (!sdir) {
		clone_fail(0, node->rel, NULL, errno);
		close(sfd);
		close(dfd);
		release(node);
		return;
	}
	struct dopen *d = xmalloc(sizeof *d);
	d->sdir = sdir;
	d->sfd = sfd;
	d->dfd = dfd;
	d->node = node;
	size_t cap = 64, ncap = 4096, used = 0, n = 0;
	size_t *offs = xmalloc(cap * sizeof *offs);
	unsigned char *types = xmalloc(cap);
	d->names = xmalloc(ncap);
	struct dirent *de;
	errno = 0;
	while ((de = readdir(sdir)) != NULL) {
		const char *nm = de->d_name;
		if (nm[0] == '.' && (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0')))
			continue;
		size_t len = strlen(nm) + 1;
		if (used + len > ncap) {
			while (used + len > ncap)
				ncap *= 2;
			d->names = realloc(d->names, ncap);
		}
		if (n == cap) {
			cap *= 2;
			offs = realloc(offs, cap * sizeof *offs);
			types = realloc(types, cap);
		}
		if (!d->names || !offs || !types)
			oom();
		memcpy(d->names + used, nm, len);
		offs[n] = used;
		types[n] = de->d_type;
		used += len;
		n++;
		errno = 0;
	}
	if (errno) {
		clone_fail(0, node->rel, NULL, errno);
		n = 0;
	}
	/* Names moved while growing; pointers are made once reading is done. */
	d->ents = xmalloc((n ? n : 1) * sizeof *d->ents);
	for (size_t i = 0; i < n; i++) {
		d->ents[i].name = d->names + offs[i];
		d->ents[i].type = types[i];
	}
	free(offs);
	free(types);
	d->nents = n;

	size_t chunks = n <= CHUNK ? 1 : (n + CHUNK - 1) / CHUNK;
	atomic_init(&d->refs, (int)chunks);
	atomic_fetch_add(&node->pending, (long)chunks - 1);
	for (size_t c = 1; c < chunks; c++) {
		struct job *j = xmalloc(sizeof *j);
		memset(j, 0, sizeof *j);
		j->dir = d;
		j->from = c * CHUNK;
		j->to = c + 1 == chunks ? n : (c + 1) * CHUNK;
		push(j);
	}
	run_chunk(d, 0, chunks == 1 ? n : CHUNK);
	dopen_put(d);
	release(node);
}

static void *worker(void *arg)
{
	(void)arg;
	struct job *j;
	while ((j = pop()) != NULL) {
		if (j->dir) {
			struct dnode *node = j->dir->node;
			run_chunk(j->dir, j->from, j->to);
			dopen_put(j->dir);
			release(node);
		} else {
			run_dir(j->node, j->sfd, j->dfd);
		}
		free(j);
	}
	/* Leaving on failure: whoever waits for a hard link's first name must
	 * not wait for ever. */
	if (atomic_load(&C.failed))
		links_wake();
	return NULL;
}

static void progress(void)
{
	static unsigned long long last_files = ~0ULL, last_bytes = ~0ULL;
	if (C.progress_fd < 0)
		return;
	unsigned long long f = atomic_load(&C.files), b = atomic_load(&C.bytes);
	if (f == last_files && b == last_bytes)
		return;
	last_files = f;
	last_bytes = b;
	char line[64];
	int n = snprintf(line, sizeof line, "P %llu %llu\n", f, b);
	if (write_all(C.progress_fd, line, (size_t)n) < 0)
		C.progress_fd = -1; /* nobody listens any more; carry on */
}

#define CLONE_USAGE "usage: hmm-helper clone [--threads N] [--progress-fd N] [--stat-pairs] SRC DST\n"

static int cmd_clone(int argc, char **argv)
{
	long threads = 0;
	int stat_pairs = 0;
	C.progress_fd = -1;
	int i = 2;
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strncmp(argv[i], "--", 2) != 0)
			break;
		if (strcmp(argv[i], "--stat-pairs") == 0) {
			stat_pairs = 1;
			continue;
		}
		if (i + 1 >= argc) {
			fputs(CLONE_USAGE, stderr);
			return 2;
		}
		if (strcmp(argv[i], "--threads") == 0) {
			threads = parse_num(argv[++i], 1, 64);
			if (threads < 0) {
				fputs("hmm-helper: --threads takes 1 to 64\n" CLONE_USAGE, stderr);
				return 2;
			}
		} else if (strcmp(argv[i], "--progress-fd") == 0) {
			long fd = parse_num(argv[++i], 0, INT_MAX);
			if (fd < 0 || fcntl((int)fd, F_GETFD) < 0) {
				fputs("hmm-helper: --progress-fd needs an open descriptor\n" CLONE_USAGE,
				      stderr);
				return 2;
			}
			C.progress_fd = (int)fd;
		} else {
			fputs(CLONE_USAGE, stderr);
			return 2;
		}
	}
	if (argc - i != 2) {
		fputs(CLONE_USAGE, stderr);
		return 2;
	}
	C.src = argv[i];
	C.dst = argv[i + 1];
	if (stat_pairs)
		sp_load();
	if (threads == 0) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		threads = cpus < 2 ? 2 : cpus > 4 ? 4 : cpus;
	}
	C.nthreads = (int)threads;

	signal(SIGPIPE, SIG_IGN); /* a closed progress pipe is not fatal */
	umask(0);		  /* creation modes are exactly the source's */
	C.euid = geteuid();
	C.egid = getegid();
	atomic_init(&C.noatime, O_NOATIME != 0);

	/* Many directories may be open at once (two descriptors each while
	 * queued): take all the descriptors we are allowed. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rlim_t want = rl.rlim_max > (rlim_t)(1 << 20) ? (rlim_t)(1 << 20) : rl.rlim_max;
			if (want > rl.rlim_cur) {
				rl.rlim_cur = want;
				if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
					getrlimit(RLIMIT_NOFILE, &rl);
			}
		}
		long lim = rl.rlim_cur == RLIM_INFINITY ? (1 << 20) : (long)rl.rlim_cur;
		C.queue_limit = (lim - 64) / 4;
	} else {
		C.queue_limit = 200;
	}
	if (C.queue_limit < 16)
		C.queue_limit = 16;
	if (C.queue_limit > 4096)
		C.queue_limit = 4096;

	int sfd = open(C.src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOATIME);
	if (sfd < 0 && errno == EPERM && O_NOATIME) {
		atomic_store(&C.noatime, 0);
		sfd = open(C.src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (sfd < 0) {
		clone_fail(0, ".", NULL, errno);
		return 1;
	}
	struct stat st;
	if (fstat(sfd, &st) < 0) {
		clone_fail(0, ".", NULL, errno);
		return 1;
	}
	/* DST must be new: we never merge into (or clobber) a directory. 0700
	 * until its contents are done; chmod also drops a setgid bit inherited
	 * from DST's parent, which would otherwise hand its group to every
	 * file we make. */
	if (mkdir(C.dst, 0700) < 0) {
		clone_fail(1, ".", NULL, errno);
		return 1;
	}
	int dfd = open(C.dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fchmod(dfd, 0700) < 0) {
		clone_fail(1, ".", NULL, errno);
		return 1;
	}
	struct stat dst_st;
	if (fstat(dfd, &dst_st) < 0) {
		clone_fail(1, ".", NULL, errno);
		return 1;
	}
	C.dst_dev = dst_st.st_dev;
	C.dst_ino = dst_st.st_ino;
	C.dst_root = dup(dfd);
	if (C.dst_root < 0) {
		clone_fail(1, ".", NULL, errno);
		return 1;
	}
#ifdef __linux__
	/* A default ACL above DST decides creation modes instead of umask;
	 * then every mode is set explicitly. */
	if (fgetxattr(dfd, "system.posix_acl_default", NULL, 0) >= 0)
		C.always_chmod = 1;
#else
	C.always_chmod = 1;
#endif

	struct dnode *root = xmalloc(sizeof *root);
	root->parent = NULL;
	atomic_init(&root->pending, 1);
	root->rel = xstrdup(".");
	root->mode = st.st_mode;
	root->uid = st.st_uid;
	root->gid = st.st_gid;
	root->times[0] = ST_ATIM(st);
	root->times[1] = ST_MTIM(st);
	struct job *j = xmalloc(sizeof *j);
	memset(j, 0, sizeof *j);
	j->node = root;
	j->sfd = sfd;
	j->dfd = dfd;
	push(j);

	pthread_t *tids = xmalloc(sizeof *tids * (size_t)C.nthreads);
	int started = 0;
	for (int t = 0; t < C.nthreads; t++) {
		if (pthread_create(&tids[t], NULL, worker, NULL) != 0)
			break;
		started++;
	}
	if (started == 0) {
		fputs("hmm: clone: cannot start a thread\n", stderr);
		return 1;
	}
	if (started < C.nthreads) {
		/* Fewer threads than asked: the "everyone is idle" count must
		 * match the ones that run. */
		pthread_mutex_lock(&C.mu);
		C.nthreads = started;
		pthread_mutex_unlock(&C.mu);
	}

	/* This thread reports progress about every 100 ms until done. */
	pthread_mutex_lock(&C.mu);
	while (!C.done) {
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_nsec += 100 * 1000 * 1000;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&C.done_cv, &C.mu, &dl);
		if (!C.done) {
			pthread_mutex_unlock(&C.mu);
			progress();
			pthread_mutex_lock(&C.mu);
		}
	}
	pthread_mutex_unlock(&C.mu);
	for (int t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	progress();
	if (atomic_load(&C.failed))
		return 1;
	if (SP.on) {
		size_t bytes = 2 * STAT_RECORD * SP.n;
		if (fwrite(SP.out, 1, bytes, stdout) != bytes || fflush(stdout) != 0) {
			fputs("hmm: clone: cannot write the stat pairs\n", stderr);
			return 1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------ */


/* ------------------------------------------------------------------------
 * stat-pairs: the stat data of the same relative paths under two roots.
 *
 * hmm gives the workspace's first index the clone's stat data wherever the
 * origin's file provably did not change since git hashed it; that needs two
 * lstat calls for every file of the tree, which from Node cost ~4.5 us each
 * (about a second for 100,000 files). Here they are plain fstatat calls.
 *
 * Input: relative paths on stdin, each ended by NUL. Output: for each path
 * two records (ROOT_A's, then ROOT_B's) of 41 bytes: a kind byte (0 missing,
 * 1 regular file, 2 symbolic link, 3 anything else), then ctime s, ctime ns,
 * mtime s, mtime ns, dev, ino, mode, uid, gid, size as big-endian 32-bit
 * words (low bits), the layout of git's index. Links are not followed.
 * The same root twice is looked at once (both records alike).
 * ------------------------------------------------------------------------ */

static void stat_record(int root, const char *rel, unsigned char *out)
{
	struct stat st;
	memset(out, 0, STAT_RECORD);
	if (fstatat(root, rel, &st, AT_SYMLINK_NOFOLLOW) == 0)
		put_stat(&st, out);
}

struct stat_job {
	int roots[2];
	int same_root;
	char **paths;
	size_t from, to;
	unsigned char *out;
};

static void *stat_worker(void *arg)
{
	struct stat_job *job = arg;
	for (size_t i = job->from; i < job->to; i++) {
		/* Relative paths only: an absolute one would escape both roots. */
		const char *rel = job->paths[i][0] == '/' ? "" : job->paths[i];
		unsigned char *out = job->out + 2 * STAT_RECORD * i;
		stat_record(job->roots[0], rel, out);
		if (job->same_root)
			memcpy(out + STAT_RECORD, out, STAT_RECORD);
		else
			stat_record(job->roots[1], rel, out + STAT_RECORD);
	}
	return NULL;
}

static int cmd_stat_pairs(int argc, char **argv)
{
	if (argc != 4) {
		fputs("usage: hmm-helper stat-pairs ROOT_A ROOT_B < NUL-separated paths\n", stderr);
		return 2;
	}
	struct stat_job base = {0};
	base.same_root = strcmp(argv[2], argv[3]) == 0;
	for (int i = 0; i < 2; i++) {
		base.roots[i] = open(argv[2 + i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (base.roots[i] < 0) {
			fprintf(stderr, "hmm-helper: %s: %s\n", argv[2 + i], strerror(errno));
			return 1;
		}
	}
	/* All paths first, then the lookups from two threads: the kernel's path
	 * walk is most of the cost, and it runs in parallel. */
	size_t n;
	base.paths = read_paths(&n);
	base.out = xmalloc(n * 2 * STAT_RECORD + 1);
	struct stat_job halves[2] = {base, base};
	halves[0].from = 0;
	halves[0].to = halves[1].from = n / 2;
	halves[1].to = n;
	pthread_t other;
	int threaded = n > 1000 && pthread_create(&other, NULL, stat_worker, &halves[1]) == 0;
	stat_worker(&halves[0]);
	if (threaded)
		pthread_join(other, NULL);
	else
		stat_worker(&halves[1]);
	size_t bytes = n * 2 * STAT_RECORD;
	if (fwrite(base.out, 1, bytes, stdout) != bytes)
		return 1;
	return fflush(stdout) == 0 ? 0 : 1;
}

static void usage(void)
{
	fputs("usage: hmm-helper abi\n"
	      "       hmm-helper locked FILE...\n"
	      "       hmm-helper exec --lock FILE [--report-fd N] [--read PATH]... [--write PATH]...\n"
	      "                       [--dev PATH]... [--hide PATH]... -- CMD [ARG...]\n"
	      "       hmm-helper clone [--threads N] [--progress-fd N] [--stat-pairs] SRC DST\n"
	      "       hmm-helper stat-pairs ROOT_A ROOT_B < NUL-separated paths\n",
	      stderr);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage();
		return 2;
	}
	if (strcmp(argv[1], "abi") == 0)
		return cmd_abi(argc, argv);
	if (strcmp(argv[1], "locked") == 0)
		return cmd_locked(argc, argv);
	if (strcmp(argv[1], "exec") == 0)
		return cmd_exec(argc, argv);
	if (strcmp(argv[1], "clone") == 0)
		return cmd_clone(argc, argv);
	if (strcmp(argv[1], "stat-pairs") == 0)
		return cmd_stat_pairs(argc, argv);
	usage();
	return 2;
}
