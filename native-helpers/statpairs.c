/*
 * stat-pairs: the stat data of the same relative paths under two roots.
 *
 * hmm gives the workspace's first index the clone's stat data wherever the
 * origin's file provably did not change since git hashed it; that needs two
 * lstat calls for every file of the tree, which from Node cost ~4.5 us each
 * (about a second for 100,000 files). Here they are plain fstatat calls.
 *
 * Input: relative paths on stdin, each ended by NUL. Output: for each path
 * two records (ROOT_A's, then ROOT_B's) of 41 bytes: a kind byte (0 missing,
 * 1 regular file, 2 symbolic link, 3 anything else), then ctime s, ctime ns,
 * mtime s, mtime ns, dev, ino, mode, uid, gid, size as big-endian 32-bit
 * words (low bits), the layout of git's index. Links are not followed.
 * A path that is absolute or has a `..` component is refused (exit 1).
 * The same root twice is looked at once (both records alike).
 *
 * clone --stat-pairs gives the same answer while it copies (sp_* below).
 *
 * larger-than LIMIT TOTAL [FILE...]: whether any of the relative paths in
 * the FILEs, in turn, or else on stdin (each ended by NUL, relative to the
 * working directory) is a regular file of more than LIMIT bytes, or all of
 * them more than TOTAL together; exit 3 if so, 0 if not. Links are not
 * followed; a path that is not there is no file. hmm runs it in the sandbox
 * that reads a workspace, between the gits listing the files git add would
 * read and git update-index reading them (git/changes.ts): one sandbox for
 * them all instead of one per git. Within the limits, it writes the paths
 * back on stdout as update-index takes them: a nested repository, which
 * ls-files lists as `dir/`, by its name.
 */
#include "hmm-helper.h"


static void put32(unsigned char *p, uint64_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* One record of the layout described at the top. */
static void put_stat(const struct stat *st, unsigned char *out)
{
	out[0] = S_ISREG(st->st_mode) ? 1 : S_ISLNK(st->st_mode) ? 2 : 3;
#ifdef __APPLE__
	struct timespec ctime = st->st_ctimespec, mtime = st->st_mtimespec;
#else
	struct timespec ctime = st->st_ctim, mtime = st->st_mtim;
#endif
	uint64_t fields[10] = {(uint64_t)ctime.tv_sec, (uint64_t)ctime.tv_nsec,
			       (uint64_t)mtime.tv_sec, (uint64_t)mtime.tv_nsec,
			       (uint64_t)st->st_dev,   (uint64_t)st->st_ino,
			       (uint64_t)st->st_mode,  (uint64_t)st->st_uid,
			       (uint64_t)st->st_gid,   (uint64_t)st->st_size};
	for (int i = 0; i < 10; i++)
		put32(out + 1 + 4 * i, fields[i]);
}

/* Whether a path names something below a root: relative, and no `..`
 * component (which would climb out of it). */
static int below_root(const char *p)
{
	if (p[0] == '/')
		return 0;
	for (const char *c = p;; c++) { /* c: the start of a component */
		if (c[0] == '.' && c[1] == '.' && (c[2] == '/' || c[2] == '\0'))
			return 0;
		if (!(c = strchr(c, '/')))
			return 1;
	}
}

/* Adds the relative paths read from `in`, each ended by NUL, to
 * paths[*n..] (*cap slots); one that is not below the roots ends the mode
 * (exit 1, naming it) before anything is looked at. */
static void read_paths_from(FILE *in, const char *mode, char ***paths, size_t *n, size_t *cap)
{
	char *line = NULL;
	size_t linecap = 0;
	ssize_t len;
	while ((len = getdelim(&line, &linecap, '\0', in)) > 0 && line[len - 1] == '\0') {
		if (*n == *cap) {
			*cap *= 2;
			*paths = realloc(*paths, *cap * sizeof **paths);
			if (!*paths)
				oom();
		}
		if (!below_root(line)) {
			fprintf(stderr, "hmm-helper: %s: not a path below the roots: %s\n", mode, line);
			exit(1);
		}
		(*paths)[(*n)++] = xstrdup(line);
	}
	free(line);
}

/* The paths of each of files[0..nfiles) in turn, or of stdin if none. */
static char **read_paths_of(const char *mode, char **files, int nfiles, size_t *count)
{
	size_t n = 0, cap = 1024;
	char **paths = xmalloc(cap * sizeof *paths);
	if (nfiles == 0)
		read_paths_from(stdin, mode, &paths, &n, &cap);
	for (int i = 0; i < nfiles; i++) {
		FILE *in = fopen(files[i], "re");
		if (!in) {
			fprintf(stderr, "hmm-helper: %s: cannot read %s: %s\n", mode, files[i], strerror(errno));
			exit(1);
		}
		read_paths_from(in, mode, &paths, &n, &cap);
		fclose(in);
	}
	*count = n;
	return paths;
}

static char **read_paths(const char *mode, size_t *count)
{
	return read_paths_of(mode, NULL, 0, count);
}

/* ---- stat pairs while cloning (clone --stat-pairs) ----
 * The answer the stat-pairs mode (below) would give right after the clone,
 * without looking every path up again: for each regular file made, the
 * source's stat data taken after its bytes were copied (so a change during
 * the copy shows) and the copy's after its last change. Names of files with
 * several links, and anything else, are answered "missing": hmm then lets
 * git read them. */
static struct {
	int on;
	char **paths;
	size_t n;
	size_t *slots; /* open addressing: index + 1; 0 is empty */
	size_t mask;
	unsigned char *out;
} SP;

static size_t sp_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)h;
}

