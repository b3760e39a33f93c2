/*
 * term-modes: what the command's output left set on the user's terminal,
 * put back when the command has ended (attacker's review 8, F4 and F7).
 * term-filter.c passes modes and renditions, which programs need while
 * they run (vim, less and top turn on the mouse, focus reports, the
 * alternate screen), and notes here those it passed. Left on, after hmm
 * has returned:
 *   - some hide hmm's own closing lines (what the workspace now holds, the
 *     hosts refused) and what the user's shell shows after them: conceal
 *     and other SGR attributes, the default colours (OSC 10 = OSC 11) and
 *     the palette, the line-drawing character set (ESC ( 0, SO), a scroll
 *     region that keeps them on one line, autowrap off, the alternate
 *     screen (gone with the next program that leaves it), synchronized
 *     output;
 *   - others have the terminal type into the user's shell: mouse, focus,
 *     DEC locator, colour-scheme and resize reports, win32-input-mode,
 *     kitty's keyboard flags and xterm's key modifier options (keys no
 *     shell reads as text), application cursor keys and keypad, newline
 *     mode; or show what the user types there, a password: local echo
 *     (SRM reset).
 * So at the end, before hmm prints, the relay (pty.c) writes what puts
 * back each that passed, and only those: a program that set nothing
 * costs nothing. Reports the terminal sent before it read that are taken
 * by the fence, as owed answers are (the filter's `asked`).
 * Colours are put back rather than dropped: programs set the cursor's or
 * the background's to match their theme while they run.
 * Other modes do not pass (term_note_csi): only those programs use, noted
 * here or harmless left set; not VT52 mode, from which the put-back itself
 * (CSI) would not bring the terminal back, nor the keyboard lock; nor a
 * mode sequence a terminal might read otherwise than noted here
 * (term-filter.c drops numbers above 65535).
 */
#include "hmm-helper.h"

/* Modes put back when left other than as a terminal starts: the DEC
 * private ones (CSI ? Pm h / l), the alternate screens among them, then
 * the ANSI ones (CSI Pm h / l); `report`: the terminal types reports
 * while it is set. */
static const struct {
	unsigned short mode;
	unsigned char on, report;
} MODES[] = {
	{1, 0, 0},    /* application cursor keys */
	{5, 0, 0},    /* reverse video */
	{7, 1, 0},    /* autowrap: off, a long line's end is not shown */
	{8, 1, 0},    /* keys repeat */
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
	{2026, 0, 0}, /* synchronized output: what follows not drawn */
	{2031, 0, 1}, /* colour-scheme changes (kitty, foot, Ghostty, Contour) */
	{2048, 0, 1}, /* in-band resizes (kitty, foot, Ghostty) */
	{9001, 0, 1}, /* win32-input-mode (Windows Terminal): every key a report */
	/* The alternate screens, left first (they restore the cursor). */
	{47, 0, 0},
	{1047, 0, 0},
	{1049, 0, 0},
	/* ANSI modes. */
	{4, 0, 0},  /* insert */
	{12, 1, 0}, /* send/receive: off, xterm echoes what is typed (a password) */
	{20, 0, 0}, /* newline: Enter sends CR LF */
};
#define N_MODES (sizeof MODES / sizeof MODES[0])
#define FIRST_ALT 22
#define FIRST_ANSI 25

/* DEC private modes passed without a note: harmless left set. Those in
 * neither list are dropped, as a terminal that does not have them ignores
 * them (programs do without): xterm's Tektronix mode and logging, national
 * characters, what keys send, other terminals' reports. */
static const unsigned short HARMLESS[] = {
	4,    /* smooth scroll */
	6,    /* origin: the margins are put back */
	12,   /* the cursor blinking */
	80,   /* sixel scrolling, */
	1070, /* colour registers, */
	8452, /* and cursor */
	1007, /* the wheel's arrow keys on the alternate screen */
	1048, /* the cursor saved and restored */
	2027, /* grapheme clusters */
};
#define N_HARMLESS (sizeof HARMLESS / sizeof HARMLESS[0])

