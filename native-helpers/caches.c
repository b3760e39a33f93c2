/*
 * caches: the tool caches and agents' directories the init mounts as
 * overlays whose upper layers are kept with the workspace (choose_layer:
 * one per command run at once), the hidden places beneath them whited out
 * (seal), and the stand-in of a cache the user has not got (home.c takes
 * it). mounts.c calls isolate_caches in its order; landlock.c asks
 * isolate_sealed. Every path the command could have written in an earlier
 * run is opened without following links and acted on by descriptor.
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <sys/mount.h>
#include <sys/sysmacros.h>

/* A directory hmm named, opened through no link; made first where missing,
 * in its parent opened the same way. -1 where it is not there as named. */
static int open_or_make_dir(const char *path)
{
	int fd = open_no_links(path, O_PATH | O_DIRECTORY);
	if (fd >= 0 || errno != ENOENT)
		return fd;
	char *parent = xstrdup(path);
	char *slash = strrchr(parent, '/');
	*slash = '\0';
	int at = open_no_links(slash == parent ? "/" : parent, O_PATH | O_DIRECTORY);
	if (at >= 0) {
		if (mkdirat(at, slash + 1, 0700) == 0 || errno == EEXIST)
			fd = openat(at, slash + 1, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(at);
	}
	free(parent);
	return fd;
}

/* The caches whose layer whites out every hidden path beneath them. */
static const char **sealed;
static size_t nsealed;

int isolate_sealed(const char *path)
{
	for (size_t i = 0; i < nsealed; i++)
		if (strcmp(sealed[i], path) == 0)
			return 1;
	return 0;
}

/* The next directory on the way down, never through a link (-1: none). */
static int down(int dir, const char *name)
{
	return dir == -1 ? -1 : openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Whether the directory name in dir is opaque in its overlay: one the
 * command made over a whiteout (the kernel marks it so, userxattr), of
 * which nothing of the lower layers shows. */
static int opaque(int dir, const char *name)
{
	int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char value[2];
	ssize_t n = fgetxattr(fd, "user.overlay.opaque", value, sizeof value);
	close(fd);
	return n == 1 && value[0] == 'y';
}

/* A hidden path beneath a cache (~/.cargo/credentials.toml) whited out in
 * the cache's layer (a character device 0/0, which the kernel lets a user
 * make): the overlay then shows nothing there, whatever the user's cache
 * holds, now or later (a `cargo login` while the command runs), so Landlock
 * can grant the whole cache and the command make new entries directly in it
 * (registry/, git/). Granted around a hidden path, the cache itself would
 * get no rule and nothing new could be made in it. The directories on the
 * way are made in the layer, as the user's are (or 0700 where the user has
 * none yet). Returns 0 where the layer cannot be vouched for, and Landlock
 * then grants around the hidden path as before: a part of the way that is
 * not a directory in the user's cache (the layer's directory would cover
 * it), or a directory in the layer at the hidden path that is not opaque
 * (it may let the user's show through). Relative to directories opened without following
 * links: another command of the workspace may be changing the layer. */
static int white_out(const char *cache, const char *upper, const char *hidden)
{
	char *rel = xstrdup(hidden + strlen(cache) + 1);
	int dir = down(AT_FDCWD, upper);
	int user = open_no_links(cache, O_RDONLY | O_DIRECTORY);
	int ok = 0;
	for (char *part = rel; dir >= 0;) {
		char *slash = strchr(part, '/');
		if (slash)
			*slash = '\0';
		struct stat st;
		if (fstatat(dir, part, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (!S_ISDIR(st.st_mode)) {
				ok = 1; /* a file of the layer's (or a whiteout): nothing beneath shows */
				break;
			}
			if (!slash) {
				ok = opaque(dir, part);
				break;
			}
		} else if (errno != ENOENT) {
			break;
		} else if (!slash) {
			ok = mknodat(dir, part, S_IFCHR, makedev(0, 0)) == 0;
			break;
		} else {
			mode_t mode = 0700;
			if (user >= 0 && fstatat(user, part, &st, AT_SYMLINK_NOFOLLOW) == 0) {
				if (!S_ISDIR(st.st_mode))
					break;
				mode = st.st_mode & 07777;
			} else if (user >= 0 && errno != ENOENT) {
				break;
			}
			if (mkdirat(dir, part, mode) < 0)
				break;
		}
		int next = down(dir, part), user_next = down(user, part);
		close(dir);
		if (user >= 0)
			close(user);
		dir = next;
		user = user_next;
		part = slash + 1;
	}
	if (dir >= 0)
		close(dir);
	if (user >= 0)
		close(user);
	free(rel);
	return ok;
}

/* Whites out the hidden paths beneath cache c in its layer (those not
 * beneath another), and notes c sealed where every one is. */
static void seal(const struct exec_opts *o, const char *c, const char *upper)
{
	int whole = 1;
	for (size_t i = 0; i < o->nhides; i++) {
		const char *h = o->hides[i];
		if (!strictly_beneath(h, c))
			continue;
		int inner = 0;
		for (size_t j = 0; j < o->nhides; j++)
			inner |= strictly_beneath(o->hides[j], c) && strictly_beneath(h, o->hides[j]);
		if (!inner && !white_out(c, upper, h))
			whole = 0;
	}
	if (!whole)
		return;
	sealed = realloc(sealed, sizeof *sealed * (nsealed + 1));
	if (!sealed)
		oom();
	sealed[nsealed++] = c;
}

/* A cache's layers, kept with the workspace in caches/<name>/ (or, for a
 * command with an agent's profile, in caches-<agent>/<name>/, --layers:
 * what a command without the profile left in a cache, a program first on
 * PATH, is not run by the agent, with its login): the first
 * is upper/ (its work dir work/), more are <n>/upper (and <n>/work) for
 * n = 1, 2, .... Commands may run in a workspace at once (hmm exec), and
 * two live overlay mounts may not share an upper or a work directory (the
 * kernel calls it undefined). So each mount writes the top layer where no
 * live mount has it, else a new one on top, and reads the layers beneath
 * it, then the user's cache: what every command wrote is kept and the next
 * one sees it all, a later layer's file over an earlier one's. A layer is
 * taken with an open file description lock on the workspace's lock file,
 * one byte at its upper directory's inode number: the init holds that file
 * open for as long as the namespace, and so the mount, lives. */
#define MAX_LAYERS 64

static char *layer_dir(const char *mine, unsigned n)
{
	if (n == 0)
		return xstrdup(mine);
	char num[16];
	snprintf(num, sizeof num, "%u", n);
	return path_join(mine, num);
}

static char *layer_part(const char *mine, unsigned n, const char *part)
{
	char *dir = layer_dir(mine, n);
	char *p = path_join(dir, part);
	free(dir);
	return p;
}

/* Takes layer n for this namespace's life: 1, or 0 where a live mount of
 * another command has it. */
static int take_layer(const char *mine, unsigned n, int lock)
{
	char *upper = layer_part(mine, n, "upper");
	struct stat st;
	if (stat(upper, &st) < 0)
		setup_fail("cache: cannot look at %s: %s", upper, strerror(errno));
	free(upper);
	struct flock byte = {.l_type = F_WRLCK,
			     .l_whence = SEEK_SET,
			     .l_start = (off_t)(st.st_ino & 0x3fffffffffffffffULL),
			     .l_len = 1};
	if (fcntl(lock, F_OFD_SETLK, &byte) == 0)
		return 1;
	if (errno != EAGAIN && errno != EACCES)
		setup_fail("cache: cannot lock a layer of %s: %s", mine, strerror(errno));
	return 0;
}

/* A new layer n, made whole under another name and then renamed into
 * place, so that no mount ever finds one without its upper directory.
 * Another command may have made n meanwhile: then this one is let go. */
static void add_layer(const char *mine, unsigned n)
{
	char name[32];
	snprintf(name, sizeof name, ".new-%ld", (long)getpid());
	char *tmp = path_join(mine, name);
	char *upper = path_join(tmp, "upper"), *work = path_join(tmp, "work");
	make_dirs("cache", upper, 0700);
	make_dirs("cache", work, 0700);
	char *dir = layer_dir(mine, n);
	if (rename(tmp, dir) < 0) {
		if (errno != EEXIST && errno != ENOTEMPTY)
			setup_fail("cache: cannot make %s: %s", dir, strerror(errno));
		if (rmdir(upper) < 0 || rmdir(work) < 0 || rmdir(tmp) < 0)
			setup_fail("cache: cannot remove %s: %s", tmp, strerror(errno));
	}
	free(dir);
	free(work);
	free(upper);
	free(tmp);
}

/* The number of the layer this command's mount writes, taken. */
static unsigned choose_layer(const char *mine, int lock)
{
	char *upper = layer_part(mine, 0, "upper"), *work = layer_part(mine, 0, "work");
	make_dirs("cache", upper, 0700);
	make_dirs("cache", work, 0700);
	free(work);
	free(upper);
	for (;;) {
		unsigned top = 0;
		for (struct stat st;; top++) {
			char *next = layer_dir(mine, top + 1);
			int there = stat(next, &st) == 0;
			free(next);
			if (!there)
				break;
		}
		if (take_layer(mine, top, lock))
			return top;
		if (top + 1 >= MAX_LAYERS)
			setup_fail("cache %s: %d layers are in use by commands running at once", mine,
				   MAX_LAYERS);
		add_layer(mine, top + 1);
	}
}

/* Caches the user has not got, where the home is composed: the layer goes
 * on a directory of the workspace's own, its stand-in, and home.c keeps
 * that at the cache's place, rather than one made in the user's home that
 * would outlive the workspace (an empty ~/.cargo after a first run). By
 * descriptor, opened through the mounted layer: the data directory is
 * covered before the home is composed. */
#define MAX_STAND_INS 64
static struct {
	const char *path;
	int fd;
} stand_ins[MAX_STAND_INS];
static size_t nstand_ins;

/* The stand-in as mounted: opened by its path, which now leads to the layer. */
static void remember_stand_in(const char *path, char *place)
{
	if (!place)
		return;
	int fd = open(place, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		setup_fail("cache %s: cannot open its layer at %s: %s", path, place, strerror(errno));
	stand_ins[nstand_ins].path = path;
	stand_ins[nstand_ins++].fd = fd;
	free(place);
}

int cache_stand_in(const char *path)
{
	for (size_t i = 0; i < nstand_ins; i++)
		if (strcmp(stand_ins[i].path, path) == 0)
			return stand_ins[i].fd;
	return -1;
}

/* Whether cache i takes a stand-in: missing from the home composed, and
 * holding or held by no other cache or kept path (those come along with
 * a real directory, or are made in a layer already mounted). */
static int takes_stand_in(const struct exec_opts *o, size_t i)
{
	const char *c = o->caches[i];
	if (!o->home || !strictly_beneath(c, o->home) || nstand_ins == MAX_STAND_INS)
		return 0;
	int fd = open_no_links(c, O_PATH);
	if (fd >= 0 || errno != ENOENT) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	for (size_t j = 0; j < o->ncaches; j++)
		if (strictly_beneath(o->caches[j], c) || strictly_beneath(c, o->caches[j]))
			return 0;
	for (size_t j = 0; j < o->nhome_keep; j++)
		if (strictly_beneath(o->home_keep[j], c) || strictly_beneath(c, o->home_keep[j]))
			return 0;
	return 1;
}

/* Each tool cache: an overlay whose lowest layer is the real cache and
 * whose upper layer is the workspace's, so the command reads the warm
 * cache and what it writes stays with the workspace (with the layers of
 * commands run at once beneath: choose_layer). A cache the user has not
 * got yet is made first, empty, as the tool would make it on first use:
 * the command cannot make it (the home is not writable), and an overlay
 * needs a directory to go on. Where it cannot be made (no home, a dangling
 * link there), there is no cache, as before; nor where a link is on the
 * way: the namespaces may have put the command's own layer there already. */
void isolate_caches(const struct exec_opts *o, int lock)
{
	for (size_t i = 0; i < o->ncaches; i++) {
		const char *c = o->caches[i];
		if (strpbrk(c, ",:\\"))
			setup_fail("cache %s: a cache's path may not hold ',', ':' or '\\'", c);
		const char *base = strrchr(c, '/') + 1;
		if (*base == '.')
			base++;
		char *dir = path_join(o->isolate, o->layers ? o->layers : "caches");
		char *mine = path_join(dir, base);
		char *place = NULL;
		if (takes_stand_in(o, i)) {
			place = path_join(mine, "place");
			make_dirs("cache", place, 0700);
		}
		/* An agent's directory may lie in a cache mounted before it. */
		int at = place ? open_no_links(place, O_PATH | O_DIRECTORY) : open_or_make_dir(c);
		if (at < 0) {
			free(place);
			free(mine);
			free(dir);
			continue;
		}
		unsigned n = choose_layer(mine, lock);
		char *upper = layer_part(mine, n, "upper");
		char *work = layer_part(mine, n, "work");
		seal(o, c, upper);
		/* The lower layers, top first, by descriptor (no ':' or ',' in
		 * their names): the layers beneath this one, then the user's
		 * cache, which is also the mount's place. */
		int beneath[MAX_LAYERS];
		size_t len = strlen(upper) + strlen(work) + 80 + 32 * (n + 1);
		char *data = xmalloc(len);
		int at_data = snprintf(data, len, "lowerdir=");
		for (unsigned k = n; k-- > 0;) {
			char *lower = layer_part(mine, k, "upper");
			beneath[k] = open(lower, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (beneath[k] < 0)
				setup_fail("cache: cannot open %s: %s", lower, strerror(errno));
			free(lower);
			at_data += snprintf(data + at_data, len - (size_t)at_data, "/proc/self/fd/%d:", beneath[k]);
		}
		if (ids_remapped()) {
			/* As root: on the layers idmapped for the command (ids.c). */
			int lowers[MAX_LAYERS + 1];
			size_t nl = 0;
			for (unsigned k = n; k-- > 0;)
				lowers[nl++] = beneath[k];
			lowers[nl++] = at;
			char *layer = layer_dir(mine, n);
			if (ids_overlay(at, lowers, nl, layer) < 0)
				setup_fail("cache %s: cannot mount an overlay on it: %s", c, strerror(errno));
			remember_stand_in(c, place);
			free(layer);
			for (unsigned k = 0; k < n; k++)
				close(beneath[k]);
			free(data);
			close(at);
			free(work);
			free(upper);
			free(mine);
			free(dir);
			continue;
		}
		char *lowest = fd_path(at);
		/* userxattr: in a user namespace the overlay keeps its whiteouts
		 * and opaque directories in user.overlay.* attributes; with the
		 * trusted.* ones it cannot set, removing or renaming what a lower
		 * layer holds fails with EIO (npm cache clean, rm -rf ~/.npm).
		 * Kernels before 5.11 know no such option: then without it. */
		snprintf(data + at_data, len - (size_t)at_data, "%s,upperdir=%s,workdir=%s,userxattr", lowest, upper, work);
		int mounted = mount("overlay", lowest, "overlay", MS_NOSUID | MS_NODEV, data);
		if (mounted < 0 && errno == EINVAL) {
			*strrchr(data, ',') = 0;
			mounted = mount("overlay", lowest, "overlay", MS_NOSUID | MS_NODEV, data);
		}
		if (mounted < 0)
			setup_fail("cache %s: cannot mount an overlay on it: %s", c, strerror(errno));
		remember_stand_in(c, place);
		for (unsigned k = 0; k < n; k++)
			close(beneath[k]);
		free(data);
		free(lowest);
		close(at);
		free(work);
		free(upper);
		free(mine);
		free(dir);
	}
}


int isolate_caches_there(const struct exec_opts *o)
{
	for (size_t i = 0; i < o->ncaches; i++) {
		if (takes_stand_in(o, i))
			continue;
		int fd = open_no_links(o->caches[i], O_PATH | O_DIRECTORY);
		if (fd < 0)
			return 0;
		close(fd);
	}
	return 1;
}
#endif /* __linux__ */
