/*
 * remove: delete a workspace's directory while a process it left behind may
 * still be changing it.
 *
 *   hmm-helper remove DIR
 *
 * Where it stands on security: a path is looked up again at every use, so a
 * remover that goes by paths (Node's rmSync: lstat "a", then unlink "a/x")
 * deletes outside the tree when "a" becomes a link to a directory outside
 * between the two. Here every name is used relative to the descriptor of the
 * directory that holds it, the way systemd's rm-rf.c and GNU rm (fts with
 * FTS_PHYSICAL) do:
 *  - a directory is opened O_NOFOLLOW|O_DIRECTORY and its device and inode
 *    checked against those seen before, so a link swapped in is never
 *    followed, only unlinked, and a directory swapped in is never mistaken
 *    for the one we looked at;
 *  - entries go by unlinkat() relative to that descriptor, which keeps
 *    naming the same directory whatever is renamed above it;
 *  - nothing on another file system is entered (a mount point is reported,
 *    left alone);
 *  - a directory the owner cannot read or write (0555, 0000: overlayfs makes
 *    such work directories) gets the owner's rights on the checked
 *    descriptor before it is emptied, never by name.
 * Descriptors stay bounded whatever the depth: past KEEP_OPEN levels the
 * oldest are closed and later reopened through "..", checked again. Paths
 * are never built for system calls, so depth beyond PATH_MAX is fine.
 *
 * DIR missing is success. The first failure is printed on stderr as
 * "hmm-helper: remove: PATH: reason"; the rest is still removed as far as it
 * can be, and the exit status is EXIT_NOT_REMOVED.
 */

#include "hmm-helper.h"

/* Directory descriptors kept open at once (the anchor not counted). */
#define KEEP_OPEN 64
/* How often one name may change under us before we give up on it. */
#define MAX_TRIES 1000
/* How often a directory may gain entries while being emptied. */
#define MAX_PASSES 64

struct level {
	int fd; /* -1 while closed to keep descriptors bounded */
	dev_t dev;
	ino_t ino;
	char *name; /* its name in the level above */
	char **names; /* its entries as last read */
	size_t count, next;
	int passes;
	int tries; /* changes seen for this name so far */
	int failed; /* something in it could not be removed */
};

static struct level *levels;
static size_t depth, cap;
static const char *top_path; /* DIR as given: how messages start */
static dev_t top_dev;
static int failures;

/* Notes a failure at NAME in the top level (at the top level itself if
 * NAME is NULL); prints the first, as DIR/a/b/NAME. The directories it is
 * in are then known to stay, so they are not read again. */
static void fail_at(const char *name, const char *reason)
{
	for (size_t i = 1; i < depth; i++)
		levels[i].failed = 1;
	if (failures++ > 0)
		return;
	fprintf(stderr, "hmm-helper: remove: %s", top_path);
	for (size_t i = 2; i < depth; i++)
		fprintf(stderr, "/%s", levels[i].name);
	if (name && depth > 1)
		fprintf(stderr, "/%s", name);
	fprintf(stderr, ": %s\n", reason);
}

static void free_names(struct level *l)
{
	for (size_t i = 0; i < l->count; i++)
		free(l->names[i]);
	free(l->names);
	l->names = NULL;
	l->count = l->next = 0;
}