/* The parameters the fewest terminals read (st, the Linux console): a mode
 * reset after those may not happen. */
#define READ_PARAMS 16

/* term_filter's put_back: what else was left set. */
enum {
	SGR = 1,	/* attributes other than none */
	G0 = 2,		/* G0 other than ASCII */
	SHIFTED = 4,	/* another set than G0 shifted in */
	REGION = 8,	/* a scroll region (DECSTBM) */
	KEYPAD = 16,	/* application keypad (DECKPAM) */
	KITTY = 32,	/* kitty's keyboard flags pushed or set */
	LOCATOR = 64,	/* DEC locator reports */
	MODKEYS = 256,	/* and the 7 bits above: xterm's key modifier resources 0-7 set */
	RESTORED = SGR | G0 | SHIFTED, /* with the cursor: as they were saved */
};

/* Whether parameters are plain numbers and ';', as every terminal reads
 * them: no sub-parameter (':'), intermediate or second marker. */
static int plain(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ';' && (p[i] < '0' || p[i] > '9'))
			return 0;
	return 1;
}

/* Whether a mode passes: those noted (from..to of MODES), the harmless
 * DEC private ones, and ANSI mode (DECANM set) but not VT52 mode, from
 * which the put-back itself (CSI) would not bring the terminal back. */
static int passes(unsigned mode, size_t from, size_t to, unsigned char final)
{
	for (size_t m = from; m < to; m++)
		if (MODES[m].mode == mode)
			return 1;
	for (size_t i = 0; i < N_HARMLESS && !from; i++)
		if (HARMLESS[i] == mode)
			return 1;
	return !from && mode == 2 && final == 'h';
}

/* Keeps of the plain parameters held from `start` the modes that pass;
 * 0 if none is left. */
static int keep_passing(struct term_filter *f, size_t start, size_t from, size_t to, unsigned char final)
{
	unsigned char *p = f->held + start;
	size_t n = f->len - start, kept = 0, begin = 0;
	unsigned value = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && p[i] != ';') {
			value = value * 10 + (unsigned)(p[i] - '0');
			continue;
		}
		if (passes(value, from, to, final)) {
			if (kept)
				p[kept++] = ';';
			memmove(p + kept, p + begin, i - begin);
			kept += i - begin;
		}
		value = 0;
		begin = i + 1;
	}
	f->len = start + kept;
	return kept > 0;
}

/* CSI ? Pm h, l, or r (XTRESTORE: each as it was saved, unknown here), or
 * CSI Pm h, l (ANSI): MODES from..to (plain parameters). */
static void note_modes(struct term_filter *f, const unsigned char *p, size_t n, unsigned char final, size_t from, size_t to)
{
	unsigned value = 0, count = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && p[i] != ';') {
			value = value * 10 + (unsigned)(p[i] - '0');
			continue;
		}
		for (size_t m = from; m < to; m++) {
			if (MODES[m].mode != value)
				continue;
			int differs = final == 'h' ? !MODES[m].on : final == 'l' ? MODES[m].on : 1;
			if (differs)
				f->modes |= 1u << m;
			else if (count < READ_PARAMS)
				f->modes &= ~(1u << m);
		}
		if (final == 'l' && !from && (value == 1048 || value == 1049))
			f->put_back |= RESTORED; /* restored with the cursor */
		value = 0;
		count++;
	}
}

/* CSI > Pp ; Pv m sets xterm's key modifier resource Pp, CSI > Pp m puts it
 * back as it started. */
static void note_modkeys(struct term_filter *f, const unsigned char *p, size_t n)
{
	unsigned resource = 0;
	size_t i = 0;
	for (; i < n && p[i] != ';'; i++)
		resource = resource * 10 + (unsigned)(p[i] - '0');
	if (resource > 7)
		return;
	if (i < n)
		f->put_back |= MODKEYS << resource;
	else
		f->put_back &= ~(MODKEYS << resource);
}

