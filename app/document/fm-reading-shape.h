/* fm-reading-shape.h - is a model's reading a well-formed formula?
 *
 * Contract: pure functions of a string (no GTK, no document).
 * fm_reading_broken says whether a reading is structurally broken in a way
 * no typed formula is: a command left without its argument (`zz\bar`,
 * `\frac{a}`), a math alphabet applied to a control word
 * (`\mathcal{\alpha}`), `\left` and `\right` that do not pair within one
 * group (or a `\middle` outside a pair), `\left`, `\right` or `\middle`
 * without a delimiter after it (`\right\bar`), an empty or missing script
 * (`x^{}`, `x_`), a double script (`x^{a}^{b}`). It does not judge
 * commands it does not know (fm-latex-check.c does, for exports).
 * fm_reading_repaired returns the reading with the repairs that have one
 * sure meaning (an empty script goes; an accent the model wrote after its
 * base, `z\bar` at a group's end, goes onto that base when it is a letter,
 * a digit, a Greek letter or a group: `\bar{z}`), or NULL when none
 * applies; the result may still be broken. Invalid UTF-8 is read byte by
 * byte up to the string's end, never past it. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

gboolean fm_reading_broken   (const char *latex);
char    *fm_reading_repaired (const char *latex);
/* The next character of LaTeX text: a UTF-8 step that stops at the NUL
 * (readings may be invalid UTF-8, where g_utf8_next_char steps past it). */
const char *fm_reading_next_char (const char *p);
/* The end of the LaTeX token at p (not a space): a control word's
 * letters, a control symbol, or one character (fm_reading_next_char). */
const char *fm_reading_token_end (const char *p);

G_END_DECLS
