/*
 * ids: run as root, the command is not the host's root (SPEC "Sandbox",
 * "Reading": it reads no file that only root may read, outside its tree
 * and grants). Capabilities held in a user namespace act only on files
 * whose owner that namespace maps; mapped 0 to 0, the command's
 * CAP_DAC_OVERRIDE opened every root-only file of the system
 * (/etc/mysql/debian.cnf, a k3s kubeconfig). So its user namespace maps
 * its ids 0-65535 to a range of the host's no file has (COMMAND_IDS):
 * host root's files have no owner in it, and a 0600 file of root's is
 * closed to it as to any other user; so are other users' private files.
 *
 * What is its own is shown as its own by idmapped mounts made with that
 * namespace (mount_setattr MOUNT_ATTR_IDMAP): its tree, the -w places,
 * its /tmp, the composed home, hmm's data directory as it sees them, and
 * the files bound over others (cleaned copies of git's config files).
 * What it writes there lands on disk as root's (on-disk uid 0 is its 0,
 * 1000 its 1000), as before, so hmm diff, apply and rm outside see
 * nothing new. The caches' overlays cannot be idmapped themselves: they
 * are made on idmapped layers, as the command's root (ids_overlay).
 *
 * Making an idmapped mount of the host's file systems needs CAP_SYS_ADMIN
 * in the host's user namespace, so the helper, root, makes the mount, PID
 * and IPC namespaces without a user namespace of their own (isolate.c)
 * and the command alone joins this one (ids_join), after its Landlock
 * rules are set and before its capabilities are dropped. It holds no
 * capability over its mount, PID or network namespaces, owned by the
 * host's user namespace.
 *
 * Two workspaces' commands share the range: each is in its own PID and
 * mount namespace (neither can name, signal or trace the other's
 * processes, nor reach the other's tree) and keyctl is refused (no user
 * keyring to share).
 *
 * Where an idmapped mount cannot be made (a kernel before 5.12, a file
 * system without them: NFS, FUSE), where a place lies beneath a directory
 * only root may search, and with the whole home visible (home =
 * "visible": no composed home to show as its own), the namespace maps 0
 * to 0 as before and `hmm sandbox` says so (layers.c): the user's build
 * works as it did.
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <sched.h>
#include <grp.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/wait.h>

#define COMMAND_IDS 2147352576U /* 0x7ffe0000: far above any allocation (subuid starts at 100000) */
#define COMMAND_IDS_COUNT 65536U

#ifndef __NR_open_tree
#define __NR_open_tree 428
#endif
#ifndef __NR_move_mount
#define __NR_move_mount 429
#endif
#ifndef __NR_fsopen
#define __NR_fsopen 430
#endif
#ifndef __NR_fsconfig
#define __NR_fsconfig 431
#endif
#ifndef __NR_fsmount
#define __NR_fsmount 432
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#define IDS_OPEN_TREE_CLONE 1
#define IDS_MOVE_MOUNT_F_EMPTY_PATH 0x04
#define IDS_MOVE_MOUNT_T_EMPTY_PATH 0x40
#define IDS_MOUNT_ATTR_IDMAP 0x00100000
#define IDS_FSCONFIG_SET_FLAG 0
#define IDS_FSCONFIG_SET_STRING 1
#define IDS_FSCONFIG_CMD_CREATE 6


struct ids_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

static int userns = -1;
static int remapped;

