/*
 * clone: what a copy carries besides names and modes, as `cp -a
 * --reflink=auto` carries it: a regular file's bytes (shared where the file
 * system can, holes kept as holes where it cannot) and every entry's
 * extended attributes. clone-copy.c calls these for each entry it makes.
 */
#include "clone.h"

static _Thread_local char *rw_buf;
#define RW_BUF (1 << 17)

/* len bytes at off from s to t (the same offset in both): an in-kernel
 * copy, else pread/pwrite. Stops early if the source shrank. */
static int copy_range(int s, int t, off_t off, off_t len)
{
	off_t done = 0;
#ifdef __linux__
	while (done < len) {
		loff_t in = off + done, out = off + done;
		ssize_t n = copy_file_range(s, &in, t, &out, (size_t)(len - done), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (done == 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
					  errno == EOPNOTSUPP || errno == EBADF))
				break; /* pread/pwrite below */
			return -1;
		}
		if (n == 0)
			return 0; /* it shrank */
		done += n;
	}
	if (done >= len)
		return 0;
#endif
	if (!rw_buf)
		rw_buf = xmalloc(RW_BUF);
	while (done < len) {
		size_t want = len - done < RW_BUF ? (size_t)(len - done) : RW_BUF;
		ssize_t n = pread(s, rw_buf, want, off + done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		for (ssize_t w = 0; w < n;) {
			ssize_t m = pwrite(t, rw_buf + w, (size_t)(n - w), off + done + w);
			if (m < 0 && errno != EINTR)
				return -1;
			if (m > 0)
				w += m;
		}
		done += n;
	}
	return 0;
}

/* A file with holes: only its data is copied, found with SEEK_DATA and
 * SEEK_HOLE, so holes stay holes (an in-kernel copy fills them with zeros).
 * Returns 1 when copied, 0 when the file system cannot say where the data
 * is (then copy it whole), -1 on error. */
