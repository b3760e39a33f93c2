/*
 * The racing process of the removal tests, turning a file into a directory
 * as the remover unlinks it: loaded into the remover (LD_PRELOAD), the
 * first time it unlinks a name lN (a link), the name is made a directory
 * just before: the link moved aside as .lN, a directory lN made holding a
 * file and a link to where lN points. So the remover looked at a link, and
 * its unlink meets a directory (EISDIR). Then, by SWAP_AT_UNLINK:
 *  - back: the directory removed and the link put back at once, so when
 *    the remover looks again the name is the very link it saw (a process
 *    toggling the name on a tight loop does that now and then; this does
 *    it every time);
 *  - stay: the directory stays, the link at .lN beside it.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The names already turned once, by their number. */
static char turned[1000];

int unlinkat(int dfd, const char *name, int flags)
{
	int (*real)(int, const char *, int) = (int (*)(int, const char *, int))dlsym(RTLD_NEXT, "unlinkat");
	int n = name[0] == 'l' && isdigit((unsigned char)name[1]) ? atoi(name + 1) : -1;
	if (flags != 0 || n < 0 || n >= (int)sizeof turned || turned[n])
		return real(dfd, name, flags);
	turned[n] = 1;
	const char *mode = getenv("SWAP_AT_UNLINK");
	char aside[256], target[4096];
	snprintf(aside, sizeof aside, ".%s", name);
	ssize_t len = readlinkat(dfd, name, target, sizeof target - 1);
	if (len < 0 || renameat(dfd, name, dfd, aside) < 0 || mkdirat(dfd, name, 0755) < 0)
		abort();
	target[len] = '\0';
	int dir = openat(dfd, name, O_RDONLY | O_DIRECTORY);
	int file = dir < 0 ? -1 : openat(dir, "f", O_WRONLY | O_CREAT, 0644);
	if (file < 0 || symlinkat(target, dir, "link") < 0)
		abort();
	close(file);
	int r = real(dfd, name, flags);
	int e = errno;
	if (mode && strcmp(mode, "back") == 0) {
		if (real(dir, "f", 0) < 0 || real(dir, "link", 0) < 0 || real(dfd, name, AT_REMOVEDIR) < 0 ||
		    renameat(dfd, aside, dfd, name) < 0)
			abort();
	}
	close(dir);
	errno = e;
	return r;
}
