/*
 * term-modes: what the command's output left set on the user's terminal,
 * put back when the command has ended (attacker's review 8, F4 and F7).
 * term-filter.c passes modes and renditions, which programs need while
 * they run (vim, less and top turn on the mouse, focus reports, the
 * alternate screen), and notes here those it passed. Left on, after hmm
 * has returned:
 *   - some hide hmm's own closing lines (what the workspace now holds, the
 *     hosts refused) and what the user's shell shows after them: conceal
 *     and other SGR attributes, the line-drawing character set (ESC ( 0,
 *     SO), a scroll region that keeps them on one line, autowrap off, the
 *     alternate screen (gone with the next program that leaves it);
 *   - others have the terminal type into the user's shell: mouse and
 *     focus reports, DEC locator reports, kitty's keyboard flags and
 *     xterm's modifyOtherKeys (keys no shell reads as text), application
 *     cursor keys and keypad.
 * So at the end, before hmm prints, the relay (pty.c) writes what puts
 * back each that passed, and only those: a program that set nothing
 * costs nothing. Reports the terminal sent before it read that are taken
 * by the fence, as owed answers are (the filter's `asked`).
 */
#include "hmm-helper.h"

/* DEC private modes (CSI ? Pm h / l) put back when left other than as a
 * terminal starts; `report`: the terminal types reports while it is set. */
static const struct {
	unsigned short mode;
	unsigned char on, report;
} MODES[] = {
	{1, 0, 0},    /* application cursor keys */
	{5, 0, 0},    /* reverse video */
	{7, 1, 0},    /* autowrap: off, a long line's end is not shown */
	{9, 0, 1},    /* X10 mouse */
	{25, 1, 0},   /* the cursor shown */
	{66, 0, 0},   /* application keypad */
	{69, 0, 0},   /* left and right margins */
	{1000, 0, 1}, /* mouse reports: clicks, */
	{1001, 0, 1}, /* highlighting, */
	{1002, 0, 1}, /* drags, */
	{1003, 0, 1}, /* any motion */
	{1004, 0, 1}, /* focus in and out */
	{1005, 0, 0}, /* the mouse's encodings */
	{1006, 0, 0},
	{1015, 0, 0},
	{1016, 0, 0},
	{2004, 0, 0}, /* bracketed paste: shells that use it set it at each prompt */
	/* The alternate screens, left first (they restore the cursor). */
	{47, 0, 0},
	{1047, 0, 0},
	{1049, 0, 0},
};
#define N_MODES (sizeof MODES / sizeof MODES[0])
#define FIRST_ALT 17

/* term_filter's put_back: what else was left set. */
enum {
	SGR = 1,	/* attributes other than none */
	G0 = 2,		/* G0 other than ASCII */
	SHIFTED = 4,	/* another set than G0 shifted in */
	REGION = 8,	/* a scroll region (DECSTBM) */
	KEYPAD = 16,	/* application keypad (DECKPAM) */
	KITTY = 32,	/* kitty's keyboard flags pushed or set */
	MODKEYS = 64,	/* xterm's modifyOtherKeys and the like */
	LOCATOR = 128,	/* DEC locator reports */
	RESTORED = SGR | G0 | SHIFTED, /* with the cursor: as they were saved */
};

/* CSI ? Pm h, l, or r (XTRESTORE: each as it was saved, unknown here). */
static void note_modes(struct term_filter *f, const unsigned char *p, size_t n, unsigned char final)
{
	unsigned value = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && p[i] >= '0' && p[i] <= '9') {
			if (value < 100000)
				value = value * 10 + (unsigned)(p[i] - '0');
			continue;
		}
		for (size_t m = 0; m < N_MODES; m++) {
			if (MODES[m].mode != value)
				continue;
			int differs = final == 'h' ? !MODES[m].on : final == 'l' ? MODES[m].on : 1;
			if (differs)
				f->modes |= 1u << m;
			else
				f->modes &= ~(1u << m);
		}
		if (final == 'l' && (value == 1048 || value == 1049))
			f->put_back |= RESTORED; /* restored with the cursor */
		value = 0;
	}
}

