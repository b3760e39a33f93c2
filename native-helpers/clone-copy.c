/*
 * clone: copying one entry of a directory (regular files, subdirectories,
 * links and the rest, hard links kept as such), and reading a directory
 * into chunks of entries. clone.c runs the pool these are called from.
 */
#include "clone.h"

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
void links_wake(void)
{
	pthread_mutex_lock(&links_mu);
	pthread_cond_broadcast(&links_cv);
	pthread_mutex_unlock(&links_mu);
}

/* ---- regular files ---- */

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
	int side = 1, e = 0, keep = 0;
	if (copy_data(s, t, st) < 0) {
		e = errno;
		side = 0; /* most likely the read; either way, name the source */
	} else if ((keep = set_owner(t, NULL, st->st_uid, st->st_gid, 0)) < 0 ||
		   ((C.always_chmod || (st->st_mode & 07000)) &&
		    fchmod(t, st->st_mode & keep) < 0)) {
		e = errno;
	} else if (!(e = copy_xattrs(s, t, -1, -1, NULL, &side, keep == 07777))) {
		/* Attributes after chown, which drops security.capability. */
		struct timespec ts[2] = {ST_ATIM(*st), ST_MTIM(*st)};
		if (futimens(t, ts) < 0)
			e = errno, side = 1;
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
	/* While it is still ours and writable (its owner and mode come last). */
	int side, e = copy_xattrs(sfd, dfd, -1, -1, NULL, &side, 1);
	if (e) {
		clone_fail(side, rel, name, e);
		close(sfd);
		close(dfd);
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
	int side = 1, e = 0;
	int keep = set_owner(d->dfd, name, st->st_uid, st->st_gid, 0);
	if (keep < 0 ||
	    (!is_link && (C.always_chmod || (st->st_mode & 07000)) &&
	     fchmodat(d->dfd, name, st->st_mode & keep, 0) < 0))
		e = errno;
	else if (!(e = copy_xattrs(-1, -1, d->sfd, d->dfd, name, &side, keep == 07777)) &&
		 utimensat(d->dfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
		e = errno, side = 1;
	if (e) {
		clone_fail(side, rel, name, e);
		link_made(mine, L_SKIPPED);
		return;
	}
	atomic_fetch_add(&C.files, 1);
	link_made(mine, L_MADE);
}

/* Whether the config file's `exclude` leaves the entry out (then it is named, not copied). */
static int left_out(struct dopen *d, const struct entry *e)
{
	if (!exclude_any())
		return 0;
	int is_dir = e->type == DT_DIR;
	struct stat st;
	if (e->type == DT_UNKNOWN)
		is_dir = fstatat(d->sfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
	char *rel = rel_join(d->node->rel, e->name);
	int out = exclude_match(rel, is_dir);
	if (out)
		clone_excluded(rel, is_dir);
	free(rel);
	return out;
}

static void copy_entry(struct dopen *d, const struct entry *e)
{
	const char *name = e->name;
	int noatime = atomic_load(&C.noatime) ? O_NOATIME : 0;
	struct stat st;
	if (left_out(d, e))
		return;
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

void run_chunk(struct dopen *d, size_t from, size_t to)
{
	for (size_t i = from; i < to && !atomic_load(&C.failed); i++)
		copy_entry(d, &d->ents[i]);
}

/* Read a directory whole, then hand out its entries in chunks. */
void run_dir(struct dnode *node, int sfd, int dfd)
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