/* Whether /proc/self/<file> maps every id to itself, in one line. */
static int maps_all(const char *file)
{
	char path[32], map[128];
	snprintf(path, sizeof path, "/proc/self/%s", file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, map, sizeof map - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	map[n] = 0;
	unsigned long inside, outside, count;
	return strchr(map, '\n') == map + n - 1 && sscanf(map, "%lu %lu %lu", &inside, &outside, &count) == 3 &&
	       inside == 0 && outside == 0 && count == 4294967295UL;
}

/* Root whose user namespace maps every id, user and group, to itself: the
 * host's (the initial namespace), or a container's that holds the host's
 * ids. Root of a namespace of a user's (a rootless container, unshare -r)
 * cannot map the host's ids nor make idmapped mounts of the host's file
 * systems: it takes a plain user's way (isolate.c), and is root over
 * every file of its namespace's that it may read, which layers.c says. */
int ids_host_root(void)
{
	return geteuid() == 0 && maps_all("uid_map") && maps_all("gid_map");
}

int ids_userns(void)
{
	return userns;
}

int ids_remapped(void)
{
	return remapped;
}

static void write_text(pid_t pid, const char *name, const char *text)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0)
		setup_fail("ids: cannot write %s: %s", path, strerror(errno));
	close(fd);
}

/* A user namespace with the map given, held by its descriptor: made by a
 * child that then bounds its counts (counts.c; none asked: NULL) and exits. */
static int make_userns(const char *map, const struct user_counts *counts)
{
	int made[2], mapped[2];
	if (pipe2(made, O_CLOEXEC) < 0 || pipe2(mapped, O_CLOEXEC) < 0)
		setup_fail("ids: pipe: %s", strerror(errno));
	pid_t child = fork();
	if (child < 0)
		setup_fail("ids: fork: %s", strerror(errno));
	if (child == 0) {
		char go;
		/* Only the parent's ends: a parent that fails and exits leaves
		 * this read at its end, not waiting for ever with hmm's output. */
		close(made[0]);
		close(mapped[1]);
		if (unshare(CLONE_NEWUSER) < 0)
			setup_fail("ids: cannot make a user namespace: %s", strerror(errno));
		if (write(made[1], "u", 1) != 1 || read(mapped[0], &go, 1) != 1)
			_exit(EXIT_SETUP);
		if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
			setup_fail("ids: cannot take the namespace's ids: %s", strerror(errno));
		if (counts)
			user_counts_bound(counts);
		_exit(0);
	}
	close(made[1]);
	close(mapped[0]);
	char got;
	if (read(made[0], &got, 1) != 1) {
		int status;
		waitpid(child, &status, 0);
		_exit(EXIT_SETUP); /* the child has said why */
	}
	write_text(child, "uid_map", map);
	write_text(child, "gid_map", map);
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/ns/user", (long)child);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		setup_fail("ids: cannot open %s: %s", path, strerror(errno));
	if (write(mapped[1], "m", 1) != 1)
		setup_fail("ids: cannot reach the namespace's maker: %s", strerror(errno));
	int status;
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		_exit(EXIT_SETUP);
	close(made[0]);
	close(mapped[1]);
	return fd;
}

/* A clone of the mount at fd's path (that path and what lies beneath it,
 * not the mounts beneath), idmapped where the file system allows: -1
 * where it does not, with errno. */