static int copy_sparse(int s, int t, off_t size)
{
	for (off_t pos = 0; pos < size;) {
		off_t data = lseek(s, pos, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break; /* nothing but a hole up to the end */
		if (data < 0)
			return pos == 0 && (errno == EINVAL || errno == EOPNOTSUPP) ? 0 : -1;
		if (data >= size)
			break;
		off_t hole = lseek(s, data, SEEK_HOLE);
		if (hole < 0)
			return -1;
		if (hole > size)
			hole = size;
		if (copy_range(s, t, data, hole - data) < 0)
			return -1;
		pos = hole;
	}
	return ftruncate(t, size) < 0 ? -1 : 1;
}

#ifdef __linux__
static _Thread_local dev_t noreflink_dev = (dev_t)-1;
#endif

/* Copy size bytes from s to t: a reflink where the file system shares
 * blocks (nothing is copied, holes included), else the data without the
 * holes for a file with fewer blocks than its size (as cp does), else an
 * in-kernel copy, else read/write. Stops at the size seen by fstat: the
 * clone is a snapshot of that moment. */
int copy_data(int s, int t, const struct stat *st)
{
	off_t size = st->st_size;
	if (size == 0)
		return 0;
#ifdef __linux__
#ifndef FICLONE
#define FICLONE _IOW(0x94, 9, int)
#endif
	if (st->st_dev != noreflink_dev) {
		if (ioctl(t, FICLONE, s) == 0)
			return 0;
		/* Not on this file system: stop asking. Any other refusal
		 * (e.g. btrfs nodatacow) is this file's: copy it instead. */
		if (errno == EOPNOTSUPP || errno == ENOTTY || errno == EXDEV ||
		    errno == ENOSYS)
			noreflink_dev = st->st_dev;
	}
#endif
	if ((off_t)st->st_blocks * 512 < size) {
		int r = copy_sparse(s, t, size);
		if (r != 0)
			return r < 0 ? -1 : 0;
	}
	return copy_range(s, t, 0, size);
}

/* ---- extended attributes ----
 * user.* are copied always, as cp -a does (a destination file system
 * without them: skipped, as cp -a skips them); the other namespaces
 * (security.*, trusted.*, system.* ACLs) where the kernel lets us, skipped
 * silently where it does not (EPERM, ENOTSUP), since only root or an LSM
 * may set most of them. Linux only: macOS clones with cp -c. */

#ifdef __linux__
/* One side: an open regular file or directory, or else a path through
 * /proc/self/fd/<dir>/<name> (links, FIFOs, devices cannot be opened
 * safely), relative to the directory descriptor, its last name not followed. */
struct xside {
	int fd;
	char path[64 + NAME_MAX];
};

static void xside_init(struct xside *x, int fd, int dir, const char *name)
{
	x->fd = fd;
	x->path[0] = '\0';
	if (fd < 0)
		snprintf(x->path, sizeof x->path, "/proc/self/fd/%d/%s", dir, name);
}

static ssize_t x_list(const struct xside *x, char *buf, size_t n)
{
	return x->fd >= 0 ? flistxattr(x->fd, buf, n) : llistxattr(x->path, buf, n);
}

static ssize_t x_get(const struct xside *x, const char *name, void *buf, size_t n)
{
	return x->fd >= 0 ? fgetxattr(x->fd, name, buf, n) : lgetxattr(x->path, name, buf, n);
}

static int x_set(const struct xside *x, const char *name, const void *v, size_t n)
{
	return x->fd >= 0 ? fsetxattr(x->fd, name, v, n, 0) : lsetxattr(x->path, name, v, n, 0);
}

/* A NUL-separated list or value, read whole however it grows meanwhile. */
static ssize_t x_read(const struct xside *x, const char *name, char **out)
{
	for (;;) {
		ssize_t n = name ? x_get(x, name, NULL, 0) : x_list(x, NULL, 0);
		if (n <= 0) {
			*out = NULL;
			return n;
		}
		*out = xmalloc((size_t)n);
		ssize_t got = name ? x_get(x, name, *out, (size_t)n) : x_list(x, *out, (size_t)n);
		if (got >= 0)
			return got;
		int e = errno;
		free(*out);
		*out = NULL;
		if (e != ERANGE)
			return errno = e, -1;
	}
}

static int skipped(const char *name, int err)
{
	if (err == ENOTSUP || err == EOPNOTSUPP)
		return 1;
	return strncmp(name, "user.", 5) != 0 && (err == EPERM || err == EACCES);
}
#endif

/* Copies the extended attributes of one entry: by descriptors s and t when
 * both are open (>= 0), else by name in the directories sdir and tdir;
 * security.capability only with_caps. Returns 0, or an errno with *side
 * set (0: reading the source). */
int copy_xattrs(int s, int t, int sdir, int tdir, const char *name, int *side, int with_caps)
{
#ifdef __linux__
	struct xside src, dst;
	xside_init(&src, s, sdir, name);
	xside_init(&dst, t, tdir, name);
	char *names;
	ssize_t n = x_read(&src, NULL, &names);
	*side = 0;
	if (n < 0)
		return errno == ENOTSUP || errno == EOPNOTSUPP ? 0 : errno;
	int e = 0;
	for (char *k = names; !e && k < names + n; k += strlen(k) + 1) {
		/* A file's capabilities go with its owner, as its set-user-ID. */
		if (!with_caps && strcmp(k, "security.capability") == 0)
			continue;
		char *value;
		ssize_t len = x_read(&src, k, &value);
		if (len < 0) {
			if (errno != ENODATA && !skipped(k, errno))
				e = errno; /* ENODATA: removed since it was listed */
		} else if (x_set(&dst, k, value, (size_t)len) < 0 && !skipped(k, errno)) {
			e = errno;
			*side = 1;
		}
		free(value);
	}
	free(names);
	return e;
#else
	(void)s, (void)t, (void)sdir, (void)tdir, (void)name, (void)side, (void)with_caps;
	return 0;
#endif
}
