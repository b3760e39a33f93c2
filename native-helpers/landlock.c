/*
 * Landlock: the file rules of the sandbox (rights are only ever granted, so
 * anything this file forgets to grant stays denied), and the abi mode, which
 * tells the TS side which Landlock ABI the kernel offers so it can refuse to
 * run (and say why) before it makes a workspace.
 */
#include "hmm-helper.h"

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
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
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
int landlock_abi(void)
{
	long v = syscall(__NR_landlock_create_ruleset, NULL, 0,
			 LANDLOCK_CREATE_RULESET_VERSION);
	return v < 0 ? 0 : (int)v;
}
#else
int landlock_abi(void)
{
	return 0;
}
#endif

#ifdef __linux__

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
static void add_rule_on(int fd, mode_t mode, uint64_t rights, const char *path, int strict)
{
	if (!S_ISDIR(mode))
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

/* add_rule_on, the object's type read from fd. */
static void add_rule(int fd, uint64_t rights, const char *path, int strict)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		if (strict)
			setup_fail("cannot stat %s: %s", path, strerror(errno));
		return;
	}
	add_rule_on(fd, st.st_mode, rights, path, strict);
}

/* What a grant of class cls leaves out: the hidden paths (unless hides is
 * 0), and for a grant that writes, the read-only and plain-only ones (the
 * read grant still covers those). */
static int left_out(const char *p, int cls, int hides)
{
	for (size_t i = 0; hides && i < policy->nhides; i++)
		if (strcmp(policy->hides[i], p) == 0)
			return 1;
	for (size_t i = 0; cls != CLASS_READ && i < policy->nread_only; i++)
		if (strcmp(policy->read_only[i], p) == 0)
			return 1;
	for (size_t i = 0; cls != CLASS_READ && i < policy->nplain_only; i++)
		if (strcmp(policy->plain_only[i], p) == 0)
			return 1;
	return 0;
}

/* Whether a hidden or read-only path lies beneath p. */
static int closed_beneath(const char *p, int cls, int hides)
{
	for (size_t i = 0; hides && i < policy->nhides; i++)
		if (strictly_beneath(policy->hides[i], p))
			return 1;
	for (size_t i = 0; cls != CLASS_READ && i < policy->nread_only; i++)
		if (strictly_beneath(policy->read_only[i], p))
			return 1;
	return 0;
}

static int leaves_out_beneath(const char *p, int cls, int hides)
{
	if (closed_beneath(p, cls, hides))
		return 1;
	for (size_t i = 0; cls != CLASS_READ && i < policy->nplain_only; i++)
		if (strictly_beneath(policy->plain_only[i], p))
			return 1;
	return 0;
}

/* What a directory of a grant that writes keeps for itself when only
 * plain-only places lie beneath it, so new entries can still be made in
 * it (a tool's first run makes its directory in ~/.cache): plain files and
 * directories, written, truncated, replaced within their directory. Not
 * sockets, links or FIFOs (what a program outside would connect to, or be
 * led by to one elsewhere), not REMOVE_DIR (an entry granted whole,
 * renamed to a plain-only place's name, would take its rights there), not
 * REFER (nothing made elsewhere is moved in). Beneath, everything not
 * granted whole, the plain-only places and what is made new, gets these. */
#define PLAIN_RIGHTS                                                           \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |           \
	 LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |         \
	 LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |           \
	 LANDLOCK_ACCESS_FS_REMOVE_FILE)

/* Rights are granted, never denied, so a path left out beneath a grant is
 * cut out by granting, instead of the directory, each of its entries that
 * is neither left out nor above something left out, and walking down into
 * those that are above. The directories on the way down get no rule
 * themselves: files made in them later are not readable (or, for a grant
 * that writes, not writable), which errs on the safe side; but for a grant
 * that writes where only plain-only places lie beneath, which get
 * PLAIN_RIGHTS. */
