/*
 * The racing process of the removal tests, at its luckiest: loaded into the
 * remover (LD_PRELOAD), it exchanges a directory dN with its neighbour lN,
 * a link to a directory outside, just before the remover opens dN: after
 * the remover looked at dN, before it goes in. A process on a tight loop
 * hits that window only now and then; this hits it every time.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static void swap(int dfd, const char *name)
{
	if (name[0] != 'd' || !isdigit((unsigned char)name[1]))
		return;
	char link[256];
	snprintf(link, sizeof link, "l%s", name + 1);
	syscall(SYS_renameat2, dfd, name, dfd, link, RENAME_EXCHANGE);
}

static int call(const char *symbol, int dfd, const char *name, int flags, va_list ap)
{
	mode_t mode = (flags & O_CREAT) ? (mode_t)va_arg(ap, int) : 0;
	swap(dfd, name);
	int (*real)(int, const char *, int, ...) = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, symbol);
	return real(dfd, name, flags, mode);
}

int openat(int dfd, const char *name, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int r = call("openat", dfd, name, flags, ap);
	va_end(ap);
	return r;
}

int openat64(int dfd, const char *name, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int r = call("openat64", dfd, name, flags, ap);
	va_end(ap);
	return r;
}
