/*
 * An LD_PRELOAD shim for net.test.ts: what a slow bridge on a loaded machine
 * met by chance, every time. A process that opens /dev/null after making
 * itself a session leader (the bridge, and nothing else before the command's
 * /dev is made) waits until the init, making that /dev, has put there the
 * empty file a bind of null will cover, or has finished. The init lingers
 * 20 ms after making each such file, for the wait to see it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

int open(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	if (!real)
		real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	mode_t mode = 0;
	if (flags & O_CREAT) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (strncmp(path, "/dev/", 5) == 0 && (flags & O_CREAT)) {
		int fd = real(path, flags, mode);
		struct timespec linger = {0, 20000000};
		nanosleep(&linger, NULL);
		return fd;
	}
	if (strcmp(path, "/dev/null") == 0 && getsid(0) == getpid()) {
		struct timespec tick = {0, 100000};
		for (int i = 0; i < 50000; i++) {
			struct stat st;
			struct statvfs vfs;
			if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
				break;
			if (statvfs("/dev", &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
				break;
			nanosleep(&tick, NULL);
		}
	}
	return real(path, flags, mode);
}
