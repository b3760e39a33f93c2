/*
 * Project secrets: the config file's `exclude`, gitignore patterns naming
 * files of the origin that are never cloned into a workspace (SPEC
 * "Sandbox" › Reading). One matcher for everything hmm asks of them: the
 * clone leaves them out (clone-copy.c), and `excluded` says which of the
 * paths hmm is about to show, write or merge they name.
 *
 *   hmm-helper excluded FILE < NUL-separated relative paths
 *
 * writes, NUL-separated, those of the paths that FILE's patterns exclude,
 * themselves or by a directory above them.
 *
 * The patterns are gitignore(5)'s, read from the top of the tree: a blank
 * line or `#` is nothing; `!` re-includes; a trailing `/` matches
 * directories only; a pattern with a `/` before its end matches the path
 * from the top, one without matches a name at any depth; `*`, `?` and
 * `[...]` match within a name, `**` between slashes any number of
 * directories; the last pattern matching decides, and nothing below an
 * excluded directory comes back.
 */
#include "hmm-helper.h"
#include <fnmatch.h>

struct pattern {
	char *body;
	int negated, dir_only, anchored;
};

static struct pattern *PATTERNS;
static size_t NPATTERNS;

/* Where a bracket expression starting at p ('[') ends (its ']'), or NULL
 * when it does not end: then the '[' is itself. */
static const char *bracket_end(const char *p)
{
	const char *i = p + 1;
	if (*i == '!' || *i == '^')
		i++;
	if (*i == ']')
		i++;
	while (*i && *i != ']') {
		if (i[0] == '[' && i[1] == ':') {
			const char *end = strstr(i + 2, ":]");
			if (!end)
				return NULL;
			i = end + 2;
		} else if (i[0] == '\\' && i[1]) {
			i += 2;
		} else {
			i++;
		}
	}
	return *i == ']' ? i : NULL;
}

/* Whether s matches the pattern from p on (start: the pattern's first
 * character), gitignore's way: no wildcard matches a '/' but `**`. */
static int wild(const char *start, const char *p, const char *s)
{
	for (; *p; p++, s++) {
		if (*p == '*') {
			const char *q = p;
			while (*q == '*')
				q++;
			if (q - p >= 2 && (p == start || p[-1] == '/') && (*q == '\0' || *q == '/')) {
				if (*q == '\0')
					return 1; /* `dir/` then `**`: everything inside */
				/* `**` then '/': the rest here or after any '/' further on */
				for (const char *t = s;; t++) {
					if (wild(start, q + 1, t))
						return 1;
					t = strchr(t, '/');
					if (!t)
						return 0;
				}
			}
			for (const char *t = s;; t++) {
				if (wild(start, q, t))
					return 1;
				if (*t == '\0' || *t == '/')
					return 0;
			}
		}
		if (*s == '\0')
			return 0;
		if (*p == '?') {
			if (*s == '/')
				return 0;
			continue;
		}
		if (*p == '[') {
			const char *end = bracket_end(p);
			if (end) {
				size_t len = (size_t)(end - p) + 1;
				char *set = xmalloc(len + 1);
				memcpy(set, p, len);
				set[len] = '\0';
				char one[2] = {*s, '\0'};
				int hit = *s != '/' && fnmatch(set, one, 0) == 0;
				free(set);
				if (!hit)
					return 0;
				p = end;
				continue;
			}
		}
		if (*p == '\\' && p[1])
			p++;
		if (*p != *s)
			return 0;
	}
	return *s == '\0';
}

/* One line of the file, as gitignore reads it; 0 when it says nothing. */
static int parse_line(char *line, struct pattern *out)
{
	size_t len = strlen(line);
	if (len > 0 && line[len - 1] == '\r')
		line[--len] = '\0';
	/* Trailing spaces go, unless escaped with a backslash. */
	while (len > 0 && line[len - 1] == ' ' && !(len > 1 && line[len - 2] == '\\'))
		line[--len] = '\0';
	if (len == 0 || line[0] == '#')
		return 0;
	memset(out, 0, sizeof *out);
	if (line[0] == '!') {
		out->negated = 1;
		line++;
		len--;
	}
	if (len > 0 && line[len - 1] == '/') {
		out->dir_only = 1;
		line[--len] = '\0';
	}
	out->anchored = strchr(line, '/') != NULL;
	if (line[0] == '/')
		line++;
	if (line[0] == '\0')
		return 0;
	out->body = xstrdup(line);
	return 1;
}

int exclude_load(const char *file)
{
	FILE *f = fopen(file, "re");
	if (!f)
		return -1;
	size_t cap = 16;
	PATTERNS = xmalloc(cap * sizeof *PATTERNS);
	NPATTERNS = 0;
	char *line = NULL;
	size_t linecap = 0;
	ssize_t len;
	while ((len = getline(&line, &linecap, f)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (NPATTERNS == cap) {
			cap *= 2;
			PATTERNS = realloc(PATTERNS, cap * sizeof *PATTERNS);
			if (!PATTERNS)
				oom();
		}
		if (parse_line(line, &PATTERNS[NPATTERNS]))
			NPATTERNS++;
	}
	free(line);
	int failed = ferror(f);
	fclose(f);
	return failed ? -1 : 0;
}

int exclude_any(void)
{
	return NPATTERNS > 0;
}

int exclude_match(const char *rel, int is_dir)
{
	const char *name = strrchr(rel, '/');
	name = name ? name + 1 : rel;
	for (size_t i = NPATTERNS; i-- > 0;) {
		const struct pattern *p = &PATTERNS[i];
		if (p->dir_only && !is_dir)
			continue;
		if (wild(p->body, p->body, p->anchored ? rel : name))
			return !p->negated;
	}
	return 0;
}

/* A path of a tree (a file, a link or a gitlink), the directories above it
 * looked at first: nothing below an excluded directory comes back. */
static int exclude_path(char *rel)
{
	for (char *slash = strchr(rel, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		int out = exclude_match(rel, 1);
		*slash = '/';
		if (out)
			return 1;
	}
	return exclude_match(rel, 0);
}

int cmd_excluded(int argc, char **argv)
{
	if (argc != 3) {
		fputs("usage: hmm-helper excluded FILE < NUL-separated paths\n", stderr);
		return 2;
	}
	if (exclude_load(argv[2]) < 0) {
		fprintf(stderr, "hmm-helper: excluded: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	char *path = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getdelim(&path, &cap, '\0', stdin)) > 0) {
		if (path[len - 1] != '\0')
			break; /* the last one, unterminated: not a whole path */
		if (exclude_path(path) && fwrite(path, 1, (size_t)len, stdout) != (size_t)len)
			return 1;
	}
	free(path);
	return fflush(stdout) == 0 ? 0 : 1;
}
