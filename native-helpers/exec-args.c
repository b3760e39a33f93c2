/*
 * exec-args: `hmm-helper exec`'s arguments (exec.c): read into exec_opts,
 * every path checked canonical, and blanked in the helper's own command
 * line once read.
 */
#include "hmm-helper.h"

/* Paths must come absolute and canonical (the TS side resolves them), because
 * hidden paths are compared with grant paths as byte strings: "/a/./b" or a
 * trailing slash would silently fail to hide. So anything else is refused. */
static void check_canonical(const char *flag, const char *p)
{
	if (p[0] != '/')
		setup_fail("%s needs an absolute path: %s", flag, p);
	if (p[1] == '\0')
		return;
	for (const char *c = p + 1;;) {
		const char *e = strchr(c, '/');
		size_t len = e ? (size_t)(e - c) : strlen(c);
		if (len == 0 || (len == 1 && c[0] == '.') ||
		    (len == 2 && c[0] == '.' && c[1] == '.'))
			setup_fail("%s needs a canonical path: %s", flag, p);
		if (!e)
			break;
		c = e + 1;
	}
}

static const char *const VALUE_FLAGS[] = {
	"--lock",  "--report-fd", "--wait-fd", "--chdir", "--chdir-top", "--program", "--read", "--write",
	"--dev",   "--hide", "--read-only", "--plain-only", "--isolate", "--tmp-over", "--cache", "--layers", "--mask",
	"--cover-data", "--bind-src", "--bind-dst", "--home", "--home-keep", "--home-link",
	"--net",   "--proxy-port", "--proxy-socket", "--net-mark", "--background",
};

int takes_value(const char *a)
{
	for (size_t i = 0; i < sizeof VALUE_FLAGS / sizeof *VALUE_FLAGS; i++)
		if (strcmp(a, VALUE_FLAGS[i]) == 0)
			return 1;
	return 0;
}