static int idmapped_clone(int fd)
{
	int clone = (int)syscall(__NR_open_tree, fd, "", IDS_OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH);
	if (clone < 0)
		return -1;
	struct ids_mount_attr attr = {.attr_set = IDS_MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns};
	if (syscall(__NR_mount_setattr, clone, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) {
		int e = errno;
		close(clone);
		errno = e;
		return -1;
	}
	return clone;
}

/* Whether the command can pass every directory on the way to path that is
 * not itself one of its own places (shown as its own, it can): one that
 * only root may search (a home kept beneath a 0700 directory) would keep
 * it from its place. */
static int way_open(const char *path, const char **places, size_t n)
{
	char *p = xstrdup(path);
	int open = 1;
	for (char *slash = strrchr(p, '/'); slash && open; slash = strrchr(p, '/')) {
		*slash = 0;
		const char *dir = slash == p ? "/" : p;
		int own = 0;
		for (size_t i = 0; i < n && !own; i++)
			own = strcmp(dir, "/") != 0 && beneath_or_at(dir, places[i]);
		struct stat st;
		if (!own && stat(dir, &st) == 0)
			open = (st.st_mode & S_IXOTH) != 0;
		if (slash == p)
			break;
	}
	free(p);
	return open;
}

static int can_idmap(const char *path)
{
	int fd = open_no_links(path, O_PATH);
	if (fd < 0)
		return 1; /* not there: nothing to map */
	int clone = idmapped_clone(fd);
	close(fd);
	if (clone < 0)
		return 0;
	close(clone);
	return 1;
}

/* The places shown as the command's own (beneath them, everything). */
static const char **own_places(const struct exec_opts *o, size_t *n)
{
	const char **p = xmalloc(sizeof *p * (o->ngrants + o->ntmp_over + o->nbind_src + 3));
	*n = 0;
	/* The files bound over others (cleaned copies of git's config, in
	 * /etc too; agents' logins): its own to read, as they were. */
	for (size_t i = 0; i < o->nbind_src; i++)
		if (isolate_bound(i))
			p[(*n)++] = o->bind_dst[i];
	for (size_t i = 0; i < o->ngrants; i++)
		if (o->grants[i].cls == CLASS_WRITE)
			p[(*n)++] = o->grants[i].path;
	for (size_t i = 0; i < o->ntmp_over; i++)
		p[(*n)++] = o->tmp_over[i];
	if (o->home)
		p[(*n)++] = o->home;
	if (o->cover_data)
		p[(*n)++] = o->cover_data;
	p[(*n)++] = o->isolate;
	return p;
}

void ids_prepare(const struct exec_opts *o, const struct user_counts *counts)
{
	char map[64];
	snprintf(map, sizeof map, "0 %u %u\n", COMMAND_IDS, COMMAND_IDS_COUNT);
	userns = make_userns(map, counts);
	size_t n;
	const char **places = own_places(o, &n);
	const char *failed = NULL;
	const char *why = "";
	for (size_t i = 0; i < n && !failed && o->home; i++) {
		if (!can_idmap(places[i]))
			failed = places[i], why = strerror(errno);
		else if (!way_open(places[i], places, n))
			failed = places[i], why = "a directory on the way only root may search";
	}
	/* The files to be bound over others: where the way to one is closed
	 * (another user's 0750 home), it was not the command's to reach. */
	for (size_t i = 0; i < o->nbind_src && !failed && o->home; i++)
		if (!can_idmap(o->bind_dst[i]))
			failed = o->bind_dst[i], why = strerror(errno);
	if (o->home && !failed) {
		free(places);
		remapped = 1;
		return;
	}
	/* As before: the command is root over every file. Said to the user
	 * when the home is composed (they expect otherwise) and the command is
	 * theirs: hmm's readers end with their command and say nothing. */
	if (failed && !o->end_with_command)
		fprintf(stderr, "hmm: warning: run as root, the command can read every file root may (%s: %s); hmm sandbox shows it\n",
			failed, why);
	free(places);
	close(userns);
	userns = make_userns("0 0 4294967295\n", counts);
}

int ids_refusal(char **paths, int n, char *why, size_t len)
{
	if (!ids_host_root()) {
		snprintf(why, len, "root of a user namespace, not the host's: its ids cannot be remapped");
		return 1;
	}
	char map[64];
	snprintf(map, sizeof map, "0 %u %u\n", COMMAND_IDS, COMMAND_IDS_COUNT);
	userns = make_userns(map, NULL);
	*why = 0;
	for (int i = 0; i < n && !*why; i++) {
		if (!can_idmap(paths[i]))
			snprintf(why, len, "%s: %s", paths[i], strerror(errno));
		else if (!way_open(paths[i], (const char **)paths, (size_t)n))
			snprintf(why, len, "%s: a directory on the way only root may search", paths[i]);
	}
	close(userns);
	userns = -1;
	return *why != 0;
}

const char *ids_devpts_options(void)
{
	static char options[96];
	if (!remapped)
		return "";
	/* Its pty its own (the tty group, 5, as its 5). */
	snprintf(options, sizeof options, ",uid=%u,gid=%u", COMMAND_IDS, COMMAND_IDS + 5);
	return options;
}

/* ---- the overlays of the caches ---- */

int ids_overlay(int target, const int *lowers, size_t nlowers, const char *layer)
{
	int fs = (int)syscall(__NR_fsopen, "overlay", 1 /* FSOPEN_CLOEXEC */);
	if (fs < 0)
		return -1;
	size_t len = 32 * (nlowers + 1);
	char *lowerdir = xmalloc(len);
	int at = 0;
	int *clones = xmalloc(sizeof *clones * (nlowers + 1));
	for (size_t i = 0; i < nlowers; i++) {
		/* A lower layer that cannot be idmapped (an agent's directory
		 * in a cache mounted before it) is read as it is. */
		clones[i] = idmapped_clone(lowers[i]);
		if (clones[i] < 0)
			clones[i] = (int)syscall(__NR_open_tree, lowers[i], "", IDS_OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH);
		if (clones[i] < 0)
			setup_fail("cache: cannot clone a layer: %s", strerror(errno));
		at += snprintf(lowerdir + at, len - (size_t)at, "%s/proc/self/fd/%d", i ? ":" : "", clones[i]);
	}
	int dir = open_no_links(layer, O_PATH | O_DIRECTORY);
	int mine = dir < 0 ? -1 : idmapped_clone(dir);
	if (mine < 0)
		setup_fail("cache: cannot idmap %s: %s", layer, strerror(errno));
	char upper[64], work[64];
	snprintf(upper, sizeof upper, "/proc/self/fd/%d/upper", mine);
	snprintf(work, sizeof work, "/proc/self/fd/%d/work", mine);
	if (syscall(__NR_fsconfig, fs, IDS_FSCONFIG_SET_STRING, "lowerdir", lowerdir, 0) < 0 ||
	    syscall(__NR_fsconfig, fs, IDS_FSCONFIG_SET_STRING, "upperdir", upper, 0) < 0 ||
	    syscall(__NR_fsconfig, fs, IDS_FSCONFIG_SET_STRING, "workdir", work, 0) < 0 ||
	    syscall(__NR_fsconfig, fs, IDS_FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0)
		setup_fail("cache: cannot configure an overlay: %s", strerror(errno));
	/* Made as the command's root: the overlay writes its upper layer
	 * with its maker's ids, which the idmapped layer must map (root's
	 * own are not in the command's range). Its file capabilities are
	 * raised again, as setfsuid dropped them. */
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct caps[2];
	setfsgid(COMMAND_IDS);
	setfsuid(COMMAND_IDS);
	if (syscall(SYS_capget, &hdr, caps) == 0) {
		caps[0].effective = caps[0].permitted;
		caps[1].effective = caps[1].permitted;
		syscall(SYS_capset, &hdr, caps);
	}
	long created = syscall(__NR_fsconfig, fs, IDS_FSCONFIG_CMD_CREATE, NULL, NULL, 0);
	int e = errno;
	setfsuid(0);
	setfsgid(0);
	if (created < 0) {
		errno = e;
		return -1;
	}
	int mnt = (int)syscall(__NR_fsmount, fs, 1 /* FSMOUNT_CLOEXEC */, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mnt < 0 || syscall(__NR_move_mount, mnt, "", target, "",
			       IDS_MOVE_MOUNT_F_EMPTY_PATH | IDS_MOVE_MOUNT_T_EMPTY_PATH) < 0)
		setup_fail("cache: cannot mount an overlay: %s", strerror(errno));
	close(mnt);
	close(mine);
	close(dir);
	for (size_t i = 0; i < nlowers; i++)
		close(clones[i]);
	free(clones);
	free(lowerdir);
	close(fs);
	return 0;
}

/* ---- the places shown as the command's own ---- */

static int by_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* mountinfo's octal escapes (\040 for a space) undone, in place. */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
}

/* The mount points strictly beneath dir, each once, sorted (a mount
 * before those beneath it). */
static char **mounts_beneath(const char *dir, size_t *n)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		setup_fail("ids: cannot read the mounts: %s", strerror(errno));
	size_t cap = 16;
	char **list = xmalloc(sizeof *list * cap);
	*n = 0;
	char *line = NULL;
	size_t size = 0;
	while (getline(&line, &size, f) > 0) {
		char point[PATH_MAX];
		if (sscanf(line, "%*d %*d %*s %*s %4095s", point) != 1)
			continue;
		unescape(point);
		if (!beneath_or_at(point, dir) || strcmp(point, dir) == 0)
			continue;
		int seen = 0;
		for (size_t i = 0; i < *n && !seen; i++)
			seen = strcmp(list[i], point) == 0;
		if (seen)
			continue;
		if (*n == cap && !(list = realloc(list, sizeof *list * (cap *= 2))))
			oom();
		list[(*n)++] = xstrdup(point);
	}
	free(line);
	fclose(f);
	qsort(list, *n, sizeof *list, by_path);
	return list;
}

