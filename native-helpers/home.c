/*
 * home: the composed home (SPEC "Sandbox", "Reading"). The command's $HOME
 * holds only what hmm names: each --home-keep path bound in as it is after
 * the other mounts (the caches' layers, the agents' binds, the masks and
 * the covered data directory beneath it come along), and each --home-link
 * made again as the same symbolic link (a dotfile kept in ~/dotfiles and
 * linked from ~/.bashrc; hmm keeps where it leads as well). Everything
 * else under the home is absent, as on a new machine: a secret no list
 * names is not there to be read.
 *
 * Built on a tmpfs mounted in the workspace's directory, then moved over
 * the home in one step, so no path of the home is ever looked up half
 * made. The paths are the user's own (the command has not started, and
 * hmm named them canonical); each is opened through no link, and one that
 * is not there as named is left out. The tmpfs is made read-only by the
 * read-only pass (readonly.c) as every mount but the places granted.
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <sys/mount.h>

/* Whether p lies at or beneath one of the first n paths of list. */
static int within_any(const char *p, const char **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(p, list[i]) == 0 || strictly_beneath(p, list[i]))
			return 1;
	return 0;
}

/* The directories on the way to rel ("a/b/c": a and a/b) made in the
 * stage, each with the mode of the one it stands for in the home. */
static void make_parents(int stage, const char *home, const char *rel)
{
	char *p = xstrdup(rel);
	for (char *slash = strchr(p, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = 0;
		char *real = path_join(home, p);
		struct stat st;
		mode_t mode = lstat(real, &st) == 0 && S_ISDIR(st.st_mode) ? st.st_mode & 07777 : 0755;
		if (mkdirat(stage, p, mode) < 0 && errno != EEXIST)
			setup_fail("home: cannot make %s: %s", real, strerror(errno));
		free(real);
		*slash = '/';
	}
	free(p);
}

static void keep(int stage, const char *stage_path, const char *home, const char *path)
{
	/* A cache the user has not got comes from its stand-in (mounts.c). */
	int stand_in = cache_stand_in(path);
	int src = stand_in >= 0 ? dup(stand_in) : open_no_links(path, O_PATH);
	struct stat st;
	if (src < 0)
		return; /* not there as named: nothing to keep */
	if (fstat(src, &st) < 0)
		setup_fail("home: cannot stat %s: %s", path, strerror(errno));
	const char *rel = path + strlen(home) + 1;
	make_parents(stage, home, rel);
	int made;
	if (S_ISDIR(st.st_mode)) {
		made = mkdirat(stage, rel, st.st_mode & 07777);
	} else {
		made = openat(stage, rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (made >= 0)
			made = close(made);
	}
	if (made < 0 && errno != EEXIST)
		setup_fail("home: cannot make %s: %s", path, strerror(errno));
	char from[64];
	snprintf(from, sizeof from, "/proc/self/fd/%d", src);
	char *target = path_join(stage_path, rel);
	if (mount(from, target, NULL, MS_BIND | MS_REC, NULL) < 0)
		setup_fail("home: cannot bind %s: %s", path, strerror(errno));
	free(target);
	close(src);
}

static void link_again(int stage, const char *home, const char *path)
{
	char target[PATH_MAX];
	ssize_t n = readlink(path, target, sizeof target - 1);
	if (n < 0)
		return; /* not a link (any more): nothing to make */
	target[n] = 0;
	const char *rel = path + strlen(home) + 1;
	make_parents(stage, home, rel);
	if (symlinkat(target, stage, rel) < 0 && errno != EEXIST)
		setup_fail("home: cannot make the link %s: %s", path, strerror(errno));
}

void compose_home(const struct exec_opts *o)
{
	if (!o->home)
		return;
	struct stat home_st;
	int home_fd = open_no_links(o->home, O_PATH | O_DIRECTORY);
	if (home_fd < 0 || fstat(home_fd, &home_st) < 0)
		setup_fail("home: cannot open %s: %s", o->home, strerror(errno));
	char *stage_path = path_join(o->isolate, "home");
	if (mkdir(stage_path, 0700) < 0 && errno != EEXIST)
		setup_fail("home: cannot make %s: %s", stage_path, strerror(errno));
	char options[64];
	snprintf(options, sizeof options, "mode=%o", (unsigned)(home_st.st_mode & 07777));
	if (mount("tmpfs", stage_path, "tmpfs", MS_NOSUID | MS_NODEV, options) < 0)
		setup_fail("home: cannot mount tmpfs on %s: %s", stage_path, strerror(errno));
	int stage = open(stage_path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (stage < 0)
		setup_fail("home: cannot open %s: %s", stage_path, strerror(errno));
	/* Outermost first: what lies beneath a kept path comes with it. */
	for (size_t i = 0; i < o->nhome_keep; i++) {
		const char *p = o->home_keep[i];
		if (!strictly_beneath(p, o->home))
			setup_fail("home: %s is not beneath %s", p, o->home);
		int inner = 0;
		for (size_t j = 0; j < o->nhome_keep && !inner; j++)
			inner = j != i && strictly_beneath(p, o->home_keep[j]);
		if (!inner)
			keep(stage, stage_path, o->home, p);
	}
	/* The workspace's directory, kept with what is mounted beneath it,
	 * brought the stage's own mount along (the stage lies in it): taken
	 * away, or the home would hold itself (find and grep -r see a loop). */
	if (strictly_beneath(stage_path, o->home)) {
		char *image = path_join(stage_path, stage_path + strlen(o->home) + 1);
		if (umount2(image, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
			setup_fail("home: cannot take the stage's image %s away: %s", image, strerror(errno));
		free(image);
	}
	for (size_t i = 0; i < o->nhome_links; i++) {
		const char *p = o->home_links[i];
		if (!strictly_beneath(p, o->home))
			setup_fail("home: %s is not beneath %s", p, o->home);
		if (!within_any(p, o->home_keep, o->nhome_keep))
			link_again(stage, o->home, p);
	}
	char *home_at = xmalloc(32);
	snprintf(home_at, 32, "/proc/self/fd/%d", home_fd);
	if (mount(stage_path, home_at, NULL, MS_MOVE, NULL) < 0)
		setup_fail("home: cannot move the composed home over %s: %s", o->home, strerror(errno));
	free(home_at);
	close(stage);
	close(home_fd);
	free(stage_path);
}
#endif