void parse_exec(int argc, char **argv, struct exec_opts *o)
{
	memset(o, 0, sizeof *o);
	o->wait_fd = -1;
	o->net_mark = -1;
	/* The flags that may be given again and again, each value a canonical
	 * path kept in a list of its own. Each value takes an argument, so argc
	 * is room enough for any list. */
	struct {
		const char *flag;
		const char ***list;
		size_t *count;
	} lists[] = {
		{"--hide", &o->hides, &o->nhides},
		{"--read-only", &o->read_only, &o->nread_only},
		{"--plain-only", &o->plain_only, &o->nplain_only},
		{"--tmp-over", &o->tmp_over, &o->ntmp_over},
		{"--cache", &o->caches, &o->ncaches},
		{"--mask", &o->masks, &o->nmasks},
		{"--bind-src", &o->bind_src, &o->nbind_src},
		{"--bind-dst", &o->bind_dst, &o->nbind_dst},
		{"--home-keep", &o->home_keep, &o->nhome_keep},
		{"--home-link", &o->home_links, &o->nhome_links},
	};
	const size_t nlists = sizeof lists / sizeof *lists;
	o->grants = xmalloc(sizeof *o->grants * (size_t)argc);
	for (size_t l = 0; l < nlists; l++)
		*lists[l].list = xmalloc(sizeof **lists[l].list * (size_t)argc);
	int i = 2;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0)
			break;
		if (strcmp(a, "--end-with-command") == 0) {
			o->end_with_command = 1;
			continue;
		}
		if (strcmp(a, "--proxy-debug") == 0) {
			o->proxy_debug = 1;
			continue;
		}
		if (i + 1 >= argc)
			setup_fail("usage: %s", EXEC_SYNOPSIS);
		const char *v = argv[++i];
		size_t l = 0;
		while (l < nlists && strcmp(a, lists[l].flag) != 0)
			l++;
		if (l < nlists) {
			check_canonical(a, v);
			(*lists[l].list)[(*lists[l].count)++] = v;
		} else if (strcmp(a, "--lock") == 0) {
			o->lock = v;
		} else if (strcmp(a, "--report-fd") == 0) {
			/* already taken by the first pass in cmd_exec */
		} else if (strcmp(a, "--wait-fd") == 0) {
			long fd = parse_num(v, 3, INT_MAX);
			if (fd < 0 || fcntl((int)fd, F_GETFD) < 0)
				setup_fail("--wait-fd needs an open descriptor of 3 or more: %s", v);
			o->wait_fd = (int)fd;
		} else if (strcmp(a, "--chdir") == 0) {
			check_canonical(a, v);
			o->chdir = v;
		} else if (strcmp(a, "--chdir-top") == 0) {
			check_canonical(a, v);
			o->chdir_top = v;
		} else if (strcmp(a, "--program") == 0) {
			check_canonical(a, v);
			o->program = v;
		} else if (strcmp(a, "--read") == 0 || strcmp(a, "--write") == 0 ||
			   strcmp(a, "--dev") == 0) {
			check_canonical(a, v);
			o->grants[o->ngrants].path = v;
			o->grants[o->ngrants].cls = a[2] == 'r'   ? CLASS_READ
						    : a[2] == 'w' ? CLASS_WRITE
								  : CLASS_DEV;
			o->ngrants++;
		} else if (strcmp(a, "--isolate") == 0) {
			check_canonical(a, v);
			o->isolate = v;
		} else if (strcmp(a, "--background") == 0) {
			check_canonical(a, v);
			o->background = v;
		} else if (strcmp(a, "--cover-data") == 0) {
			check_canonical(a, v);
			o->cover_data = v;
		} else if (strcmp(a, "--home") == 0) {
			check_canonical(a, v);
			o->home = v;
		} else if (strcmp(a, "--layers") == 0) {
			/* A directory's name in the workspace's, and a part of the
			 * overlays' options: none of their separators. */
			if (!*v || strcmp(v, ".") == 0 || strcmp(v, "..") == 0 || strpbrk(v, "/,:\\"))
				setup_fail("--layers needs a directory's name without '/', ',', ':' or '\\': %s", v);
			o->layers = v;
#ifdef __linux__
		} else if (net_option(o, a, v)) {
			/* net.c took it */
#endif
		} else {
			setup_fail("usage: %s", EXEC_SYNOPSIS);
		}
	}
	if (i >= argc || i + 1 >= argc || o->lock == NULL || o->lock[0] == '\0' ||
	    ((o->end_with_command || o->background || o->cover_data || o->nbind_src || o->layers || o->home) && !o->isolate) ||
	    ((o->nhome_keep || o->nhome_links) && !o->home) ||
	    o->nbind_src != o->nbind_dst)
		setup_fail("usage: %s", EXEC_SYNOPSIS);
	/* The start lies in the top it is reached from (exec.c enter_start). */
	if (o->chdir_top) {
		size_t n = strcmp(o->chdir_top, "/") == 0 ? 0 : strlen(o->chdir_top);
		if (!o->chdir || strncmp(o->chdir, o->chdir_top, n) != 0 ||
		    (o->chdir[n] != '\0' && o->chdir[n] != '/'))
			setup_fail("--chdir-top needs a --chdir at or beneath it: %s", o->chdir_top);
	}
	o->cmd = &argv[i + 1];
}

/* The policy (the hidden and masked paths above all) is not the command's
 * to read in the command line of a helper it can see (/proc/1/cmdline,
 * the init's; without the namespaces the keeper's): the arguments after
 * the mode and a leading `--lock FILE` are copied and their bytes blanked.
 * The mode's name and the lock are kept: stop.c and lock.c know a
 * workspace's helpers by them, also should the lock file be replaced.
 * Only where they lie one after another, as the kernel lays them out. */
void blank_arguments(int argc, char **argv)
{
	int first = argc > 3 && strcmp(argv[2], "--lock") == 0 ? 4 : 2;
	if (argc <= first)
		return;
	char *end = argv[first];
	for (int i = first; i < argc && end; i++)
		end = argv[i] == end ? end + strlen(end) + 1 : NULL;
	if (!end)
		return;
	char *start = argv[first];
	for (int i = first; i < argc; i++)
		argv[i] = xstrdup(argv[i]);
	memset(start, 0, (size_t)(end - start));
}