/* The place and every mount beneath it, each cloned and idmapped (or, a
 * file system that cannot be, such as the caches' overlays, made on
 * idmapped layers already, cloned as it is), then put back over the
 * original, outermost first. */
static void remap_at(const char *place)
{
	size_t n;
	char **beneath = mounts_beneath(place, &n);
	int *clones = xmalloc(sizeof *clones * (n + 1));
	for (size_t i = 0; i <= n; i++) {
		const char *p = i == 0 ? place : beneath[i - 1];
		int fd = open_no_links(p, O_PATH);
		clones[i] = -1;
		if (fd < 0) {
			if (i == 0)
				setup_fail("ids: cannot open %s: %s", p, strerror(errno));
			continue; /* hidden beneath another mount: not seen */
		}
		clones[i] = idmapped_clone(fd);
		if (clones[i] < 0 && i == 0)
			setup_fail("ids: cannot idmap %s: %s", p, strerror(errno));
		if (clones[i] < 0)
			clones[i] = (int)syscall(__NR_open_tree, fd, "", IDS_OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH);
		if (clones[i] < 0)
			setup_fail("ids: cannot clone %s: %s", p, strerror(errno));
		close(fd);
	}
	for (size_t i = 0; i <= n; i++) {
		if (clones[i] < 0)
			continue;
		const char *p = i == 0 ? place : beneath[i - 1];
		int at = open_no_links(p, O_PATH);
		if (at < 0 || syscall(__NR_move_mount, clones[i], "", at, "",
				      IDS_MOVE_MOUNT_F_EMPTY_PATH | IDS_MOVE_MOUNT_T_EMPTY_PATH) < 0)
			setup_fail("ids: cannot put %s back as the command's: %s", p, strerror(errno));
		close(at);
		close(clones[i]);
	}
	for (size_t i = 0; i < n; i++)
		free(beneath[i]);
	free(beneath);
	free(clones);
}

