/*
 * clone: what the copy's threads share (clone.h): its state, failures and
 * notes, the queue of jobs, and directories' metadata set once everything
 * beneath them is done. clone-copy.c and the pool in clone.c use it.
 */
#include "clone.h"

struct clone_state C = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.cv = PTHREAD_COND_INITIALIZER,
	.done_cv = PTHREAD_COND_INITIALIZER,
};


/* "hmm: clone: <path>: <reason>", and stop: the TS side removes what was made. */
void clone_fail(int side_dst, const char *rel, const char *name, int err)
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

void clone_note(const char *what, const char *rel, const char *name)
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

/* An entry the config file's `exclude` leaves out: named, NUL-terminated,
 * a directory with a trailing '/', for hmm run to say. */
void clone_excluded(const char *rel, int is_dir)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	size_t len = strlen(rel);
	char *line = xmalloc(len + 2);
	memcpy(line, rel, len);
	if (is_dir)
		line[len++] = '/';
	line[len++] = '\0';
	pthread_mutex_lock(&mu);
	if (write_all(C.excluded_fd, line, len) < 0)
		clone_fail(1, rel, NULL, errno);
	pthread_mutex_unlock(&mu);
	free(line);
}

/* ---- the queue ---- */

void push(struct job *j)
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
struct job *pop(void)
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

static int chown_to(int fd, const char *name, uid_t uid, gid_t gid)
{
	return name ? fchownat(fd, name, uid, gid, AT_SYMLINK_NOFOLLOW) : fchown(fd, uid, gid);
}

/* Owner first, then mode (chown clears set-user-ID), times last. Not being
 * root, we cannot give files away: keep ours, as cp does. Nor can root of
 * a user namespace give them an owner it does not map (EINVAL: the
 * overflow id a file of an unmapped owner shows). Then what can be had is:
 * the owner, or the group (one of the user's own). Returns the mode bits
 * the copy may have: no set-user-ID but with its owner, no set-group-ID
 * but with its group (as cp -p), or -1. */
int set_owner(int fd, const char *name, uid_t uid, gid_t gid, int force)
{
	if (!force && uid == C.euid && gid == C.egid)
		return 07777; /* new files are already ours (no setgid parent, see below) */
	if (chown_to(fd, name, uid, gid) == 0)
		return 07777;
	if (!((errno == EPERM && C.euid != 0) || errno == EINVAL))
		return -1;
	int owner = uid == C.euid || chown_to(fd, name, uid, (gid_t)-1) == 0;
	int group = chown_to(fd, name, (uid_t)-1, gid) == 0;
	return 07777 & ~(owner ? 0 : S_ISUID) & ~(group ? 0 : S_ISGID);
}

static void finish_dir(struct dnode *n)
{
	int root = C.dst_root;
	if (!atomic_load(&C.failed)) {
		int e = 0;
		int force = n->parent == NULL; /* DST's gid came from its parent */
		int keep = set_owner(root, n->rel, n->uid, n->gid, force);
		if (keep < 0 || fchmodat(root, n->rel, n->mode & keep, 0) < 0 ||
		    utimensat(root, n->rel, n->times, AT_SYMLINK_NOFOLLOW) < 0)
			e = errno;
		if (e)
			clone_fail(1, n->rel, NULL, e);
	}
}

/* One piece of a directory's work is done; the last one sets its metadata
 * and passes the news up. */
void release(struct dnode *n)
{
	while (n && atomic_fetch_sub(&n->pending, 1) == 1) {
		struct dnode *p = n->parent;
		finish_dir(n);
		free(n->rel);
		free(n);
		n = p;
	}
}

void dopen_put(struct dopen *d)
{
	if (atomic_fetch_sub(&d->refs, 1) != 1)
		return;
	closedir(d->sdir);
	close(d->dfd);
	free(d->ents);
	free(d->names);
	free(d);
}
