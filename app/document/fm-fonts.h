/* fm-fonts.h - which fonts and characters are math.
 *
 * Two rules live here: the bare PDFMathTranslate font rule (the bench's
 * baseline) and ours, which first excludes known text fonts, always accepts
 * math fonts, treats italic text fonts as "maybe math" (mathptmx, mathpazo and
 * sfmath set math letters in the text italic) and looks at the characters too.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  FM_FONT_TEXT,         /* a text face: CMR, Times, LM Roman, Helvetica, ...   */
  FM_FONT_TEXT_ITALIC,  /* its italic/oblique: emphasis, or math letters       */
  FM_FONT_MATH,         /* a math face: CMMI, CMSY, CMEX, LM Math, STIX, ...   */
} FmFontClass;

/* "ABCDEF+CMMI10" -> "CMMI10" (pointer into name). */
const char *fm_font_strip_subset (const char *name);

/* PDFMathTranslate's rule: the name after the subset prefix matches
 * (CM[^R]|MS.M|XY|MT|BL|RM|EU|LA|RS|LINE|LCIRCLE|TeX-|rsfs|txsy|wasy|stmary|
 *  .*Mono|.*Code|.*Ital|.*Sym|.*Math) at its start. */
gboolean fm_font_is_math_pdfmathtranslate (const char *name);

/* Our rule (see docs/detection.md). */
FmFontClass fm_font_classify (const char *name);

/* A TeX math extension font (CMEX, EUEX, txexs, Fourier-Math-Extension,
 * Kp--M-Ex, ...): big operators, radicals and delimiters, whose glyphs hang
 * below their baseline and often map to wrong characters ("P" for a sum in
 * EUEX10, "Í" in txexs). */
gboolean fm_font_is_math_extension (const char *name);
/* The symbol at c's slot of the OMS encoding when name is a TeX math symbol
 * font and c a lowercase letter (a font without glyph names), else c. */
gunichar fm_font_oms_symbol (const char *name, gunichar c);

/* Characters that are math whatever the font: math operators and arrows
 * outside ASCII, Greek letters, mathematical alphanumerics, big operators. */
gboolean fm_char_is_math_symbol (gunichar c);

/* ASCII-ish characters that occur in formulas and in text alike: digits,
 * + - = < > ( ) [ ] / | ' , . ; : ! * and the like. */
gboolean fm_char_is_neutral (gunichar c);

/* A bold face (CMBX, *-Bold, Times' "Medi", ...): \\mathbf letters. */
gboolean fm_font_is_bold (const char *name);

/* Upright words set in a text font inside formulas: sin, log, lim, ... */
gboolean fm_word_is_math_function (const char *word);

G_END_DECLS
