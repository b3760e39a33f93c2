/*
 * readonly: in the command's mount namespace every mount is read-only but
 * the places the command may write (attacker's review 5, F8). Landlock has
 * no right for chmod, chown, utimensat or setxattr: with it alone the
 * command changes the modes, owners, times and attributes of any file its
 * uid owns (as root, of every file: a set-user-ID root shell, /etc/passwd
 * given away). A read-only mount refuses them all (EROFS), whatever the
 * capabilities; Landlock stays the layer that decides what is read and
 * written.
 *
 * Runs in the init after every other mount (mounts.c), as bubblewrap
 * does with its binds, but keeping the host's view: each place the command
 * may write (its tree, /tmp, caches, -w and config paths, agents' layers
 * and binds, its /dev's shm, mqueue and pts) is cloned with everything
 * mounted beneath it, as it is (open_tree, recursive); then every mount is
 * made read-only (mount_setattr, recursive; in a user namespace adding
 * read-only to a locked mount is allowed, and a mount read-only outside
 * stays so in the clone); then each clone is put back on its place. A
 * place beneath another is in the other's clone already. Device nodes are
 * written on a read-only mount as anywhere, so are not cloned. Each place
 * is opened through no link (util.c open_no_links), as the grants are.
 */
#include "hmm-helper.h"

#ifdef __linux__
#ifndef __NR_open_tree
#define __NR_open_tree 428
#endif
#ifndef __NR_move_mount
#define __NR_move_mount 429
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#define HMM_OPEN_TREE_CLONE 1
#define HMM_MOVE_MOUNT_F_EMPTY_PATH 0x04
#define HMM_MOVE_MOUNT_T_EMPTY_PATH 0x40
#define HMM_MOUNT_ATTR_RDONLY 0x1
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

/* The kernel's struct mount_attr, by our own name (older headers lack it). */
struct hmm_mount_attr {
	uint64_t attr_set;
	uint64_t attr_clr;
	uint64_t propagation;
	uint64_t userns_fd;
};

static int by_path(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every mount at or beneath root read-only, but the places (sorted) at or
 * beneath it: each cloned first, with what is mounted beneath it, and put
 * back after. */
static void read_only_at(const char *root, const char **places, size_t n)
{
	const char **cloned = xmalloc(sizeof *cloned * (n + 1));
	int *clones = xmalloc(sizeof *clones * (n + 1));
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		int inside = !beneath_or_at(places[i], root);
		for (size_t k = 0; k < kept; k++)
			inside |= beneath_or_at(places[i], cloned[k]);
		if (inside)
			continue;
		int fd = open_no_links(places[i], O_PATH);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0 || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
			/* Not there as named: its grant gives nothing either. */
			if (fd >= 0)
				close(fd);
			continue;
		}
		int clone = (int)syscall(__NR_open_tree, fd, "",
					 HMM_OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
		if (clone < 0)
			setup_fail("read-only: cannot clone %s: %s", places[i], strerror(errno));
		close(fd);
		cloned[kept] = places[i];
		clones[kept++] = clone;
	}

	struct hmm_mount_attr ro = {.attr_set = HMM_MOUNT_ATTR_RDONLY};
	if (syscall(__NR_mount_setattr, AT_FDCWD, root, AT_RECURSIVE, &ro, sizeof ro) < 0)
		setup_fail("read-only: cannot make the mounts at %s read-only: %s", root, strerror(errno));

	for (size_t i = 0; i < kept; i++) {
		int at = open_no_links(cloned[i], O_PATH);
		if (at < 0 || syscall(__NR_move_mount, clones[i], "", at, "",
				      HMM_MOVE_MOUNT_F_EMPTY_PATH | HMM_MOVE_MOUNT_T_EMPTY_PATH) < 0)
			setup_fail("read-only: cannot put %s back writable: %s", cloned[i], strerror(errno));
		close(at);
		close(clones[i]);
	}
	free(clones);
	free(cloned);
}

void read_only_but_granted(const struct exec_opts *o)
{
	/* The places, sorted: a directory comes before what lies beneath it. */
	const char **places = xmalloc(sizeof *places * (o->ngrants + 1));
	size_t n = 0;
	for (size_t i = 0; i < o->ngrants; i++)
		if (o->grants[i].cls != CLASS_READ)
			places[n++] = o->grants[i].path;
	qsort(places, n, sizeof *places, by_path);
	/* -w /: everything may be written (a clone on / would not be seen). */
	if (n > 0 && strcmp(places[0], "/") == 0) {
		free(places);
		return;
	}
	read_only_at("/", places, n);
	/* A place at or holding hmm's data directory (-w ~/.local, -w ~; hmm
	 * refuses a grant of the data directory itself, this holds should one
	 * reach here) brought it back in its clone as cover_data made it,
	 * writable: the workspace's bookkeeping (its private repository, lock)
	 * open to change. It is made read-only again, but for the places
	 * strictly beneath it (the tree, /tmp). */
	char *data = o->cover_data ? realpath(o->cover_data, NULL) : NULL;
	int held = 0;
	size_t m = 0;
	const char **beneath = xmalloc(sizeof *beneath * (n + 1));
	for (size_t i = 0; data && i < n; i++) {
		held |= beneath_or_at(data, places[i]);
		if (beneath_or_at(places[i], data) && strcmp(places[i], data) != 0)
			beneath[m++] = places[i];
	}
	if (held)
		read_only_at(data, beneath, m);
	free(beneath);
	free(data);
	free(places);
}
#endif /* __linux__ */
