/*
 * cover-data: hmm's data directory, as the command sees it, holds its own
 * workspace's directory and nothing else (SPEC "Sandbox": no other
 * workspace, not the registry). Landlock hides the rest from reading, but
 * not from connect(): a server listening on a socket in another
 * workspace's /tmp would be reachable by its path. So, in the command's
 * mount namespace, an empty tmpfs covers the data directory and the
 * workspace's directory is bound back in it, taken by a descriptor opened
 * before the cover. A workspace made later is in none of it.
 */
#include "hmm-helper.h"

#ifdef __linux__
#include <sys/mount.h>

void cover_data(const struct exec_opts *o)
{
	if (!o->cover_data)
		return;
	/* Compared as they really are: hmm may name them through a link. */
	char *data = realpath(o->cover_data, NULL);
	char *ws = realpath(o->isolate, NULL);
	if (!data || !ws)
		setup_fail("data: cannot resolve %s: %s", data ? o->isolate : o->cover_data,
			   strerror(errno));
	size_t n = strlen(data);
	if (strncmp(ws, data, n) != 0 || ws[n] != '/' || strchr(ws + n + 1, '/'))
		setup_fail("data: the workspace %s is not a directory of %s", ws, data);
	int own = open(ws, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (own < 0)
		setup_fail("data: cannot open %s: %s", ws, strerror(errno));
	const unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
	if (mount("tmpfs", data, "tmpfs", flags, "mode=0700") < 0)
		setup_fail("data: cannot mount tmpfs on %s: %s", data, strerror(errno));
	if (mkdir(ws, 0700) < 0)
		setup_fail("data: cannot make %s: %s", ws, strerror(errno));
	char from[64];
	snprintf(from, sizeof from, "/proc/self/fd/%d", own);
	if (mount(from, ws, NULL, MS_BIND | MS_REC, NULL) < 0)
		setup_fail("data: cannot bind %s back: %s", ws, strerror(errno));
	close(own);
	/* Nothing may be made beside it. */
	if (mount(NULL, data, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | flags, NULL) < 0)
		setup_fail("data: cannot make %s read-only: %s", data, strerror(errno));
	free(ws);
	free(data);
}
#endif