void sp_load(void)
{
	SP.paths = read_paths("clone", &SP.n);
	size_t size = 1024;
	while (size < 2 * SP.n)
		size *= 2;
	SP.mask = size - 1;
	SP.slots = calloc(size, sizeof *SP.slots);
	SP.out = calloc(SP.n ? 2 * STAT_RECORD * SP.n : 1, 1);
	if (!SP.slots || !SP.out)
		oom();
	for (size_t i = 0; i < SP.n; i++) {
		size_t h = sp_hash(SP.paths[i]) & SP.mask;
		while (SP.slots[h])
			h = (h + 1) & SP.mask;
		SP.slots[h] = i + 1;
	}
	SP.on = 1;
}

/* The index of a relative path in the input, or -1. */
static long sp_find(const char *rel)
{
	for (size_t h = sp_hash(rel) & SP.mask; SP.slots[h]; h = (h + 1) & SP.mask)
		if (strcmp(SP.paths[SP.slots[h] - 1], rel) == 0)
			return (long)(SP.slots[h] - 1);
	return -1;
}

/* A regular file was copied from s to t, its metadata all set. Each path
 * has one slot, written by the one thread that copies it. */
void sp_note(const char *rel, const char *name, int s, int t, const struct stat *st)
{
	if (!SP.on || st->st_nlink != 1)
		return;
	char *r = rel_join(rel, name);
	long i = sp_find(r);
	free(r);
	struct stat after_src, after_dst;
	if (i < 0 || fstat(s, &after_src) < 0 || fstat(t, &after_dst) < 0)
		return;
	put_stat(&after_src, SP.out + 2 * STAT_RECORD * (size_t)i);
	put_stat(&after_dst, SP.out + 2 * STAT_RECORD * (size_t)i + STAT_RECORD);
}

/* The answers of clone --stat-pairs on stdout, if it was asked for. */
int sp_write(void)
{
	if (!SP.on)
		return 0;
	size_t bytes = 2 * STAT_RECORD * SP.n;
	return fwrite(SP.out, 1, bytes, stdout) == bytes && fflush(stdout) == 0 ? 0 : -1;
}

static void stat_record(int root, const char *rel, unsigned char *out)
{
	struct stat st;
	memset(out, 0, STAT_RECORD);
	if (fstatat(root, rel, &st, AT_SYMLINK_NOFOLLOW) == 0)
		put_stat(&st, out);
}

struct stat_job {
	int roots[2];
	int same_root;
	char **paths;
	size_t from, to;
	unsigned char *out;
};

static void *stat_worker(void *arg)
{
	struct stat_job *job = arg;
	for (size_t i = job->from; i < job->to; i++) {
		const char *rel = job->paths[i];
		unsigned char *out = job->out + 2 * STAT_RECORD * i;
		stat_record(job->roots[0], rel, out);
		if (job->same_root)
			memcpy(out + STAT_RECORD, out, STAT_RECORD);
		else
			stat_record(job->roots[1], rel, out + STAT_RECORD);
	}
	return NULL;
}

int cmd_stat_pairs(int argc, char **argv)
{
	if (argc != 4) {
		fputs("usage: hmm-helper stat-pairs ROOT_A ROOT_B < NUL-separated paths\n", stderr);
		return 2;
	}
	struct stat_job base = {0};
	base.same_root = strcmp(argv[2], argv[3]) == 0;
	for (int i = 0; i < 2; i++) {
		base.roots[i] = open(argv[2 + i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (base.roots[i] < 0) {
			fprintf(stderr, "hmm-helper: %s: %s\n", argv[2 + i], strerror(errno));
			return 1;
		}
	}
	/* All paths first, then the lookups from two threads: the kernel's path
	 * walk is most of the cost, and it runs in parallel. */
	size_t n;
	base.paths = read_paths("stat-pairs", &n);
	base.out = xmalloc(n * 2 * STAT_RECORD + 1);
	struct stat_job halves[2] = {base, base};
	halves[0].from = 0;
	halves[0].to = halves[1].from = n / 2;
	halves[1].to = n;
	pthread_t other;
	int threaded = n > 1000 && pthread_create(&other, NULL, stat_worker, &halves[1]) == 0;
	stat_worker(&halves[0]);
	if (threaded)
		pthread_join(other, NULL);
	else
		stat_worker(&halves[1]);
	size_t bytes = n * 2 * STAT_RECORD;
	if (fwrite(base.out, 1, bytes, stdout) != bytes)
		return 1;
	return fflush(stdout) == 0 ? 0 : 1;
}

int cmd_larger_than(int argc, char **argv)
{
	long limit = argc >= 4 ? parse_num(argv[2], 0, LONG_MAX) : -1;
	long total = argc >= 4 ? parse_num(argv[3], 0, LONG_MAX) : -1;
	if (limit < 0 || total < 0) {
		fputs("usage: hmm-helper larger-than LIMIT TOTAL [FILE...] < NUL-separated paths\n", stderr);
		return 2;
	}
	size_t n;
	char **paths = read_paths_of("larger-than", argv + 4, argc - 4, &n);
	long left = total; /* what the files may still take together */
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (fstatat(AT_FDCWD, paths[i], &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (st.st_size > limit || st.st_size > left)
			return 3;
		left -= st.st_size;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(paths[i]);
		if (len > 1 && paths[i][len - 1] == '/')
			len--;
		if (fwrite(paths[i], 1, len, stdout) != len || putchar('\0') == EOF)
			return 1;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
