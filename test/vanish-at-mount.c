/*
 * A mask target removed at the worst moment, every time: loaded into the
 * helper (LD_PRELOAD), it removes the directory or file a mount is about
 * to cover, when its name starts with "vanishing", after the helper opened
 * it and just before the mount: as when another program removes it
 * (/run/screen, a socket) between hmm making the policy and the helper's
 * mount.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

int mount(const char *source, const char *target, const char *type, unsigned long flags, const void *data)
{
	char path[PATH_MAX];
	ssize_t n = target ? readlink(target, path, sizeof path - 1) : -1;
	if (n > 0) {
		path[n] = '\0';
		char copy[PATH_MAX];
		strcpy(copy, path);
		if (strncmp(basename(copy), "vanishing", 9) == 0 && rmdir(path) != 0)
			unlink(path);
	}
	int (*real)(const char *, const char *, const char *, unsigned long, const void *) =
		(int (*)(const char *, const char *, const char *, unsigned long, const void *))dlsym(RTLD_NEXT, "mount");
	return real(source, target, type, flags, data);
}