int term_note_csi(struct term_filter *f, unsigned char marker, unsigned char inter, unsigned char final)
{
	const unsigned char *p = f->held + (marker ? 1 : 0);
	size_t n = f->len - (marker ? 1 : 0); /* with the intermediates */
	int modes = (marker == '?' && strchr("hlr", final)) || (!marker && strchr("hl", final));
	if ((modes || (marker == '>' && final == 'm')) && !plain(p, n))
		return 0;
	/* Of the ANSI modes only those noted pass: not KAM, which locks the
	 * keyboard (the user's Ctrl-C would not reach the command). */
	size_t from = marker ? 0 : FIRST_ANSI, to = marker ? FIRST_ANSI : N_MODES;
	if (modes && !keep_passing(f, marker ? 1 : 0, from, to, final))
		return 0;
	if (modes) {
		note_modes(f, p, f->len - (marker ? 1 : 0), final, from, to);
	} else if (marker == '>' && final == 'm') {
		note_modkeys(f, p, n);
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
	} else if (inter == '\'' && (final == 'z' || final == '{')) {
		f->put_back |= LOCATOR;
	}
	return 1;
}

void term_note_colour(struct term_filter *f, unsigned num, const unsigned char *held, size_t len)
{
	size_t values = 0; /* held is "ESC ] num;" and the values, each after a ';' */
	for (size_t i = 0; i < len; i++)
		values += held[i] == ';';
	if (num >= 100) {
		/* a reset; with arguments (OSC 104;1), maybe of some only */
		if (!values)
			f->colours &= ~(1u << (num - 100));
		return;
	}
	/* OSC 4 and 5 set colours of the palette; OSC 10;a;b sets 10's, then 11's */
	for (size_t i = 0; i < (num >= 10 ? values : !!values) && num + i <= 19; i++)
		f->colours |= 1u << (num + i);
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

/* CSI ? (CSI for the ANSI ones) the modes of `which` (from..to of MODES)
 * final, if any. */
static void put_modes(unsigned char **o, unsigned which, size_t from, size_t to, char final)
{
	const char *sep = from < FIRST_ANSI ? "\033[?" : "\033[";
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
	int alternate = (off >> FIRST_ALT) & ((1u << (FIRST_ANSI - FIRST_ALT)) - 1);
	if (alternate) /* left, it restores the cursor */
		f->put_back |= RESTORED;
	/* Kitty keeps a stack of keyboard flags for each screen: popped on the
	 * one the command left, then on the main one. */
	if (f->put_back & KITTY)
		put_str(&o, "\033[<99u");
	put_modes(&o, off, FIRST_ALT, FIRST_ANSI, 'l');
	if ((f->put_back & KITTY) && alternate)
		put_str(&o, "\033[<99u");
	/* The region's reset moves the cursor home: where it was is saved. */
	if (f->put_back & REGION)
		put_str(&o, "\0337\033[r\0338");
	put_modes(&o, off, 0, FIRST_ALT, 'l');
	put_modes(&o, on, 0, FIRST_ALT, 'h');
	put_modes(&o, off, FIRST_ANSI, N_MODES, 'l');
	put_modes(&o, on, FIRST_ANSI, N_MODES, 'h');
	if (f->put_back & KEYPAD)
		put_str(&o, "\033>");
	for (unsigned r = 0; r < 8; r++)
		if (f->put_back & (MODKEYS << r))
			o += sprintf((char *)o, "\033[>%um", r);
	if (f->put_back & LOCATOR)
		put_str(&o, "\033[0'z");
	/* The colours set, each reset by OSC 100 more (104: the palette). */
	for (unsigned c = 0; c < 20; c++)
		if (f->colours & (1u << c))
			o += sprintf((char *)o, "\033]%u\033\\", 100 + c);
	/* Last: restoring the cursor above restores its attributes too. */
	if (f->put_back & (SGR | REGION))
		put_str(&o, "\033[0m");
	if (f->put_back & (G0 | SHIFTED | REGION))
		put_str(&o, "\033(B\017");
	f->modes = 0;
	f->put_back = 0;
	f->colours = 0;
	return (size_t)(o - out);
}
