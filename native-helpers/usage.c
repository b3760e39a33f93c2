/*
 * disk-usage: the disk space directories of a workspace take, for `hmm ls
 * -l`.
 *
 *   hmm-helper disk-usage DIR...
 *
 * Prints one line per DIR: the bytes allocated to everything under it, DIR
 * itself included (st_blocks * 512, as du counts them: a sparse file counts
 * what it holds, not its length), each inode once however many links it
 * has in DIR.
 *
 * Where it stands on security: the directories are the command's to change
 * while this runs (its /tmp, its cache layers, its tree), and it may have
 * made millions of entries, links, or names that change under us. The walk
 * is fts(3) with FTS_PHYSICAL, as du's: a link is counted as a link, never
 * followed; a directory is entered only after its descriptor is checked to
 * be the directory that was lstat'd (a link swapped in is not entered), and
 * climbing back up through ".." is checked the same way, so the walk never
 * leaves DIR; with FTS_XDEV it does not enter another file system. What
 * vanishes meanwhile is not counted, and a directory it cannot read (one the
 * command made 0000) counts as itself only: the figure is what could be
 * seen, never an error. Its cost is one lstat per entry.
 */

#include "hmm-helper.h"
#include <fts.h>

struct linked {
	dev_t dev;
	ino_t ino;
	blkcnt_t blocks;
};

static int by_inode(const void *a, const void *b)
{
	const struct linked *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return 0;
}

/* The bytes allocated under DIR; 0 for a DIR that is not there. */
static unsigned long long usage_of(char *dir)
{
	char *roots[] = {dir, NULL};
	FTS *fts = fts_open(roots, FTS_PHYSICAL | FTS_XDEV, NULL);
	if (!fts)
		return 0;
	unsigned long long blocks = 0;
	struct linked *linked = NULL;
	size_t count = 0, room = 0;
	FTSENT *e;
	while ((e = fts_read(fts)) != NULL) {
		/* Each directory once (not again on the way out); nothing
		 * for what could not be stat'ed (it vanished). */
		if (e->fts_info == FTS_DP || e->fts_info == FTS_NS || e->fts_info == FTS_ERR || !e->fts_statp)
			continue;
		const struct stat *st = e->fts_statp;
		if (S_ISDIR(st->st_mode) || st->st_nlink <= 1) {
			blocks += (unsigned long long)st->st_blocks;
			continue;
		}
		if (count == room) {
			room = room ? room * 2 : 64;
			linked = realloc(linked, room * sizeof *linked);
			if (!linked)
				oom();
		}
		linked[count++] = (struct linked){st->st_dev, st->st_ino, st->st_blocks};
	}
	/* fts_read stops early (NULL, errno set) where it cannot climb back
	 * safely: what was counted so far stands. */
	fts_close(fts);
	qsort(linked, count, sizeof *linked, by_inode);
	for (size_t i = 0; i < count; i++)
		if (i == 0 || by_inode(&linked[i - 1], &linked[i]) != 0)
			blocks += (unsigned long long)linked[i].blocks;
	free(linked);
	return blocks * 512;
}

int cmd_disk_usage(int argc, char **argv)
{
	if (argc < 3) {
		fputs("usage: hmm-helper disk-usage DIR...\n", stderr);
		return 2;
	}
	for (int i = 2; i < argc; i++)
		printf("%llu\n", usage_of(argv[i]));
	return fflush(stdout) == 0 ? 0 : 1;
}
