/*
 * clone: SRC -> DST like `cp -a --reflink=auto`, from a pool of threads.
 *
 * The unit of work is a directory: a worker opens it, makes its twin, reads
 * all its entries, and copies them, every call relative to the two directory
 * descriptors (no path strings to resolve, no link followed). Big
 * directories are cut into chunks that other workers take; subdirectories
 * found on the way are queued for whoever is free. A directory's own mode,
 * owner and times are set only when everything beneath it is done (its
 * mtime would move with every entry made in it), tracked by a count of
 * pending work per directory.
 */
#include "clone.h"

static void *worker(void *arg)
{
	(void)arg;
	struct job *j;
	while ((j = pop()) != NULL) {
		if (j->dir) {
			struct dnode *node = j->dir->node;
			run_chunk(j->dir, j->from, j->to);
			dopen_put(j->dir);
			release(node);
		} else {
			run_dir(j->node, j->sfd, j->dfd);
		}
		free(j);
	}
	/* Leaving on failure: whoever waits for a hard link's first name must
	 * not wait for ever. */
	if (atomic_load(&C.failed))
		links_wake();
	return NULL;
}

static void progress(void)
{
	static unsigned long long last_files = ~0ULL, last_bytes = ~0ULL;
	if (C.progress_fd < 0)
		return;
	unsigned long long f = atomic_load(&C.files), b = atomic_load(&C.bytes);
	if (f == last_files && b == last_bytes)
		return;
	last_files = f;
	last_bytes = b;
	char line[64];
	int n = snprintf(line, sizeof line, "P %llu %llu\n", f, b);
	if (write_all(C.progress_fd, line, (size_t)n) < 0)
		C.progress_fd = -1; /* nobody listens any more; carry on */
}

#define CLONE_USAGE                                                                    \
	"usage: hmm-helper clone [--threads N] [--progress-fd N] [--stat-pairs] "       \
	"[--exclude-from FILE --excluded-to FILE] SRC DST\n"

int cmd_clone(int argc, char **argv)
{
	long threads = 0;
	int stat_pairs = 0;
	const char *exclude_from = NULL, *excluded_to = NULL;
	C.progress_fd = -1;
	C.excluded_fd = -1;
	int i = 2;
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strncmp(argv[i], "--", 2) != 0)
			break;
		if (strcmp(argv[i], "--stat-pairs") == 0) {
			stat_pairs = 1;
			continue;
		}
		if (i + 1 >= argc) {
			fputs(CLONE_USAGE, stderr);
			return 2;
		}
		if (strcmp(argv[i], "--threads") == 0) {
			threads = parse_num(argv[++i], 1, 64);
			if (threads < 0) {
				fputs("hmm-helper: --threads takes 1 to 64\n" CLONE_USAGE, stderr);
				return 2;
			}
		} else if (strcmp(argv[i], "--progress-fd") == 0) {
			long fd = parse_num(argv[++i], 0, INT_MAX);
			if (fd < 0 || fcntl((int)fd, F_GETFD) < 0) {
				fputs("hmm-helper: --progress-fd needs an open descriptor\n" CLONE_USAGE,
				      stderr);
				return 2;
			}
			C.progress_fd = (int)fd;
		} else if (strcmp(argv[i], "--exclude-from") == 0) {
			exclude_from = argv[++i];
		} else if (strcmp(argv[i], "--excluded-to") == 0) {
			excluded_to = argv[++i];
		} else {
			fputs(CLONE_USAGE, stderr);
			return 2;
		}
	}
	if (argc - i != 2) {
		fputs(CLONE_USAGE, stderr);
		return 2;
	}
	C.src = argv[i];
	C.dst = argv[i + 1];
	if (!exclude_from != !excluded_to) {
		fputs("hmm-helper: --exclude-from and --excluded-to go together\n" CLONE_USAGE, stderr);
		return 2;
	}
	if (exclude_from) {
		if (exclude_load(exclude_from) < 0) {
			fprintf(stderr, "hmm: clone: %s: %s\n", exclude_from, strerror(errno));
			return 1;
		}
		C.excluded_fd = open(excluded_to, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (C.excluded_fd < 0) {
			fprintf(stderr, "hmm: clone: %s: %s\n", excluded_to, strerror(errno));
			return 1;
		}
	}
	if (stat_pairs)
		sp_load();
	if (threads == 0) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		threads = cpus < 2 ? 2 : cpus > 4 ? 4 : cpus;
	}
	C.nthreads = (int)threads;

	signal(SIGPIPE, SIG_IGN); /* a closed progress pipe is not fatal */
	umask(0);		  /* creation modes are exactly the source's */
	C.euid = geteuid();
	C.egid = getegid();
	atomic_init(&C.noatime, O_NOATIME != 0);

	/* Many directories may be open at once (two descriptors each while
	 * queued): take all the descriptors we are allowed. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rlim_t want = rl.rlim_max > (rlim_t)(1 << 20) ? (rlim_t)(1 << 20) : rl.rlim_max;
			if (want > rl.rlim_cur) {
				rl.rlim_cur = want;
				if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
					getrlimit(RLIMIT_NOFILE, &rl);
			}
		}
		long lim = rl.rlim_cur == RLIM_INFINITY ? (1 << 20) : (long)rl.rlim_cur;
		C.queue_limit = (lim - 64) / 4;
	} else {
		C.queue_limit = 200;
	}
	if (C.queue_limit < 16)
		C.queue_limit = 16;
	if (C.queue_limit > 4096)
		C.queue_limit = 4096;

	int sfd = open(C.src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOATIME);
	if (sfd < 0 && errno == EPERM && O_NOATIME) {
		atomic_store(&C.noatime, 0);
		sfd = open(C.src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (sfd < 0) {
		clone_fail(0, ".", NULL, errno);
		return 1;
	}
	struct stat st;
	if (fstat(sfd, &st) < 0) {
		clone_fail(0, ".", NULL, errno);
		return 1;
	}
	/* DST must be new: we never merge into (or clobber) a directory. 0700
	 * until its contents are done; chmod also drops a setgid bit inherited
	 * from DST's parent, which would otherwise hand its group to every
	 * file we make. */
	if (mkdir(C.dst, 0700) < 0) {
		clone_fail(1, ".", NULL, errno);
		return 1;
	}
	int dfd = open(C.dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fchmod(dfd, 0700) < 0) {
		clone_fail(1, ".", NULL, errno);
		return 1;
	}
	struct stat dst_st;
	if (fstat(dfd, &dst_st) < 0) {
		clone_fail(1, ".", NULL, errno);
		return 1;
	}
	int side, e = copy_xattrs(sfd, dfd, -1, -1, NULL, &side, 1);
	if (e) {
		clone_fail(side, ".", NULL, e);
		return 1;
	}
	C.dst_dev = dst_st.st_dev;
	C.dst_ino = dst_st.st_ino;
	C.dst_root = dup(dfd);
	if (C.dst_root < 0) {
		clone_fail(1, ".", NULL, errno);
		return 1;
	}