void ids_remap_places(const struct exec_opts *o)
{
	if (!remapped)
		return;
	size_t n;
	const char **places = own_places(o, &n);
	qsort(places, n, sizeof *places, by_path);
	for (size_t i = 0; i < n; i++) {
		int inner = 0;
		for (size_t j = 0; j < i && !inner; j++)
			inner = beneath_or_at(places[i], places[j]);
		if (!inner)
			remap_at(places[i]);
	}
	free(places);
}

void ids_join(void)
{
	if (userns < 0)
		return;
	if (setns(userns, CLONE_NEWUSER) < 0)
		setup_fail("ids: cannot join the command's user namespace: %s", strerror(errno));
	close(userns);
	userns = -1;
	if (remapped && setgroups(0, NULL) < 0)
		setup_fail("ids: cannot clear the groups: %s", strerror(errno));
	/* Taking other ids clears the parent-death signal (commit_creds): an
	 * init that is the command itself (hmm's readers) would outlive a
	 * killed waiter, blocked on a FIFO for ever. So it is set again. */
	int pdeath = 0;
	prctl(PR_GET_PDEATHSIG, &pdeath);
	if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
		setup_fail("ids: cannot take the command's ids: %s", strerror(errno));
	if (pdeath)
		prctl(PR_SET_PDEATHSIG, pdeath);
}
#endif
