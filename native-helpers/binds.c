/*
 * binds: exec's --bind-src/--bind-dst, files and directories the init
 * binds over others once the caches are mounted; ids.c asks which were
 * made (isolate_bound).
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <sys/mount.h>

/* Files bound over others once the caches are mounted: an agent's login,
 * bound over the copy its layer would show so that a token it refreshes
 * reaches the user's (source and target are the same path), and the
 * workspace's copy of an agent's state, bound over the user's so that the
 * user's stays as it was; and directories: the workspace's own records of
 * an agent (transcripts), bound over the user's, which hold every other
 * project's. Each source is opened before the layers are mounted over it.
 * A login that is not there (the user logged out meanwhile) is left out;
 * any other source is hmm's own, made just before: one not there as named
 * (a link on the way, attacker's review 5, F9) fails the set-up, as left
 * out the user's state and records would show through. A target that is
 * not there (removed in the workspace's layer) is left out: the agent
 * then runs without it. */
int *open_bind_sources(const struct exec_opts *o)
{
	int *fds = xmalloc(sizeof *fds * (o->nbind_src + 1));
	for (size_t i = 0; i < o->nbind_src; i++) {
		fds[i] = open_no_links(o->bind_src[i], O_PATH);
		int login = strcmp(o->bind_src[i], o->bind_dst[i]) == 0;
		if (fds[i] < 0 && !(login && errno == ENOENT))
			setup_fail("bind: cannot open %s: %s", o->bind_src[i], strerror(errno));
	}
	return fds;
}

/* Which of the binds were made (ids.c shows those as the command's own). */
static char *bound;

int isolate_bound(size_t i)
{
	return bound && bound[i];
}

void bind_files(const struct exec_opts *o, int *fds)
{
	bound = xmalloc(o->nbind_src + 1);
	memset(bound, 0, o->nbind_src + 1);
	for (size_t i = 0; i < o->nbind_src; i++) {
		struct stat st;
		if (fds[i] < 0)
			continue;
		if (fstat(fds[i], &st) < 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
			setup_fail("bind: %s is not a file or directory", o->bind_src[i]);
		/* The target may lie in an agent's layer, which the command
		 * wrote: one of the source's kind there, reached through no
		 * link, or nothing. */
		mode_t kind = st.st_mode & S_IFMT;
		int dst = open_no_links(o->bind_dst[i], O_PATH);
		if (dst >= 0 && fstat(dst, &st) == 0 && (st.st_mode & S_IFMT) == kind) {
			char *src = fd_path(fds[i]), *target = fd_path(dst);
			if (mount(src, target, NULL, MS_BIND, NULL) < 0)
				setup_fail("bind: cannot mount %s on %s: %s", o->bind_src[i],
					   o->bind_dst[i], strerror(errno));
			bound[i] = 1;
			free(src);
			free(target);
		}
		if (dst >= 0)
			close(dst);
		close(fds[i]);
	}
	free(fds);
}

#endif /* __linux__ */