#ifdef __linux__
	/* A default ACL above DST decides creation modes instead of umask;
	 * then every mode is set explicitly. */
	if (fgetxattr(dfd, "system.posix_acl_default", NULL, 0) >= 0)
		C.always_chmod = 1;
#else
	C.always_chmod = 1;
#endif

	struct dnode *root = xmalloc(sizeof *root);
	root->parent = NULL;
	atomic_init(&root->pending, 1);
	root->rel = xstrdup(".");
	root->mode = st.st_mode;
	root->uid = st.st_uid;
	root->gid = st.st_gid;
	root->times[0] = ST_ATIM(st);
	root->times[1] = ST_MTIM(st);
	struct job *j = xmalloc(sizeof *j);
	memset(j, 0, sizeof *j);
	j->node = root;
	j->sfd = sfd;
	j->dfd = dfd;
	push(j);

	pthread_t *tids = xmalloc(sizeof *tids * (size_t)C.nthreads);
	int started = 0;
	for (int t = 0; t < C.nthreads; t++) {
		if (pthread_create(&tids[t], NULL, worker, NULL) != 0)
			break;
		started++;
	}
	if (started == 0) {
		fputs("hmm: clone: cannot start a thread\n", stderr);
		return 1;
	}
	if (started < C.nthreads) {
		/* Fewer threads than asked: the "everyone is idle" count must
		 * match the ones that run. */
		pthread_mutex_lock(&C.mu);
		C.nthreads = started;
		pthread_mutex_unlock(&C.mu);
	}

	/* This thread reports progress about every 100 ms until done. */
	pthread_mutex_lock(&C.mu);
	while (!C.done) {
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_nsec += 100 * 1000 * 1000;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&C.done_cv, &C.mu, &dl);
		if (!C.done) {
			pthread_mutex_unlock(&C.mu);
			progress();
			pthread_mutex_lock(&C.mu);
		}
	}
	pthread_mutex_unlock(&C.mu);
	for (int t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	progress();
	if (atomic_load(&C.failed))
		return 1;
	if (sp_write() < 0) {
		fputs("hmm: clone: cannot write the stat pairs\n", stderr);
		return 1;
	}
	return 0;
}