/* Reads the entries of the top level through its descriptor. 0 or -1. */
static int read_names(struct level *l)
{
	free_names(l);
	int fd = dup(l->fd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* The duplicate shares the offset: start from the beginning. */
	rewinddir(d);
	size_t room = 0;
	for (;;) {
		errno = 0;
		struct dirent *e = readdir(d);
		if (!e)
			break;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (l->count == room) {
			room = room ? room * 2 : 16;
			l->names = realloc(l->names, room * sizeof *l->names);
			if (!l->names)
				oom();
		}
		l->names[l->count++] = xstrdup(e->d_name);
	}
	int e = errno;
	closedir(d);
	errno = e;
	return e ? -1 : 0;
}

/* The level below the top open again (reached from the top by "..", and
 * checked to be the directory it was), or -1 if it was moved away. */
static int reopen_below(void)
{
	struct level *below = &levels[depth - 2];
	if (below->fd >= 0)
		return 0;
	int fd = openat(levels[depth - 1].fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == below->dev && st.st_ino == below->ino) {
		below->fd = fd;
		return 0;
	}
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Opens the directory NAME in DFD as a directory that is not a link, and
 * only if it is still the one lstat'd as ST. Gives the owner read, write
 * and search on it if it lacked them. -1 with errno: ELOOP/ENOTDIR/ESTALE
 * (it changed: look again) or a real failure. */
static int open_checked(int dfd, const char *name, const struct stat *st)
{
	int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
	int fd = openat(dfd, name, flags);
#ifdef O_PATH
	if (fd < 0 && errno == EACCES) {
		/* No read right: open without reading, check it, and change the
		 * mode of what is open, not of whatever the name means by then
		 * (a file hard-linked from outside, say). fchmod does not take
		 * an O_PATH descriptor; its /proc/self/fd name does. */
		int pfd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (pfd < 0)
			return -1;
		struct stat now;
		if (fstat(pfd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
			close(pfd);
			errno = ESTALE;
			return -1;
		}
		char proc[64];
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", pfd);
		int r = chmod(proc, (now.st_mode & 07777) | 0700);
		int e = errno;
		close(pfd);
		if (r < 0) {
			errno = e == ENOENT ? EACCES : e;
			return -1;
		}
		fd = openat(dfd, name, flags);
	}
#else
	if (fd < 0 && errno == EACCES) {
		/* Without O_PATH (macOS) the mode is changed by name, not
		 * following a link; the open below still checks what it got. */
		if (fchmodat(dfd, name, (st->st_mode & 07777) | 0700, AT_SYMLINK_NOFOLLOW) < 0)
			return -1;
		fd = openat(dfd, name, flags);
	}
#endif
	if (fd < 0)
		return -1;
	struct stat now;
	if (fstat(fd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	/* Emptying needs write and search; the directory goes anyway. If
	 * this fails, unlinkat says why. */
	if ((now.st_mode & 0700) != 0700)
		(void)fchmod(fd, (now.st_mode & 07777) | 0700);
	return fd;
}

static void push_level(int fd, const struct stat *st, const char *name, int tries)
{
	if (depth == cap) {
		cap = cap ? cap * 2 : 64;
		levels = realloc(levels, cap * sizeof *levels);
		if (!levels)
			oom();
	}
	/* Level 0 (DIR's parent) stays open: it is where we started. */
	if (depth > KEEP_OPEN && levels[depth - KEEP_OPEN].fd >= 0) {
		close(levels[depth - KEEP_OPEN].fd);
		levels[depth - KEEP_OPEN].fd = -1;
	}
	levels[depth++] = (struct level){
		.fd = fd, .dev = st->st_dev, .ino = st->st_ino, .name = xstrdup(name), .tries = tries,
	};
}

/* Removes NAME from the top level: unlinks it, or opens it and pushes it as a level,
 * to be emptied, then removed by finish(). */
static void remove_entry(const char *name, int tries)
{
	struct level *l = &levels[depth - 1];
	for (; tries < MAX_TRIES; tries++) {
		struct stat st;
		if (fstatat(l->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				fail_at(name, strerror(errno));
			return;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (unlinkat(l->fd, name, 0) == 0 || errno == ENOENT)
				return;
			/* EISDIR: it was a directory as it was unlinked (a racing
			 * process made it one), whatever it is by now (the very
			 * file seen, put back): look again, and remove a directory
			 * as one, inside the tree. macOS says EPERM for it, which a
			 * file can say of its own: there only a change seen now
			 * tells, else it is a failure of its own. */
			int e = errno;
			if (e == EISDIR)
				continue;
			struct stat now;
			int r = fstatat(l->fd, name, &now, AT_SYMLINK_NOFOLLOW);
			if (r < 0 && errno == ENOENT)
				return;
			if (r == 0 && (now.st_dev != st.st_dev || now.st_ino != st.st_ino))
				continue;
			fail_at(name, strerror(e));
			return;
		}
		if (depth == 1)
			top_dev = st.st_dev;
		else if (st.st_dev != top_dev) {
			fail_at(name, "on another file system (a mount point?), left alone");
			return;
		}
		int fd = open_checked(l->fd, name, &st);
		if (fd >= 0) {
			push_level(fd, &st, name, tries);
			if (read_names(&levels[depth - 1]) < 0)
				fail_at(NULL, strerror(errno));
			return;
		}
		if (errno != ELOOP && errno != ENOTDIR && errno != ESTALE && errno != ENOENT) {
			fail_at(name, strerror(errno));
			return;
		}
	}
	fail_at(name, "kept changing while being removed");
}

/* The top level is empty as far as we know: remove it from the level
 * below, or read it again if something was added meanwhile. 0, or -1 if
 * the levels below cannot be reached safely any more. */
static int finish(void)
{
	struct level *l = &levels[depth - 1];
	if (reopen_below() < 0) {
		fail_at(NULL, "moved while being removed; stopped there");
		return -1;
	}
	struct level *below = &levels[depth - 2];
	for (;;) {
		if (unlinkat(below->fd, l->name, AT_REMOVEDIR) == 0 || errno == ENOENT)
			goto done;
		int e = errno;
		struct stat st;
		if (fstatat(below->fd, l->name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != l->dev ||
		    st.st_ino != l->ino)
			break;
		/* Ours again after being something else for the unlinkat. */
		if (e == ENOTDIR) {
			if (l->tries++ < MAX_TRIES)
				continue;
			fail_at(NULL, "kept changing while being removed");
			goto done;
		}
		/* Still ours, and not empty: something was added meanwhile. */
		if ((e != ENOTEMPTY && e != EEXIST) || l->failed || l->passes++ >= MAX_PASSES) {
			if (!l->failed)
				fail_at(NULL, strerror(e));
			goto done;
		}
		if (read_names(l) < 0) {
			fail_at(NULL, strerror(errno));
			goto done;
		}
		if (l->count > 0)
			return 0;
	}
	/* The name means something else now (a swap): remove that instead. Our
	 * directory, if it was renamed within the level below, is met when that
	 * level is read again. */
	char *name = l->name;
	int tries = l->tries + 1;
	close(l->fd);
	free_names(l);
	depth--;
	remove_entry(name, tries);
	free(name);
	return 0;
done:
	close(l->fd);
	free_names(l);
	free(l->name);
	depth--;
	return 0;
}

int cmd_remove(int argc, char **argv)
{
	if (argc != 3) {
		fputs("usage: hmm-helper remove DIR\n", stderr);
		return 2;
	}
	/* DIR's parent is opened by path (it is hmm's own, not the command's);
	 * DIR itself is an entry in it like any other. */
	char *path = xstrdup(argv[2]);
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		fprintf(stderr, "hmm-helper: remove: refusing to remove %s\n", argv[2]);
		return 2;
	}
	const char *parent = !slash ? "." : slash == path ? "/" : (*slash = '\0', path);
	top_path = argv[2];

#ifdef O_PATH
	/* Only a place to start from: no right to read it is needed. */
	int pfd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
#else
	int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#endif
	if (pfd < 0) {
		if (errno == ENOENT)
			return 0;
		fprintf(stderr, "hmm-helper: remove: %s: %s\n", parent, strerror(errno));
		return EXIT_NOT_REMOVED;
	}
	struct stat st;
	if (fstat(pfd, &st) < 0) {
		fprintf(stderr, "hmm-helper: remove: %s: %s\n", parent, strerror(errno));
		return EXIT_NOT_REMOVED;
	}
	push_level(pfd, &st, base, 0);
	remove_entry(base, 0);
	while (depth > 1) {
		struct level *l = &levels[depth - 1];
		if (l->next < l->count)
			remove_entry(l->names[l->next++], 0);
		else if (finish() < 0)
			break;
	}
	return failures ? EXIT_NOT_REMOVED : 0;
}
