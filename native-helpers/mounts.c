/*
 * mounts: what the init mounts in the workspace's mount namespace before
 * the command starts (DESIGN "Isolation on Linux"), in this order: /proc,
 * /dev (devices.c), /run (own-run.c), the tool caches and agents'
 * directories as layers kept with the workspace (caches.c), the agents'
 * files bound over them (binds.c), its own /tmp and $TMPDIR, masks over
 * hidden places, the data directory covered (cover-data.c) and the home
 * composed (home.c); exec.c then makes everything else read-only
 * (readonly.c). Every path the command could have written in an earlier
 * run is opened without following links (open_no_links) and acted on
 * through its descriptor.
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <sys/mount.h>

/* The directories of rel ("/a/b") made beneath the directory dir, which the
 * command wrote in an earlier run: each made and entered relative to the
 * last, none through a link. A link or file the command left on the way
 * ends the making there: its $TMPDIR is then missing, its own doing. */
static void make_dirs_beneath(int dir, const char *rel)
{
	char *p = xstrdup(rel);
	int at = dup(dir);
	if (at < 0)
		setup_fail("tmp: cannot make %s: %s", rel, strerror(errno));
	for (char *name = strtok(p, "/"); name && at >= 0; name = strtok(NULL, "/")) {
		if (mkdirat(at, name, 0700) < 0 && errno != EEXIST)
			setup_fail("tmp: cannot make %s: %s", rel, strerror(errno));
		int next = openat(at, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(at);
		at = next;
	}
	if (at >= 0)
		close(at);
	free(p);
}

/* The workspace's own /tmp and $TMPDIR: one directory, bound over each. A
 * temporary directory beneath one already covered is made in the
 * workspace's instead, so the command's TMPDIR exists. */
static void own_tmp(const struct exec_opts *o)
{
	char *tmp = path_join(o->isolate, "tmp");
	make_dirs("tmp", tmp, 0700);
	int own = open(tmp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (own < 0)
		setup_fail("tmp: cannot open %s: %s", tmp, strerror(errno));
	const char **bound = xmalloc(sizeof *bound * (o->ntmp_over + 1));
	size_t nbound = 0;
	for (size_t i = 0; i < o->ntmp_over; i++) {
		const char *t = o->tmp_over[i];
		const char *over = NULL;
		for (size_t j = 0; j < nbound && !over; j++)
			if (beneath_or_at(t, bound[j]))
				over = bound[j];
		if (over) {
			make_dirs_beneath(own, t + strlen(over));
			continue;
		}
		int at = open_no_links(t, O_PATH | O_DIRECTORY);
		if (at < 0)
			continue; /* not a directory as hmm named it: nothing to cover */
		char *target = fd_path(at);
		if (mount(tmp, target, NULL, MS_BIND, NULL) < 0)
			setup_fail("tmp: cannot mount %s on %s: %s", tmp, t, strerror(errno));
		free(target);
		close(at);
		bound[nbound++] = t;
	}
	free(bound);
	close(own);
	free(tmp);
}

/* Whether a mount on mask target m failed because m was removed since it
 * was opened (another program's /run/screen, a socket its server took
 * away): nothing is there now. As safe to skip as a target already gone
 * when hmm named it: this mount namespace is private, a hidden path made
 * there again is still Landlock's to refuse, and a socket made later
 * outside /run and /tmp is not covered anyway (MANUAL). Something there
 * again is not skipped. */
static int vanished(const char *m)
{
	if (errno != ENOENT)
		return 0;
	int fd = open_no_links(m, O_PATH);
	int gone = fd < 0 && errno == ENOENT;
	if (fd >= 0)
		close(fd);
	errno = ENOENT; /* the mount's, for its failure's message */
	return gone;
}

/* Whether path lies in a cache whose layer whites out every hidden path
 * (caches.c seal): what is there now is the command's own, made over the
 * whiteout, not the user's. */
static int in_sealed_cache(const struct exec_opts *o, const char *path)
{
	for (size_t i = 0; i < o->ncaches; i++)
		if (strictly_beneath(path, o->caches[i]) && isolate_sealed(o->caches[i]))
			return 1;
	return 0;
}

/* The user's sockets and session directories, the hidden paths: an empty
 * read-only tmpfs over a directory, an empty file over anything else. */
static void mask(const struct exec_opts *o)
{
	/* What covers a file or socket: an empty file of the workspace's, in
	 * hmm's data directory, which Landlock grants nothing on. Not
	 * /dev/null: the command may read and write that, and Landlock
	 * judges a bound file by its own inode. */
	char *empty = path_join(o->isolate, "masked");
	int fd = open(empty, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		setup_fail("mask: cannot make %s: %s", empty, strerror(errno));
	char *from = fd_path(fd);
	for (size_t i = 0; i < o->nmasks; i++) {
		/* A link is not covered (where it leads is, if hidden); a hidden
		 * path in a cache's layer is reached through none the command
		 * left there. */
		const char *m = o->masks[i];
		if (in_sealed_cache(o, m))
			continue;
		int at = open_no_links(m, O_PATH);
		struct stat st;
		if (at < 0)
			continue;
		char *target = fd_path(at);
		if (fstat(at, &st) < 0)
			setup_fail("mask: cannot stat %s: %s", m, strerror(errno));
		if (S_ISDIR(st.st_mode) &&
		    mount("tmpfs", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755") < 0 &&
		    !vanished(m))
			setup_fail("mask: cannot mount tmpfs on %s: %s", m, strerror(errno));
		if (!S_ISDIR(st.st_mode) && mount(from, target, NULL, MS_BIND, NULL) < 0 && !vanished(m))
			setup_fail("mask: cannot mount %s on %s: %s", from, m, strerror(errno));
		free(target);
		close(at);
	}
	free(from);
	close(fd);
	free(empty);
}
void isolate_mounts(const struct exec_opts *o, int lock)
{
	/* Processes of this namespace only; needs the init to mount it. */
	mount_or_fail("proc", "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	/* A /dev of its own (devices.c). */
	isolate_dev();
	isolate_run(o);
	int *sources = open_bind_sources(o);
	isolate_caches(o, lock);
	bind_files(o, sources);
	own_tmp(o);
	mask(o);
	cover_data(o);
	compose_home(o);
}
#endif /* __linux__ */
