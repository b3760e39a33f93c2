/*
 * What the parts of clone share, from the top down: clone.c (the mode and
 * its pool of threads), clone-copy.c (copying one entry), clone-data.c (a
 * file's data and extended attributes), clone-state.c (the shared state,
 * the queue, directories' metadata). See clone.c for how the copy works.
 */
#ifndef HMM_CLONE_H
#define HMM_CLONE_H

#include "hmm-helper.h"

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
struct clone_state {
	const char *src, *dst;
	int dst_root;		/* DST, for hard links made by path */
	dev_t dst_dev;
	ino_t dst_ino;		/* never copy DST into itself */
	uid_t euid;
	gid_t egid;
	int always_chmod;	/* a default ACL makes creation modes unreliable */
	int progress_fd;
	int excluded_fd;	/* where the entries left out are named, or -1 */
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
};
extern struct clone_state C;

/* Entries per chunk: big enough that queueing costs nothing next to copying,
 * small enough that one huge directory still spreads over all workers. */
#define CHUNK 64

/* clone-state.c */
void clone_fail(int side_dst, const char *rel, const char *name, int err);
void clone_note(const char *what, const char *rel, const char *name);
void clone_excluded(const char *rel, int is_dir);
void push(struct job *j);
/* The next job, or NULL once the copy is complete. */
struct job *pop(void);
int set_owner(int fd, const char *name, uid_t uid, gid_t gid, int force);
void release(struct dnode *n);
void dopen_put(struct dopen *d);

/* clone-data.c */
int copy_data(int s, int t, const struct stat *st);
int copy_xattrs(int s, int t, int sdir, int tdir, const char *name, int *side, int with_caps);

/* clone-copy.c */
void run_dir(struct dnode *node, int sfd, int dfd);
void run_chunk(struct dopen *d, size_t from, size_t to);
void links_wake(void);

#endif
