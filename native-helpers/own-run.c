/*
 * own-run: the command's own /run (attacker's review 6, F10). The host's
 * /run is where the system's and the session's servers listen (Docker,
 * Podman, D-Bus, the user's runtime directory, GNU screen), and a cover
 * (mounts.c mask) needs something to cover: a socket made there after the
 * command started (a Docker started later) would be reachable. So the init
 * mounts an empty tmpfs over /run, made read-only with every other mount
 * (readonly.c), and binds back only what programs need from the host's:
 *   - the directory of the name servers' file, where /etc/resolv.conf
 *     leads into /run (systemd-resolved's /run/systemd/resolve,
 *     resolvconf's, NetworkManager's): a directory, so that a new file
 *     written there while the command runs is seen (its sockets found at
 *     start are covered as everywhere, mounts.c mask);
 *   - the links at its top (NixOS's /run/current-system, which holds every
 *     program, /run/opengl-driver; /run/shm), made anew: a link grants
 *     nothing, where it leads is judged as any path;
 *   - what the command may write there (-w /run/postgresql, for the
 *     socket of a database the user gives it), and the directories its
 *     temporary directories are bound over (mounts.c own_tmp).
 * Each place is opened through no link before the tmpfs covers it.
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <sys/mount.h>

#define RUN "/run"

static int strictly_in_run(const char *p)
{
	return strncmp(p, RUN "/", sizeof RUN) == 0 && p[sizeof RUN] != '\0';
}

/* A place of the host's /run to bind back, opened before the tmpfs. */
struct kept {
	const char *path;
	int fd;
};

static void keep(struct kept *k, size_t *n, const char *path)
{
	int fd = open_no_links(path, O_PATH);
	if (fd < 0)
		return; /* not there as named: nothing to bind back */
	k[*n].path = path;
	k[(*n)++].fd = fd;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct kept *)a)->path, ((const struct kept *)b)->path);
}

/* The mount point of a kept place in the tmpfs: its directories, and the
 * place itself of its kind. */
static void make_mount_point(const struct kept *k)
{
	struct stat st;
	if (lstat(k->path, &st) == 0)
		return; /* in a place bound back before it */
	if (fstat(k->fd, &st) < 0)
		setup_fail("run: cannot stat %s: %s", k->path, strerror(errno));
	char *parent = dir_of(k->path);
	make_dirs("run", parent, 0755);
	free(parent);
	if (S_ISDIR(st.st_mode)) {
		make_dirs("run", k->path, 0755);
		return;
	}
	int fd = open(k->path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		setup_fail("run: cannot make %s: %s", k->path, strerror(errno));
	close(fd);
}

/* The links at the host's /run's top, made anew in dir (the tmpfs). */
static void copy_links(int host, int dir)
{
	DIR *d = fdopendir(host);
	if (!d)
		setup_fail("run: cannot read %s: %s", RUN, strerror(errno));
	for (struct dirent *e; (e = readdir(d));) {
		char to[PATH_MAX];
		ssize_t n = e->d_type == DT_LNK ? readlinkat(dirfd(d), e->d_name, to, sizeof to - 1) : -1;
		if (n <= 0)
			continue;
		to[n] = '\0';
		if (symlinkat(to, dir, e->d_name) < 0 && errno != EEXIST)
			setup_fail("run: cannot make %s/%s: %s", RUN, e->d_name, strerror(errno));
	}
	closedir(d);
}

void isolate_run(const struct exec_opts *o)
{
	int host = open_no_links(RUN, O_RDONLY | O_DIRECTORY);
	if (host < 0)
		return; /* no /run as named: nothing of the host's there */
	struct kept *k = xmalloc(sizeof *k * (o->ngrants + 2));
	size_t n = 0;
	for (size_t i = 0; i < o->ngrants; i++) {
		const char *g = o->grants[i].path;
		if (o->grants[i].cls != CLASS_READ && strcmp(g, RUN) == 0) {
			close(host); /* -w /run: all of it is the command's to use */
			free(k);
			return;
		}
		if (o->grants[i].cls != CLASS_READ && strictly_in_run(g))
			keep(k, &n, g);
	}
	char *conf = realpath("/etc/resolv.conf", NULL);
	char *servers = conf && strictly_in_run(conf) ? dir_of(conf) : NULL;
	if (servers)
		keep(k, &n, strictly_in_run(servers) ? servers : conf);
	/* A place before what lies beneath it. */
	qsort(k, n, sizeof *k, by_path);

	mount_or_fail("run", "tmpfs", RUN, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755");
	for (size_t i = 0; i < n; i++) {
		make_mount_point(&k[i]);
		char from[32];
		snprintf(from, sizeof from, "/proc/self/fd/%d", k[i].fd);
		mount_or_fail("run", from, k[i].path, NULL, MS_BIND | MS_REC, NULL);
		close(k[i].fd);
	}
	for (size_t i = 0; i < o->ntmp_over; i++)
		if (strictly_in_run(o->tmp_over[i]))
			make_dirs("run", o->tmp_over[i], 0755);
	int dir = open(RUN, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		setup_fail("run: cannot open %s: %s", RUN, strerror(errno));
	copy_links(host, dir);
	close(dir);
	free(servers);
	free(conf);
	free(k);
}
#endif /* __linux__ */