static void walk_around(int dfd, const char *path, uint64_t rights, int cls, int hides)
{
	if (cls != CLASS_READ && !closed_beneath(path, cls, hides))
		add_rule(dfd, rights & PLAIN_RIGHTS, path, 0);
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
		if (left_out(child, cls, hides)) {
			/* gets nothing from this grant */
		} else if (leaves_out_beneath(child, cls, hides)) {
			int cfd = openat(dirfd(d), e->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd >= 0)
				walk_around(cfd, child, rights, cls, hides);
		} else {
			/* O_NOFOLLOW: a link here (say ~/keys -> ~/.ssh) must not
			 * carry the grant to its target; links get no rule, their
			 * targets are judged where they really are. */
			int cfd = openat(dirfd(d), e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (cfd >= 0) {
				struct stat st;
				if (fstat(cfd, &st) == 0 && !S_ISLNK(st.st_mode))
					add_rule_on(cfd, st.st_mode, rights, child, 0);
				close(cfd);
			}
		}
		free(child);
	}
	closedir(d);
}

/* A grant's path is opened after the namespaces' mounts, so that a rule on
 * /tmp or a cache lands on the command's own (a rule on the directory
 * beneath a mount does not reach what is mounted over it), and so through
 * no link (util.c open_no_links): a grant inside such a place (a $TMPDIR
 * under /tmp, -w ~/.cache/pip) names what the command left there in an
 * earlier run. A path not there as named grants nothing: caches like
 * ~/.cargo need not exist; a link met on the way (ELOOP) leads somewhere
 * hmm never meant; a grant inside the command's own place adds nothing to
 * the grant on the place itself. /dev/ptmx is one, a link to pts/ptmx in
 * the command's /dev, which the grant on /dev/pts covers. */
static int open_grant(const char *path, int flags)
{
	int fd = open_no_links(path, flags);
	if (fd < 0 && errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
		setup_fail("cannot open %s: %s", path, strerror(errno));
	return fd;
}

static void grant(const struct grant *g)
{
	uint64_t rights = class_rights(g->cls);
	/* A cache whose layer whites out the hidden paths beneath it holds
	 * none of them (isolate.c): granted whole, so that new entries can be
	 * made directly in it. */
	int hides = !isolate_sealed(g->path);
	if (!leaves_out_beneath(g->path, g->cls, hides)) {
		int fd = open_grant(g->path, O_PATH);
		if (fd < 0)
			return;
		add_rule(fd, rights, g->path, 1);
		close(fd);
		return;
	}
	int fd = open_grant(g->path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return;
	walk_around(fd, g->path, rights, g->cls, hides);
}

/* The command's own terminal, as a device, whatever name reaches it: in its
 * namespaces the user's /dev/pts is not mounted, yet /dev/stdout or
 * /proc/self/fd/1 opens the terminal again (scripts write to /dev/stderr).
 * The rule is on the terminal's own node, so no other terminal comes with it. */
static void grant_own_terminal(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (isatty(fd))
			add_rule(fd, class_rights(CLASS_DEV), "the terminal", 0);
}

void landlock_confine(const struct exec_opts *o)
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
		 * (hmm, the user's shell, other workspaces), nor connect to an
		 * abstract unix socket made outside it (a session's D-Bus or
		 * X11 socket, an agent's): they have no file for Landlock's
		 * file rules to see. Its own abstract sockets still work. */
		attr.scoped = LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
		size = 24;
	}
	ruleset_fd = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
	if (ruleset_fd < 0)
		setup_fail("cannot create a Landlock ruleset: %s", strerror(errno));

	for (size_t i = 0; i < o->ngrants; i++)
		grant(&o->grants[i]);
	grant_own_terminal();

	/* Required by landlock_restrict_self for an unprivileged process, and
	 * wanted anyway: no set-user-ID program can regain what we drop. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		setup_fail("cannot set no_new_privs: %s", strerror(errno));
	if (syscall(__NR_landlock_restrict_self, ruleset_fd, 0) < 0)
		setup_fail("cannot enforce the Landlock ruleset: %s", strerror(errno));
	close(ruleset_fd);
}
#endif /* __linux__ */