void term_note_csi(struct term_filter *f, unsigned char marker, unsigned char inter, unsigned char final)
{
	const unsigned char *p = f->held + (marker ? 1 : 0);
	size_t n = f->len - (marker ? 1 : 0) - (inter ? 1 : 0);
	if (marker == '?' && !inter && strchr("hlr", final)) {
		note_modes(f, p, n, final);
	} else if (!marker && !inter && final == 'm') {
		size_t zeros = 0;
		while (zeros < n && (p[zeros] == '0' || p[zeros] == ';'))
			zeros++;
		/* none, or all 0: a reset */
		f->put_back = zeros == n ? f->put_back & ~SGR : f->put_back | SGR;
	} else if (!marker && !inter && final == 'r') {
		f->put_back = n ? f->put_back | REGION : f->put_back & ~REGION;
	} else if ((!marker && !inter && final == 'u') || (inter == '#' && final == '}')) {
		f->put_back |= RESTORED; /* the cursor restored (SCORC), attributes popped */
	} else if ((marker == '>' || marker == '=') && final == 'u') {
		f->put_back |= KITTY;
	} else if (marker == '>' && final == 'm') {
		f->put_back |= MODKEYS;
	} else if (inter == '\'' && (final == 'z' || final == '{')) {
		f->put_back |= LOCATOR;
	}
}

void term_note_esc(struct term_filter *f, unsigned char inter, unsigned char final)
{
	if (inter == '(')
		f->put_back = final == 'B' ? f->put_back & ~G0 : f->put_back | G0;
	else if (!inter && (final == 'n' || final == 'o')) /* LS2, LS3 */
		f->put_back |= SHIFTED;
	else if (!inter && final == '8') /* DECRC */
		f->put_back |= RESTORED;
	else if (!inter && final == '=')
		f->put_back |= KEYPAD;
	else if (!inter && final == '>')
		f->put_back &= ~KEYPAD;
}

void term_note_shift(struct term_filter *f, unsigned char control)
{
	f->put_back = control == 0x0F ? f->put_back & ~SHIFTED : f->put_back | SHIFTED;
}

static void put_str(unsigned char **o, const char *s)
{
	size_t n = strlen(s);
	memcpy(*o, s, n);
	*o += n;
}

/* CSI ? the modes of `which` (from..to of MODES) final, if any. */
static void put_modes(unsigned char **o, unsigned which, size_t from, size_t to, char final)
{
	const char *sep = "\033[?";
	for (size_t m = from; m < to; m++) {
		if (!(which & (1u << m)))
			continue;
		*o += sprintf((char *)*o, "%s%u", sep, MODES[m].mode);
		sep = ";";
	}
	if (*sep == ';')
		*(*o)++ = (unsigned char)final;
}

size_t term_filter_put_back(struct term_filter *f, unsigned char *out)
{
	unsigned char *o = out;
	unsigned on = 0, off = 0;
	for (size_t m = 0; m < N_MODES; m++)
		if (f->modes & (1u << m)) {
			if (MODES[m].on)
				on |= 1u << m;
			else
				off |= 1u << m;
			if (MODES[m].report)
				f->asked = 1;
		}
	if (f->put_back & LOCATOR)
		f->asked = 1;
	if (off >> FIRST_ALT) /* the alternate screen left restores the cursor */
		f->put_back |= RESTORED;
	/* Kitty keeps a stack of keyboard flags for each screen: popped on the
	 * one the command left, then on the main one. */
	if (f->put_back & KITTY)
		put_str(&o, "\033[<99u");
	put_modes(&o, off, FIRST_ALT, N_MODES, 'l');
	if ((f->put_back & KITTY) && (off >> FIRST_ALT))
		put_str(&o, "\033[<99u");
	/* The region's reset moves the cursor home: where it was is saved. */
	if (f->put_back & REGION)
		put_str(&o, "\0337\033[r\0338");
	put_modes(&o, off, 0, FIRST_ALT, 'l');
	put_modes(&o, on, 0, FIRST_ALT, 'h');
	if (f->put_back & KEYPAD)
		put_str(&o, "\033>");
	if (f->put_back & MODKEYS)
		put_str(&o, "\033[>4m");
	if (f->put_back & LOCATOR)
		put_str(&o, "\033[0'z");
	/* Last: restoring the cursor above restores its attributes too. */
	if (f->put_back & (SGR | REGION))
		put_str(&o, "\033[0m");
	if (f->put_back & (G0 | SHIFTED | REGION))
		put_str(&o, "\033(B\017");
	f->modes = 0;
	f->put_back = 0;
	return (size_t)(o - out);
}
