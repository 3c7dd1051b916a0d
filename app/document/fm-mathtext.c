/* fm-mathtext.c - a region's formula read from the PDF's text layer.
 * See fm-mathtext.h and docs/text-layer.md. */
#include "fm-mathtext.h"
#include "fm-mathtext-align.h"
#include "fm-mathtext-delim.h"
#include "fm-fonts.h"
#include "fm-ink.h"
#include "fm-latex-check.h"
#include "fm-render.h"

#include <math.h>
#include <string.h>

/* ---- glyph -> LaTeX ------------------------------------------------------ */

typedef enum {
  STYLE_PLAIN,     /* math italic letters, digits, symbols          */
  STYLE_RM,        /* upright letters in math: \mathrm / operators  */
  STYLE_BF,        /* \mathbf                                       */
  STYLE_BOLDSYM,   /* bold italic or bold Greek: \boldsymbol        */
  STYLE_BB,
  STYLE_CAL,
  STYLE_FRAK,
  STYLE_SCR,
  STYLE_SF,
  STYLE_TT,
} Style;

static const char *const style_cmd[] = {
  NULL, "\\mathrm", "\\mathbf", "\\boldsymbol", "\\mathbb", "\\mathcal",
  "\\mathfrak", "\\mathscr", "\\mathsf", "\\mathtt",
};

typedef struct { gunichar c; const char *tex; } SymbolName;

/* Characters with a LaTeX name. Some are Poppler's glyph-name mappings of TeX
 * fonts (CMR's Omega -> OHM SIGN, mu -> MICRO SIGN; docs/detection.md). */
static const SymbolName symbol_names[] = {
  { 0x0393, "\\Gamma" }, { 0x0394, "\\Delta" }, { 0x0398, "\\Theta" }, { 0x039B, "\\Lambda" },
  { 0x039E, "\\Xi" }, { 0x03A0, "\\Pi" }, { 0x03A3, "\\Sigma" }, { 0x03A5, "\\Upsilon" },
  { 0x03A6, "\\Phi" }, { 0x03A8, "\\Psi" }, { 0x03A9, "\\Omega" }, { 0x2126, "\\Omega" },
  { 0x2206, "\\Delta" }, { 0x03D2, "\\Upsilon" },
  { 0x03B1, "\\alpha" }, { 0x03B2, "\\beta" }, { 0x03B3, "\\gamma" }, { 0x03B4, "\\delta" },
  { 0x03F5, "\\epsilon" }, { 0x03B5, "\\varepsilon" }, { 0x03B6, "\\zeta" }, { 0x03B7, "\\eta" },
  { 0x03B8, "\\theta" }, { 0x03D1, "\\vartheta" }, { 0x03B9, "\\iota" }, { 0x03BA, "\\kappa" },
  { 0x03F0, "\\varkappa" }, { 0x03BB, "\\lambda" }, { 0x03BC, "\\mu" }, { 0x00B5, "\\mu" },
  { 0x03BD, "\\nu" }, { 0x03BE, "\\xi" }, { 0x03C0, "\\pi" }, { 0x03D6, "\\varpi" },
  { 0x03C1, "\\rho" }, { 0x03F1, "\\varrho" }, { 0x03C3, "\\sigma" }, { 0x03C2, "\\varsigma" },
  { 0x03C4, "\\tau" }, { 0x03C5, "\\upsilon" }, { 0x03D5, "\\phi" }, { 0x03C6, "\\varphi" },
  { 0x03C7, "\\chi" }, { 0x03C8, "\\psi" }, { 0x03C9, "\\omega" },
  { 0x2212, "-" }, { 0x2013, "-" }, { 0x00B1, "\\pm" }, { 0x2213, "\\mp" }, { 0x00D7, "\\times" },
  { 0x00F7, "\\div" }, { 0x22C5, "\\cdot" }, { 0x00B7, "\\cdot" }, { 0x2219, "\\bullet" },
  { 0x2022, "\\bullet" }, { 0x2218, "\\circ" }, { 0x25E6, "\\circ" }, { 0x2217, "*" },
  { 0x22C6, "\\star" }, { 0x2020, "\\dagger" }, { 0x2021, "\\ddagger" },
  { 0x2264, "\\leq" }, { 0x2265, "\\geq" }, { 0x2A7D, "\\leq" }, { 0x2A7E, "\\geq" },
  { 0x2260, "\\neq" }, { 0x226A, "\\ll" }, { 0x226B, "\\gg" }, { 0x2208, "\\in" },
  { 0x2209, "\\notin" }, { 0x220B, "\\ni" }, { 0x2282, "\\subset" }, { 0x2283, "\\supset" },
  { 0x2286, "\\subseteq" }, { 0x2287, "\\supseteq" }, { 0x228A, "\\subsetneq" },
  { 0x228B, "\\supsetneq" }, { 0x222A, "\\cup" }, { 0x2229, "\\cap" }, { 0x2216, "\\setminus" },
  { 0x29F5, "\\setminus" }, { 0x2227, "\\wedge" }, { 0x2228, "\\vee" }, { 0x00AC, "\\neg" },
  { 0x2200, "\\forall" }, { 0x2203, "\\exists" }, { 0x2204, "\\nexists" }, { 0x2205, "\\emptyset" },
  { 0x2300, "\\emptyset" }, { 0x221E, "\\infty" }, { 0x2202, "\\partial" }, { 0x2207, "\\nabla" },
  { 0x2113, "\\ell" }, { 0x210F, "\\hbar" }, { 0x0127, "\\hbar" }, { 0x2135, "\\aleph" },
  { 0x211C, "\\Re" }, { 0x2111, "\\Im" }, { 0x2118, "\\wp" }, { 0x0131, "\\imath" },
  { 0x0237, "\\jmath" },
  { 0x223C, "\\sim" }, { 0x2243, "\\simeq" }, { 0x2248, "\\approx" }, { 0x2245, "\\cong" },
  { 0x2261, "\\equiv" }, { 0x221D, "\\propto" }, { 0x224D, "\\asymp" }, { 0x2250, "\\doteq" },
  { 0x2223, "\\mid" }, { 0x2225, "\\|" }, { 0x22A5, "\\perp" }, { 0x22A4, "\\top" },
  /* OpenType math's and STIX Two's \perp; STIX Two's / (development seeds
   * 1010/1100: 15 unknown glyphs made pdfLaTeX stix2 readings UNCERTAIN) */
  { 0x27C2, "\\perp" }, { 0x2215, "/" },
  { 0x22A8, "\\models" }, { 0x22A2, "\\vdash" }, { 0x22A3, "\\dashv" }, { 0x227A, "\\prec" },
  { 0x227B, "\\succ" }, { 0x2AAF, "\\preceq" }, { 0x2AB0, "\\succeq" }, { 0x2272, "\\lesssim" },
  { 0x2273, "\\gtrsim" },
  { 0x2295, "\\oplus" }, { 0x2296, "\\ominus" }, { 0x2297, "\\otimes" }, { 0x2299, "\\odot" },
  { 0x2298, "\\oslash" }, { 0x2294, "\\sqcup" }, { 0x2293, "\\sqcap" }, { 0x228E, "\\uplus" },
  { 0x2A3F, "\\amalg" }, { 0x25B3, "\\triangle" }, { 0x25B5, "\\triangle" }, { 0x25BD, "\\bigtriangledown" },
  { 0x22B2, "\\lhd" }, { 0x22B3, "\\rhd" }, { 0x22C4, "\\diamond" }, { 0x25A1, "\\Box" },
  { 0x22A0, "\\boxtimes" }, { 0x229E, "\\boxplus" },
  { 0x2192, "\\to" }, { 0x2190, "\\leftarrow" }, { 0x2194, "\\leftrightarrow" },
  { 0x21D2, "\\Rightarrow" }, { 0x21D0, "\\Leftarrow" }, { 0x21D4, "\\Leftrightarrow" },
  { 0x27F6, "\\longrightarrow" }, { 0x27F5, "\\longleftarrow" }, { 0x27F7, "\\longleftrightarrow" },
  { 0x27F9, "\\Longrightarrow" }, { 0x27F8, "\\Longleftarrow" }, { 0x27FA, "\\Longleftrightarrow" },
  { 0x21A6, "\\mapsto" }, { 0x27FC, "\\longmapsto" }, { 0x21AA, "\\hookrightarrow" },
  { 0x21A9, "\\hookleftarrow" }, { 0x2191, "\\uparrow" }, { 0x2193, "\\downarrow" },
  { 0x21D1, "\\Uparrow" }, { 0x21D3, "\\Downarrow" }, { 0x2195, "\\updownarrow" },
  { 0x2197, "\\nearrow" }, { 0x2198, "\\searrow" }, { 0x2196, "\\nwarrow" }, { 0x2199, "\\swarrow" },
  { 0x21C0, "\\rightharpoonup" }, { 0x21BC, "\\leftharpoonup" }, { 0x21CC, "\\rightleftharpoons" },
  { 0x21A0, "\\twoheadrightarrow" }, { 0x219D, "\\leadsto" },
  { 0x2211, "\\sum" }, { 0x220F, "\\prod" }, { 0x2210, "\\coprod" }, { 0x222B, "\\int" },
  { 0x222C, "\\iint" }, { 0x222D, "\\iiint" }, { 0x222E, "\\oint" }, { 0x22C3, "\\bigcup" },
  { 0x22C2, "\\bigcap" }, { 0x2A01, "\\bigoplus" }, { 0x2A02, "\\bigotimes" }, { 0x2A00, "\\bigodot" },
  { 0x2A06, "\\bigsqcup" }, { 0x22C1, "\\bigvee" }, { 0x22C0, "\\bigwedge" }, { 0x2A04, "\\biguplus" },
  { 0x27E8, "\\langle" }, { 0x27E9, "\\rangle" }, { 0x2329, "\\langle" }, { 0x232A, "\\rangle" },
  { 0x230A, "\\lfloor" }, { 0x230B, "\\rfloor" }, { 0x2308, "\\lceil" }, { 0x2309, "\\rceil" },
  { 0x2016, "\\|" }, { 0x2225, "\\|" }, { 0x2026, "\\ldots" }, { 0x22EF, "\\cdots" },
  { 0x22EE, "\\vdots" }, { 0x22F1, "\\ddots" }, { 0x2032, "'" }, { 0x2019, "'" }, { 0x2033, "''" },
  { 0x00A7, "\\S" }, { 0x00B6, "\\P" }, { 0x266F, "\\sharp" }, { 0x266D, "\\flat" },
  { 0x266E, "\\natural" }, { 0x2663, "\\clubsuit" }, { 0x2662, "\\diamondsuit" },
  { 0x2661, "\\heartsuit" }, { 0x2660, "\\spadesuit" }, { 0x2220, "\\angle" },
  { 0x2234, "\\therefore" }, { 0x2235, "\\because" }, { 0x2201, "\\complement" },
  { 0x2254, "\\coloneqq" }, { 0x2223, "|" },
  { '{', "\\{" }, { '}', "\\}" }, { '\\', "\\setminus" }, { '#', "\\#" }, { '%', "\\%" },
  { '&', "\\&" }, { '$', "\\$" }, { '_', "\\_" }, { '~', "\\sim" },
  { 0x0338, "\\not" }, { 0x00AF, "\\bar" }, { 0x02C9, "\\bar" }, { 0x02C6, "\\hat" },
  { 0x02DC, "\\tilde" }, { 0x02D9, "\\dot" }, { 0x00A8, "\\ddot" }, { 0x02C7, "\\check" },
  { 0x02D8, "\\breve" }, { 0x00B4, "\\acute" }, { 0x20D7, "\\vec" },
  /* combining marks: OpenType math accents (XeTeX, LuaTeX, pdfLaTeX's stix2) */
  { 0x1DCD, "\\widehat" }, { 0x0360, "\\widetilde" },   /* CMEX's wide accents (cmex_char) */
  { 0x0300, "\\grave" }, { 0x0301, "\\acute" }, { 0x0302, "\\hat" }, { 0x0303, "\\tilde" },
  { 0x0304, "\\bar" }, { 0x0306, "\\breve" }, { 0x0307, "\\dot" }, { 0x0308, "\\ddot" },
  { 0x030C, "\\check" }, { 0x030A, "\\mathring" }, { 0x02DA, "\\mathring" }, { 0x20DB, "\\dddot" },
  { 0x0060, "\\grave" }, { 0x00B0, "\\circ" }, { 0x221A, "\\sqrt" }, { 0x221B, "\\sqrt" }, { 0x221C, "\\sqrt" },
};

static const char *
symbol_name (gunichar c)
{
  for (gsize i = 0; i < G_N_ELEMENTS (symbol_names); i++)
    if (symbol_names[i].c == c)
      return symbol_names[i].tex;
  return NULL;
}

/* Greek in the order of the Unicode math alphanumeric blocks (U+1D6A8...):
 * 25 capitals (with the theta symbol after rho), nabla, 25 small letters
 * (with final sigma), partial, then the variants. */
static const char *const math_greek[58] = {
  "\\Alpha", "\\Beta", "\\Gamma", "\\Delta", "\\Epsilon", "\\Zeta", "\\Eta", "\\Theta",
  "\\Iota", "\\Kappa", "\\Lambda", "\\Mu", "\\Nu", "\\Xi", "\\Omicron", "\\Pi", "\\Rho",
  "\\varTheta", "\\Sigma", "\\Tau", "\\Upsilon", "\\Phi", "\\Chi", "\\Psi", "\\Omega",
  "\\nabla",
  "\\alpha", "\\beta", "\\gamma", "\\delta", "\\varepsilon", "\\zeta", "\\eta", "\\theta",
  "\\iota", "\\kappa", "\\lambda", "\\mu", "\\nu", "\\xi", "\\omicron", "\\pi", "\\rho",
  "\\varsigma", "\\sigma", "\\tau", "\\upsilon", "\\varphi", "\\chi", "\\psi", "\\omega",
  "\\partial", "\\epsilon", "\\vartheta", "\\varkappa", "\\phi", "\\varrho", "\\varpi",
};

/* Capital Greek letters that are Latin look-alikes have no LaTeX command:
 * \Alpha is A. */
static const char *
greek_plain (const char *name, char *buf)
{
  static const char *const latin[][2] = {
    { "\\Alpha", "A" }, { "\\Beta", "B" }, { "\\Epsilon", "E" }, { "\\Zeta", "Z" },
    { "\\Eta", "H" }, { "\\Iota", "I" }, { "\\Kappa", "K" }, { "\\Mu", "M" }, { "\\Nu", "N" },
    { "\\Omicron", "O" }, { "\\omicron", "o" }, { "\\Rho", "P" }, { "\\Tau", "T" }, { "\\Chi", "X" },
    { "\\varTheta", "\\Theta" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (latin); i++)
    if (strcmp (latin[i][0], name) == 0)
      {
        strcpy (buf, latin[i][1]);
        return buf;
      }
  return name;
}

/* Letterlike symbols that fill the holes of the math alphanumeric blocks
 * (fm-fonts.c's letterlike_math() lists them as math symbols: a letter added
 * here belongs there too). */
static gboolean
letterlike (gunichar c, Style *style, char *letter)
{
  static const struct { gunichar c; Style s; char l; } table[] = {
    { 0x210E, STYLE_PLAIN, 'h' }, { 0x212C, STYLE_CAL, 'B' }, { 0x2130, STYLE_CAL, 'E' },
    { 0x2131, STYLE_CAL, 'F' }, { 0x210B, STYLE_CAL, 'H' }, { 0x2110, STYLE_CAL, 'I' },
    { 0x2112, STYLE_CAL, 'L' }, { 0x2133, STYLE_CAL, 'M' }, { 0x211B, STYLE_CAL, 'R' },
    { 0x212F, STYLE_CAL, 'e' }, { 0x210A, STYLE_CAL, 'g' }, { 0x2134, STYLE_CAL, 'o' },
    { 0x212D, STYLE_FRAK, 'C' }, { 0x210C, STYLE_FRAK, 'H' }, { 0x2128, STYLE_FRAK, 'Z' },
    { 0x2102, STYLE_BB, 'C' }, { 0x210D, STYLE_BB, 'H' }, { 0x2115, STYLE_BB, 'N' },
    { 0x2119, STYLE_BB, 'P' }, { 0x211A, STYLE_BB, 'Q' }, { 0x211D, STYLE_BB, 'R' },
    { 0x2124, STYLE_BB, 'Z' },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (table); i++)
    if (table[i].c == c)
      {
        *style = table[i].s;
        *letter = table[i].l;
        return TRUE;
      }
  return FALSE;
}

/* U+1D400... -> style + ASCII letter/digit, or style + Greek command. */
static gboolean
math_alphanumeric (gunichar c, Style *style, char *letter, const char **greek)
{
  static const Style latin_styles[13] = {
    STYLE_BF, STYLE_PLAIN, STYLE_BOLDSYM, STYLE_CAL, STYLE_CAL, STYLE_FRAK, STYLE_BB,
    STYLE_FRAK, STYLE_SF, STYLE_SF, STYLE_SF, STYLE_SF, STYLE_TT,
  };
  static const Style greek_styles[5] = { STYLE_BOLDSYM, STYLE_PLAIN, STYLE_BOLDSYM, STYLE_BOLDSYM, STYLE_BOLDSYM };
  static const Style digit_styles[5] = { STYLE_BF, STYLE_BB, STYLE_SF, STYLE_SF, STYLE_TT };

  *greek = NULL;
  *letter = 0;
  if (c == 0x1D4C1)
    {
      /* STIX Two Math sets \ell as the script small l. */
      *greek = "\\ell";
      *style = STYLE_PLAIN;
      return TRUE;
    }
  if (c >= 0x1D400 && c < 0x1D400 + 13 * 52)
    {
      int k = (int) (c - 0x1D400);
      int i = k % 52;
      *style = latin_styles[k / 52];
      *letter = (char) (i < 26 ? 'A' + i : 'a' + i - 26);
      return TRUE;
    }
  if (c >= 0x1D6A8 && c < 0x1D6A8 + 5 * 58)
    {
      int k = (int) (c - 0x1D6A8);
      *style = greek_styles[k / 58];
      *greek = math_greek[k % 58];
      return TRUE;
    }
  if (c >= 0x1D7CE && c <= 0x1D7FF)
    {
      int k = (int) (c - 0x1D7CE);
      *style = digit_styles[k / 10];
      *letter = (char) ('0' + k % 10);
      return TRUE;
    }
  return letterlike (c, style, letter);
}

static gboolean
name_has (const char *name, const char *pattern)
{
  /* Compiled once per pattern: g_regex_match_simple compiled it on every
   * glyph of every formula (issue 15: 1.4 % of a paper's CPU time). The
   * patterns are this file's literals, so the table stays small. */
  static GMutex lock;
  static GHashTable *compiled;
  GRegex *re;

  g_mutex_lock (&lock);
  if (compiled == NULL)
    compiled = g_hash_table_new (g_str_hash, g_str_equal);
  re = g_hash_table_lookup (compiled, pattern);
  if (re == NULL)
    {
      re = g_regex_new (pattern, G_REGEX_CASELESS, 0, NULL);
      g_assert (re != NULL);
      g_hash_table_insert (compiled, (gpointer) pattern, re);
    }
  g_mutex_unlock (&lock);
  return g_regex_match (re, name, 0, NULL);
}

/* An OpenType math font (unicode-math): its plain ASCII letters are upright
 * (\mathrm), the italic ones come as U+1D434... */
static gboolean
font_is_unicode_math (const char *name)
{
  return name_has (name, "^(Latin ?Modern ?Math|LatinModernMath|STIX ?Two ?Math|STIXTwoMath|XITS ?Math"
                         "|Cambria ?Math|TeXGyre\\w*Math|Libertinus ?Math|Fira ?Math|NewCM\\w*Math"
                         "|DejaVu ?Math|Garamond ?Math|Asana)");
}

/* The style a font gives to an ASCII letter c. */
static Style
font_letter_style (const char *font, gunichar c)
{
  const char *name = fm_font_strip_subset (font);
  gboolean bold = fm_font_is_bold (name) || name_has (name, "^(cmmib|cmbsy|lmmib)");
  gboolean italic = name_has (name, "ital|oblique|^cmmi|^lmmi|mathitalic|^cmti|^lmti|mi[0-9]*$|-mi$|mi-|^rtxmi|^rpxmi|^zplmr|^pazomath-ital|slanted|^cmsl");

  if (font_is_unicode_math (name))
    return bold ? STYLE_BF : STYLE_RM;
  /* txfonts' and newtx's MSBM (txsyb, pxsyb) has the blackboard capitals at
   * their letters' codes (\partial{\mathbb{D}} read "\partial?" on newtx
   * and libertine, development seed 1112), its other codes are symbols. */
  if (name_has (name, "^msbm|^bbold|^dsrom|^bbm|doublestruck|^txmiaX|blackboard") ||
      (c >= 'A' && c <= 'Z' && name_has (name, "^(tx|px)syb$")))
    return STYLE_BB;
  /* txfonts/newtx set \mathfrak in txmia/pxmia (seen on make-truth.py's
   * txfonts and newtx set-ups). */
  if (name_has (name, "^eufm|^eufb|fraktur|^yfrak|^(tx|px)mia$"))
    return STYLE_FRAK;
  if (name_has (name, "^rsfs|^rsfso|^eusm|^eusb|script"))
    return name_has (name, "^eus") ? STYLE_CAL : STYLE_SCR;
  /* fourier's \mathcal font (Fourier-Math-Cal); "cal" only as a name part,
   * not inside a word (Calibri, Local). */
  if (name_has (name, "math-?cal($|-)|-cal$|^cal-"))
    return STYLE_CAL;
  if (g_unichar_isupper (c) && name_has (name, "^cmsy|^cmbsy|^lmsy|sy[0-9]*$|^txsy|^pxsy|^rtxsy|^rpxsy|newtxsy|^zplsy|mathsymbols|-sy$|^ntxsy|^cmbrs|^zpzccmry"))
    return STYLE_CAL;
  if (name_has (name, "^cmtt|^lmmono|mono|courier|^sfmono"))
    return STYLE_TT;
  if (name_has (name, "^cmss|^lmsans|^cmssbx"))
    return bold ? STYLE_BF : (italic ? STYLE_PLAIN : STYLE_SF);
  if (bold)
    return (italic || name_has (name, "^cmmib|^cmbsy")) ? STYLE_BOLDSYM : STYLE_BF;
  if (italic)
    return STYLE_PLAIN;
  if (fm_font_classify (name) == FM_FONT_MATH &&
      !name_has (name, "^libertinemathrm|^kp--m-regular|mathrm|^pazomath$"))
    return STYLE_PLAIN;
  return STYLE_RM;
}

static char *
styled (Style style, const char *base)
{
  if (style == STYLE_PLAIN || style_cmd[style] == NULL)
    return g_strdup (base);
  return g_strdup_printf ("%s{%s}", style_cmd[style], base);
}

char *
fm_mathtext_glyph_latex (gunichar c, const char *font_name)
{
  Style style;
  char letter, buf[16];
  const char *greek, *name;

  /* Poppler names the phi glyphs of Adobe Symbol (mathptmx's StandardSymL,
   * Symbol) and fourier's math letters by their glyph names, which there
   * are the other way round from Computer Modern's: their \phi comes as
   * U+03C6 and \varphi as U+03D5 (pdftotext on $\phi\varphi$ in each set-up;
   * CM, LM, txfonts, mathpazo map as Unicode draws them). */
  if ((c == 0x03C6 || c == 0x03D5) && font_name != NULL &&
      name_has (fm_font_strip_subset (font_name), "^standardsym|^symbol|^fourier-math|^psyr|^usyr"))
    c = c == 0x03C6 ? 0x03D5 : 0x03C6;
  if (math_alphanumeric (c, &style, &letter, &greek))
    {
      if (greek != NULL)
        return styled (style == STYLE_BOLDSYM ? STYLE_BOLDSYM : STYLE_PLAIN, greek_plain (greek, buf));
      buf[0] = letter;
      buf[1] = 0;
      /* A pdfLaTeX script face named as one (newtx's and mathalfa's stxscr,
       * rsfso) is \mathscr: its letters come as Unicode script capitals,
       * which in OpenType math stand for \mathcal and \mathscr alike (seed
       * 1008, after it was scored: {\mathscr{P}}(X) on newtx and
       * libertine). */
      if (style == STYLE_CAL && font_name != NULL && !font_is_unicode_math (fm_font_strip_subset (font_name)) &&
          name_has (fm_font_strip_subset (font_name), "scr"))
        style = STYLE_SCR;
      /* Digits are upright already: \mathbf{2} but plain 2 in italic. */
      return styled (style, buf);
    }
  if (c < 0x80 && g_ascii_isalpha ((char) c))
    {
      /* The AMS-like symbol fonts of txfonts/pxfonts hold symbols at letter
       * codes ("B" is \coloneqq in txsyc): no meaning without their table. */
      if (font_name && name_has (fm_font_strip_subset (font_name), "^(tx|px)sy[abc]$") &&
          !(c >= 'A' && c <= 'Z' && name_has (fm_font_strip_subset (font_name), "^(tx|px)syb$")))
        return NULL;
      buf[0] = (char) c;
      buf[1] = 0;
      return styled (font_letter_style (font_name ? font_name : "", c), buf);
    }
  if (c < 0x80 && g_ascii_isdigit ((char) c))
    {
      Style s = font_letter_style (font_name ? font_name : "", c);
      buf[0] = (char) c;
      buf[1] = 0;
      /* Digits are upright in every math style but the bold and blackboard ones. */
      return styled (s == STYLE_BF || s == STYLE_BB || s == STYLE_SF || s == STYLE_TT ? s : STYLE_PLAIN, buf);
    }
  name = symbol_name (c);
  if (name != NULL)
    {
      /* Bold Greek and symbols (CMMIB, CMBSY, a bold face) are \boldsymbol. */
      if (font_name && (fm_font_is_bold (fm_font_strip_subset (font_name)) ||
                        name_has (fm_font_strip_subset (font_name), "^(cmmib|cmbsy|lmmib)")))
        return styled (STYLE_BOLDSYM, name);
      return g_strdup (name);
    }
  if (c < 0x80 && strchr ("+-=<>()[]/|,.;:!*?'@\"", (int) c) != NULL)
    {
      buf[0] = (char) c;
      buf[1] = 0;
      return g_strdup (buf);
    }
  return NULL;
}

/* ---- the region's glyphs and rules ---------------------------------------- */

typedef enum {
  ITEM_GLYPH,     /* one glyph, or two that TeX builds one symbol from      */
  ITEM_WORD,      /* upright letters forming a word: \sin, \mathrm{d}, ...  */
  ITEM_RULE,      /* a drawn horizontal rule: fraction bar, vinculum        */
  ITEM_BOX,       /* a parsed sub-formula: fraction, radical, big operator  */
} ItemKind;

typedef struct {
  ItemKind kind;
  gunichar c;         /* GLYPH: its character                                */
  char *font;         /* GLYPH: subset-stripped font name                    */
  char *tex;          /* LaTeX of the item, NULL = unknown glyph             */
  char *symbol;       /* GLYPH: the symbol token it backs (for ->symbols)    */
  Style style;
  double size;        /* font size, points                                   */
  FmRect box;         /* layout box: Poppler's, or ink for rules/big glyphs  */
  double mid;         /* vertical reference: box centre of baseline glyphs   */
  gboolean ext;       /* from a math extension font (CMEX-like)              */
  gboolean bigop;     /* takes limits in display style                       */
  gboolean used;
  gboolean accented;  /* an accent glyph was merged over it                */
  gboolean by_shape;  /* a lost delimiter read from its ink's shape alone  */
  gboolean shaft;     /* an arrow that took in a shaft of pieces (\xrightarrow) */
  double head_w;      /* an arrow's own glyph width before pieces joined it (0: none did) */
} Item;

typedef struct {
  GPtrArray *items;       /* Item*, all of them (owned)                      */
  GString *reasons;       /* why not certain, "; "-joined                    */
  GPtrArray *symbols;
  double em;              /* the region's main font size                     */
  int unknown;            /* glyphs without a LaTeX meaning                   */
  int type3;              /* ... of them in an unnamed (Type 3) font          */
  gboolean want_trailing; /* a display: look for its sentence punctuation    */
  gboolean inline_region; /* a formula inside a line of text                 */
  gunichar trailing;      /* the first glyph right of the region on its line */
  double trailing_x;
  GArray *foreign;        /* FmRect: boxes of glyphs left out that reach into the render */
  int frac_depth;         /* fraction parts being parsed around the current item */
  GArray *line_sizes;     /* double: font sizes of the text beside an inline region */
  gboolean display_style; /* an inline region's big operator in display style */
  int word_limits;        /* inline \lim-like words with limits above and below */
  int glyph_limits;       /* inline text-size big operators with them (\limits) */
  gboolean text_style;    /* an inline glyph drawn in text style (read_finish) */
  int inline_dfracs;      /* inline top-level fractions with full-size parts */
  const FmGrayImage *img; /* the region's render, or NULL (explicit_size) */
  FmRect img_area;        /* the page rectangle it shows                 */
  double img_scale;       /* its pixels per point                        */
} Reader;

static void
item_free (gpointer p)
{
  Item *it = p;
  g_free (it->font);
  g_free (it->tex);
  g_free (it->symbol);
  g_free (it);
}

static void
uncertain (Reader *r, const char *why)
{
  if (strstr (r->reasons->str, why) != NULL)
    return;
  if (r->reasons->len > 0)
    g_string_append (r->reasons, "; ");
  g_string_append (r->reasons, why);
}

/* Whether the reasons hold a choice between two spellings whose renders
 * differ by a few hundredths of an em, or not at all in the page's fonts:
 * where `&` stands in rows that start and align alike (STIX Two's X and Y
 * have one width), a colon whose space before it Poppler's box took in, a
 * word's limits' style. The image model sees no more there than the glyphs;
 * its agreeing reading was confident and wrong on such points (pdf-e2e seed
 * 1073: `&X''+\lambda X=0` read `X''+\lambda X&=0` at 0.97-0.98 on three
 * set-ups), so the agreement does not lift it (fm-recognize.c, choose). */
static gboolean
spelling_doubt (const char *reasons)
{
  static const char *const doubts[] = {
    "(& first or at it)", "(\":\" or \\colon?)", "(\\limits or \\displaystyle?)",
    "(its rise: \\displaystyle or \\limits?)", "(\\dfrac or \\displaystyle\\frac?)", NULL,
  };
  for (int k = 0; doubts[k] != NULL; k++)
    if (strstr (reasons, doubts[k]) != NULL)
      return TRUE;
  return FALSE;
}

static gboolean
is_bigop_char (gunichar c)
{
  return c == 0x2211 || c == 0x220F || c == 0x2210 || c == 0x22C3 || c == 0x22C2 ||
         c == 0x2A01 || c == 0x2A02 || c == 0x2A00 || c == 0x2A06 || c == 0x22C1 ||
         c == 0x22C0 || c == 0x2A04;
}

static gboolean
is_integral_char (gunichar c)
{
  return c == 0x222B || c == 0x222C || c == 0x222D || c == 0x222E;
}

static gboolean
is_radical_char (gunichar c)
{
  return c == 0x221A || c == 0x221B || c == 0x221C;
}

typedef enum { PIECE_TOP, PIECE_EXT, PIECE_MID, PIECE_BOTTOM } PiecePart;

/* The delimiter that a vertical piece builds (0 if c is none) and which part
 * of it c is. STIX Two (pdfLaTeX's stix2 and unicode-math) assembles a
 * delimiter taller than its largest variant from Unicode's pieces (U+239B
 * ⎛ ⎜ ⎝ ...) and a tall bar from stacked copies of the bar itself, each a
 * text-layer glyph of its own: read one by one they were unknown glyphs or
 * three bars ("|\left|x_{n}-x|\right|" on development seed 1101). */
static gunichar
piece_delim (gunichar c, PiecePart *part)
{
  static const struct { gunichar c; gunichar d; PiecePart p; } table[] = {
    { 0x239B, '(', PIECE_TOP }, { 0x239C, '(', PIECE_EXT }, { 0x239D, '(', PIECE_BOTTOM },
    { 0x239E, ')', PIECE_TOP }, { 0x239F, ')', PIECE_EXT }, { 0x23A0, ')', PIECE_BOTTOM },
    { 0x23A1, '[', PIECE_TOP }, { 0x23A2, '[', PIECE_EXT }, { 0x23A3, '[', PIECE_BOTTOM },
    { 0x23A4, ']', PIECE_TOP }, { 0x23A5, ']', PIECE_EXT }, { 0x23A6, ']', PIECE_BOTTOM },
    { 0x23A7, '{', PIECE_TOP }, { 0x23A8, '{', PIECE_MID }, { 0x23A9, '{', PIECE_BOTTOM },
    { 0x23AB, '}', PIECE_TOP }, { 0x23AC, '}', PIECE_MID }, { 0x23AD, '}', PIECE_BOTTOM },
    { 0x2320, 0x222B, PIECE_TOP }, { 0x23AE, 0x222B, PIECE_EXT }, { 0x2321, 0x222B, PIECE_BOTTOM },
    { 0x23D0, '|', PIECE_EXT }, { '|', '|', PIECE_EXT }, { 0x2223, '|', PIECE_EXT },
    { 0x2016, 0x2016, PIECE_EXT }, { 0x2225, 0x2016, PIECE_EXT },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (table); i++)
    if (table[i].c == c)
      {
        *part = table[i].p;
        return table[i].d;
      }
  /* The brace extender serves both braces. */
  *part = PIECE_EXT;
  return c == 0x23AA ? '{' : 0;
}

/* The delimiter that a CMEX piece under Adobe's private-use codes belongs
 * to ('(' '[' '{' ')' ']' '}'; the brace repeater counts as '{'), 0 if c is
 * none: the Adobe Glyph List's names bracelefttp, braceex, parenleftex...
 * that Poppler maps CMEX's pieces to, F8EB-F8FE. */
static gunichar
adobe_piece_delim (gunichar c)
{
  static const char pieces[] = "(((" "[[[" "{{{{" " " ")))" "]]]" "}}}";   /* F8F5: integralex */

  if (c < 0xF8EB || c > 0xF8FE || pieces[c - 0xF8EB] == ' ')
    return 0;
  return (gunichar) pieces[c - 0xF8EB];
}

/* The vertical ink run in the columns of a glyph's box that best meets
 * the box or the 3/4 of its height below it: TeX's Type 1 radicals and big
 * operators hang below their baseline, so Poppler's box sits too high
 * (docs/detection.md, "Radical signs and big operators"). */
static gboolean
ink_column_extent (const FmGrayImage *img, const FmRect *origin, double scale,
                   const FmRect *glyph, FmRect *out)
{
  double w = glyph->x1 - glyph->x0, h = glyph->y1 - glyph->y0;
  /* Nearly the whole width: a radical's diagonal crosses the middle columns
   * over only part of its height. */
  int x0 = (int) floor ((glyph->x0 + 0.1 * w - origin->x0) * scale);
  int x1 = (int) ceil ((glyph->x1 - 0.1 * w - origin->x0) * scale);
  int y0 = (int) floor ((glyph->y0 - origin->y0) * scale);
  int y1 = (int) ceil ((glyph->y1 + 0.75 * h - origin->y0) * scale);
  FmInkView view = fm_ink_view_gray (img->pixels, img->stride, img->width, img->height, 160);
  int best0, best1;

  x0 = MAX (x0, 0); y0 = MAX (y0, 0);
  x1 = MIN (x1, img->width); y1 = MIN (y1, img->height);
  if (x1 <= x0)
    {
      x0 = MAX (0, (int) floor ((glyph->x0 - origin->x0) * scale));
      x1 = MIN (img->width, x0 + 1);
    }
  if (x1 <= x0 || y1 <= y0)
    return FALSE;
  /* A glyph taller than the window (a display sum, a big delimiter): its
   * ink is followed up and down. */
  if (!fm_ink_vertical_run (&view, x0, x1, y0, y1, 0, &best0, &best1))
    return FALSE;
  out->x0 = glyph->x0;
  out->x1 = glyph->x1;
  out->y0 = origin->y0 + best0 / scale;
  out->y1 = origin->y0 + best1 / scale;
  return TRUE;
}

/* TeX's math extension encoding (CMEX10 and its clones): Poppler reports
 * glyphs without a Unicode name by their code ("P" for a sum, "n" for a big
 * brace). Only letters and control codes are read this way: the
 * delimiters' own characters come through ToUnicode. */
static gunichar
cmex_char (gunichar c)
{
  static const char *const table =
    "()[]LJCD{}<>|!/\\"   /* 0x00 big          */
    "()()[]LJCD{}<>/\\"   /* 0x10 Big, bigg     */
    "()[]LJCD{}<>/\\/\\" /* 0x20 bigg, Bigg  */
    "()[][]  {}{}{}  "      /* 0x30 pieces        */
    "()()<>UUOOooPPXX"      /* 0x40               */
    "SpIuiYWVSpIuiYWV"      /* 0x50 sums...       */
    "CCHHHTTT[]LJCD{}"       /* 0x60               */
    ;
  unsigned char k;
  if (c >= 0x70 || strlen (table) <= c)
    return c >= 0x70 && c <= 0x74 ? 0x221A : 0;
  k = (unsigned char) table[c];
  switch (k)
    {
    case 'L': return 0x230A;
    case 'J': return 0x230B;
    case 'C': return c >= 0x60 && c < 0x62 ? 0x2210 : 0x2308;
    case 'D': return 0x2309;
    case '<': return 0x27E8;
    case '>': return 0x27E9;
    case '!': return 0x2016;
    case 'U': return 0x2A06;
    case 'Y': return 0x2A04;   /* \biguplus (0x55, 0x5D; read as \bigsqcup before) */
    case 'O': return 0x222E;
    case 'o': return 0x2A00;
    case 'P': return 0x2A01;
    case 'X': return 0x2A02;
    case 'S': return 0x2211;
    case 'p': return 0x220F;
    case 'I': return 0x222B;
    case 'u': return 0x22C3;
    case 'i': return 0x22C2;
    case 'W': return 0x22C0;
    case 'V': return 0x22C1;
    /* \widehat and \widetilde (three widths each): Unicode's double
     * accents, which span two bases as these span the whole group */
    case 'H': return 0x1DCD;
    case 'T': return 0x0360;
    case ' ': return 0;
    default: return k;
    }
}

/* fourier's extension font (Fourier-Math-Extension, fourier-mex.pfb) keeps
 * its sized delimiters at Latin-1 codes, by glyph names Poppler has no
 * Unicode for (parenleftbig at 0xA1 ... parenleftBigg at 0xC3): read from
 * the font's own encoding vector; 0 for the other codes (slashes, double
 * brackets, and the bar pieces vextendsingle / vextenddouble at 0xAF /
 * 0xB0, whose boxes took in a fraction's bar between them: \left|\frac{}{}
 * read as scripts of a bar, CERTAIN, tests/fixtures/pdf/cls-edges-fourier). */
static gunichar
fourier_mex_char (const char *font, gunichar c)
{
  /* 0xA1 - 0xC3; ' ' = none */
  static const char table[] = "()[]LJCD{}  <>    ()()[]LJCD{}<>  (";

  if (c < 0xA1 || c > 0xC3 || !name_has (font, "^fourier-math-extension"))
    return 0;
  switch (table[c - 0xA1])
    {
    case ' ': return 0;
    case 'L': return 0x230A;
    case 'J': return 0x230B;
    case 'C': return 0x2308;
    case 'D': return 0x2309;
    case '<': return 0x27E8;
    case '>': return 0x27E9;
    default: return (gunichar) table[c - 0xA1];
    }
}

static Item *
item_new (ItemKind kind)
{
  Item *it = g_new0 (Item, 1);
  it->kind = kind;
  return it;
}

/* A letter or digit draws no stroke apart from the rest of its ink below
 * its middle, so a rule there within its box is an underline: not only
 * under ASCII letters (CMMI's M) but under Unicode math italics
 * (unicode-math's U+1D440 M, whose box reaches 0.25 em below the
 * baseline: \underline{M} read as a CERTAIN M on lm-math and stix2-math,
 * fresh seed 1016) and Greek. Xi's three bars are apart from each other.
 * Above its middle a Unicode letter still owns a rule: the ink of an
 * accent (\bar{\varphi}, or one the text layer lost over \xi) is no
 * overline. */
static gboolean
draws_no_bar (gunichar c)
{
  static const gunichar xi[] = { 0x039E, 0x1D6B5, 0x1D6EF, 0x1D729, 0x1D763, 0x1D79D };

  for (guint k = 0; k < G_N_ELEMENTS (xi); k++)
    if (c == xi[k])
      return FALSE;
  return g_unichar_isalnum (c);
}

/* How far above a radical sign's fitted box its vinculum may start: the
 * sign's stroke reaches its top only at its right end, and the ink fit
 * reads the middle 80 % of its columns, a quarter of its height lower on a
 * tall sign (\sqrt{\frac{2h}{g}} read \sqrt\overline{...}, development
 * seed 1115, every set-up). */
static double
radical_rise (const Item *g, double em)
{
  return MAX (0.25 * em, 0.25 * (g->box.y1 - g->box.y0));
}

/* Whether radical g has a vinculum above y already (rules are found from
 * the top): a script radical's minus sign starts where the sign ends, within
 * 0.4 em of its top, and had been taken as a second vinculum, an
 * \underline: e^{\sqrt{\underline{-}\lambda}t} on five set-ups of pdf-e2e
 * seed 1045. */
static gboolean
has_vinculum (Reader *r, const Item *g, double y)
{
  for (guint i = 0; i < r->items->len; i++)
    {
      const Item *it = r->items->pdata[i];
      if (it->kind == ITEM_RULE && it->box.y0 < y && fabs (g->box.x1 - it->box.x0) < 0.25 * r->em &&
          it->box.y0 >= g->box.y0 - radical_rise (g, r->em))
        return TRUE;
    }
  return FALSE;
}

/* Whether the rule at pixels [x, x_end) of row y has another item's ink
 * next above it (the first ink within 0.6 em up its columns, not a rule
 * of its own) and that item stands over the rule: a fraction's numerator.
 * Then the letter under the rule is its denominator and the rule no stroke
 * of the letter's: a text-style or script fraction's denominator stands
 * close enough under the bar for its Poppler box (font ascent) to take
 * the bar in (XeLaTeX's \lim\limits_{n}\frac{1}{n} read
 * \lim_{n}_{n}^{1}, x^{\frac{1}{n}} read x_{n}^{1}: the bar owned by the
 * Unicode n as an accent's ink; tests/fixtures/pdf/cls-scriptfrac-xe). */
static gboolean
rule_under_part (Reader *r, const FmGrayImage *img, const FmRect *origin, double scale, int x, int x_end, int y)
{
  int stop = MAX (0, y - (int) ceil (0.6 * r->em * scale));

  for (int yy = y - 1; yy >= stop; yy--)
    {
      int n = 0;
      double sum = 0, px, py = origin->y0 + (yy + 0.5) / scale;
      for (int xx = x; xx < x_end; xx++)
        if (img->pixels[(gsize) yy * img->stride + xx] < 128)
          {
            n++;
            sum += xx;
          }
      if (n == 0)
        continue;
      if (n >= 0.9 * (x_end - x))
        return FALSE;  /* another rule: the fraction's bar over an accent */
      px = origin->x0 + (sum / n + 0.5) / scale;
      for (guint i = 0; i < r->items->len; i++)
        {
          const Item *h = r->items->pdata[i];
          double over = MIN (h->box.x1, origin->x0 + x_end / scale) - MAX (h->box.x0, origin->x0 + x / scale);
          if (h->kind != ITEM_RULE && px >= h->box.x0 && px <= h->box.x1 && py >= h->box.y0 &&
              py <= h->box.y1 && 0.5 * (h->box.y0 + h->box.y1) < origin->y0 + y / scale &&
              over >= 0.5 * MIN (h->box.x1 - h->box.x0, (x_end - x) / scale))
            return TRUE;
        }
      return FALSE;
    }
  return FALSE;
}

/* Horizontal rules in the render: runs of ink at least 0.3 em long, at most
 * 0.15 em thick, white just above and below along most of their length (so
 * not the inside of a letter), not inside a glyph that draws one itself
 * (minus, equals, arrows). */
static void
find_rules (Reader *r, const FmGrayImage *img, const FmRect *origin, double scale)
{
  int min_len = (int) ceil (0.3 * r->em * scale);
  int max_thick = MAX (2, (int) ceil (0.15 * r->em * scale));
  int w = img->width, h = img->height;
  guint8 *done = g_new0 (guint8, (gsize) w * h);

#define INK(X, Y) (img->pixels[(gsize) (Y) * img->stride + (X)] < 128)
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        int x_end, y_end, white_above = 0, white_below = 0, len;
        if (!INK (x, y) || done[(gsize) y * w + x])
          continue;
        x_end = x;
        while (x_end < w && INK (x_end, y))
          x_end++;
        len = x_end - x;
        if (len < min_len)
          {
            x = x_end;
            continue;
          }
        /* Thickness: rows below that are ink along most of the run. */
        y_end = y + 1;
        while (y_end < h)
          {
            int n = 0;
            for (int xx = x; xx < x_end; xx++)
              n += INK (xx, y_end);
            if (n < 0.9 * len)
              break;
            y_end++;
          }
        for (int yy = y; yy < y_end; yy++)
          for (int xx = x; xx < x_end; xx++)
            done[(gsize) yy * w + xx] = 1;
        if (y_end - y > max_thick)
          {
            x = x_end;
            continue;
          }
        for (int xx = x; xx < x_end; xx++)
          {
            white_above += (y == 0 || !INK (xx, y - 1));
            white_below += (y_end >= h || !INK (xx, y_end));
          }
        if (white_above >= 0.6 * len && white_below >= 0.6 * len)
          {
            FmRect rule = { origin->x0 + x / scale, origin->y0 + y / scale,
                            origin->x0 + x_end / scale, origin->y0 + y_end / scale };
            double rcx = 0.5 * (rule.x0 + rule.x1), rcy = 0.5 * (rule.y0 + rule.y1);
            gboolean owned = FALSE;
            /* A vinculum starts where its radical sign ends: it is a rule
             * whatever glyph lies under it. */
            for (guint i = 0; i < r->items->len && !owned; i++)
              {
                Item *g = r->items->pdata[i];
                if (g->kind == ITEM_GLYPH && is_radical_char (g->c) &&
                    fabs (g->box.x1 - rule.x0) < 0.25 * r->em && rule.y0 >= g->box.y0 - radical_rise (g, r->em) &&
                    rule.y0 <= g->box.y0 + 0.4 * r->em && !has_vinculum (r, g, rule.y0))
                  owned = TRUE;
              }
            if (owned)
              {
                Item *it = item_new (ITEM_RULE);
                if (g_getenv ("FM_MATHTEXT_DEBUG") != NULL)
                  g_printerr ("vinculum [%.1f %.1f %.1f %.1f]\n", rule.x0, rule.y0, rule.x1, rule.y1);
                it->box = rule;
                it->mid = rcy;
                it->size = r->em;
                g_ptr_array_add (r->items, it);
                x = x_end;
                continue;
              }
            /* A glyph's own stroke touches the rest of its ink (the stem
             * of T, of 1); an overline or fraction bar keeps clear of
             * the glyphs under and over it. */
            gboolean touching = white_above < len || white_below < len;
            for (guint i = 0; i < r->items->len && !owned; i++)
              {
                Item *g = r->items->pdata[i];
                /* Strokes of a letter (the foot of 1, the top of an italic T,
                 * whose bar overhangs its box): mostly within its width and
                 * inside its box, or just above it: Latin Modern's ascent is
                 * below the top of its capitals). A fraction bar is wider than
                 * its parts by two \nulldelimiterspace (1.2 pt each at 10 pt).
                 * Inside the box half the stroke suffices: the crossbars of
                 * an italic t and f overhang their box on the right by the
                 * italic correction (Utopia's t in fourier: 30 % of the bar,
                 * read as \overline{t}, \overline{f} in 15 formulas of seed
                 * 1010); a bar that touches a glyph is no fraction bar. */
                if (g->kind == ITEM_GLYPH && !is_radical_char (g->c) && touching &&
                    MIN (rule.x1, g->box.x1) - MAX (rule.x0, g->box.x0) >= 0.5 * (rule.x1 - rule.x0) &&
                    ((rcy >= g->box.y0 && rcy <= g->box.y1) ||
                     (MIN (rule.x1, g->box.x1) - MAX (rule.x0, g->box.x0) >= 0.7 * (rule.x1 - rule.x0) &&
                      rcy >= g->box.y0 - 0.3 * g->size && rcy < g->box.y0 &&
                      rule.x1 - rule.x0 <= g->box.x1 - g->box.x0 + 0.12 * g->size)))
                  {
                    owned = TRUE;
                    break;
                  }
                if (g->kind != ITEM_GLYPH || g->ext || is_radical_char (g->c) ||
                    (g->c < 0x80 && g_ascii_isalnum ((char) g->c)) || ((rcy > 0.5 * (g->box.y0 + g->box.y1) ||
                    rule_under_part (r, img, origin, scale, x, x_end, y)) && draws_no_bar (g->c)))
                  continue;
                owned = rcx >= g->box.x0 && rcx <= g->box.x1 && rcy >= g->box.y0 - 0.1 * r->em &&
                        rcy <= g->box.y1 + 0.1 * r->em &&
                        rule.x1 - rule.x0 <= 1.3 * (g->box.x1 - g->box.x0) + 0.1 * r->em;
              }
            /* The foot serif of a letter of the line above, cut by the
             * detector's box (development seed 1114, CM: the T of "Than"
             * over an inline formula's ")", read \overline{)}). */
            for (guint i = 0; r->foreign != NULL && i < r->foreign->len && !owned; i++)
              {
                const FmRect *f = &g_array_index (r->foreign, FmRect, i);
                owned = rcx >= f->x0 && rcx <= f->x1 && rcy >= f->y0 - 0.1 * r->em && rcy <= f->y1 + 0.1 * r->em &&
                        rule.x1 - rule.x0 <= 1.3 * (f->x1 - f->x0) + 0.1 * r->em;
              }
            if (!owned)
              {
                Item *it = item_new (ITEM_RULE);
                int hook = (int) ceil (0.1 * r->em * scale);
                /* Ink right under its left end: a radical sign's arm that
                 * no radical glyph in the region owns (the detector's box
                 * cut the sign off, fresh seed 1018 on fourier after it
                 * was scored: its ink counted as the next glyph's by
                 * connection, v=\overline{2a\Delta x} CERTAIN). */
                for (int xx = x; y_end + 1 < h && xx < MIN (x_end, x + hook); xx++)
                  if (INK (xx, y_end) || INK (xx, y_end + 1))
                    {
                      uncertain (r, "a rule with ink under its left end (a radical sign without its glyph?)");
                      break;
                    }
                if (g_getenv ("FM_MATHTEXT_DEBUG") != NULL)
                  g_printerr ("rule [%.1f %.1f %.1f %.1f]\n", rule.x0, rule.y0, rule.x1, rule.y1);
                it->box = rule;
                it->mid = rcy;
                it->size = r->em;
                g_ptr_array_add (r->items, it);
              }
          }
        x = x_end;
      }
#undef INK
  g_free (done);
}

/* ---- LaTeX assembly ---------------------------------------------------------- */

/* Appends a token string with the normaliser's spacing rule: one space only
 * between a control word and a following letter (docs/model.md). */
static void
tex_append (GString *out, const char *tex)
{
  if (tex == NULL || *tex == 0)
    return;
  if (out->len > 0 && g_ascii_isalpha (tex[0]))
    {
      gssize i = (gssize) out->len - 1;
      while (i >= 0 && g_ascii_isalpha (out->str[i]))
        i--;
      if (i >= 0 && i < (gssize) out->len - 1 && out->str[i] == '\\')
        g_string_append_c (out, ' ');
    }
  g_string_append (out, tex);
}

static double
cx (const Item *it)
{
  return 0.5 * (it->box.x0 + it->box.x1);
}

static double
cy (const Item *it)
{
  return 0.5 * (it->box.y0 + it->box.y1);
}

static int
by_x (gconstpointer a, gconstpointer b)
{
  const Item *p = *(Item *const *) a, *q = *(Item *const *) b;
  return (p->box.x0 > q->box.x0) - (p->box.x0 < q->box.x0);
}

static void
union_box (FmRect *acc, const FmRect *b, gboolean *first)
{
  if (*first)
    *acc = *b;
  else
    {
      acc->x0 = MIN (acc->x0, b->x0); acc->y0 = MIN (acc->y0, b->y0);
      acc->x1 = MAX (acc->x1, b->x1); acc->y1 = MAX (acc->y1, b->y1);
    }
  *first = FALSE;
}

static char *parse_list (Reader *r, GPtrArray *items);
static gboolean is_accent_char (gunichar c, const char **cmd);

/* Parses the unused items of `from` that pick() accepts, marking them used. */
static char *
parse_subset (Reader *r, GPtrArray *from, GPtrArray *chosen, FmRect *box, double *max_size)
{
  gboolean first = TRUE;
  char *tex;

  *max_size = 0;
  for (guint i = 0; i < chosen->len; i++)
    {
      Item *it = chosen->pdata[i];
      union_box (box, &it->box, &first);
      if (it->kind != ITEM_RULE)
        *max_size = MAX (*max_size, it->size);
    }
  (void) from;
  tex = parse_list (r, chosen);
  for (guint i = 0; i < chosen->len; i++)
    ((Item *) chosen->pdata[i])->used = TRUE;
  return tex;
}

static const char *
open_delim (gunichar c)
{
  switch (c)
    {
    case '(': return "\\left(";
    case '[': return "\\left[";
    case '{': return "\\left\\{";
    case '|': case 0x2223: return "\\left|";
    case 0x2016: case 0x2225: return "\\left\\|";
    case 0x27E8: case 0x2329: return "\\left\\langle";
    case 0x230A: return "\\left\\lfloor";
    case 0x2308: return "\\left\\lceil";
    default: return NULL;
    }
}

static const char *
close_delim (gunichar c)
{
  switch (c)
    {
    case ')': return "\\right)";
    case ']': return "\\right]";
    case '}': return "\\right\\}";
    case '|': case 0x2223: return "\\right|";
    case 0x2016: case 0x2225: return "\\right\\|";
    case 0x27E9: case 0x232A: return "\\right\\rangle";
    case 0x230B: return "\\right\\rfloor";
    case 0x2309: return "\\right\\rceil";
    default: return NULL;
    }
}

/* A fraction's part on the baseline of an item beside the bar (not itself
 * under or over another rule) is the next or previous line of a multi-line
 * display ("\\omega=\\frac{2\\pi}{1} \\\\ =7.3..." read the second line into the
 * denominator; development set of multi-line displays, seed 1101): the
 * fraction's parts are only over or under the bar, alone on their lines
 * (a run of items on their baseline that reaches beside the bar is another
 * line). Full-size items only: an inline fraction's parts share a baseline with
 * scripts beside it (x_{n}\\coloneqq\\frac{1}{n^{2}}). */
static gboolean
on_baseline_of (const Item *o, const Item *it, double em)
{
  /* a baseline glyph or word: not a sized delimiter or big operator, whose
   * ink bottom may meet a denominator's (\left(\frac{c}{d}\right)) */
  return (o->kind == ITEM_GLYPH || o->kind == ITEM_WORD) && !o->used && !o->ext && !o->bigop &&
         o->box.y1 - o->box.y0 <= 1.2 * em && o->size >= 0.85 * em && fabs (o->size - it->size) <= 0.1 * em &&
         fabs (o->box.y1 - it->box.y1) <= 0.1 * em;
}

static gboolean
on_other_line (GPtrArray *items, const Item *rule, const Item *it, double em)
{
  /* the run of items on its baseline, each within 0.6 em of the next (a
   * \binom's part beside a fraction stands further off) */
  g_autoptr (GPtrArray) run = g_ptr_array_new ();

  g_ptr_array_add (run, (gpointer) it);
  for (guint k = 0; k < run->len; k++)
    {
      const Item *m = run->pdata[k];
      for (guint i = 0; i < items->len; i++)
        {
          const Item *o = items->pdata[i];
          gboolean framed = FALSE;
          if (g_ptr_array_find (run, o, NULL) || !on_baseline_of (o, it, em) ||
              o->box.x0 > m->box.x1 + 0.6 * em || o->box.x1 < m->box.x0 - 0.6 * em)
            continue;
          for (guint q = 0; q < items->len && !framed; q++)
            {
              const Item *f = items->pdata[q];
              framed = f != rule && f->kind == ITEM_RULE && !f->used && cx (o) >= f->box.x0 && cx (o) <= f->box.x1;
            }
          if (framed)
            continue;
          if (cx (o) < rule->box.x0 - 0.2 * em || cx (o) > rule->box.x1 + 0.2 * em)
            return TRUE;
          g_ptr_array_add (run, (gpointer) o);
        }
    }
  return FALSE;
}

/* A fraction part's lines beyond the nearest (fm-mathtext-align.c): the
 * display's other lines, dropped from the part. Returns the size of the
 * part's lines when it has several (a fraction inside it), else 0. */
static double
part_lines (GPtrArray *part, gboolean above)
{
  g_autoptr (GArray) view = g_array_new (FALSE, TRUE, sizeof (FmAlignItem));
  g_autofree gboolean *keep = g_new (gboolean, part->len + 1);
  double size;

  for (guint i = 0; i < part->len; i++)
    {
      Item *it = part->pdata[i];
      FmAlignItem a = { it, it->box, it->mid, it->size, it->tex, it->ext, it->kind == ITEM_GLYPH,
                        it->kind == ITEM_RULE };
      g_array_append_val (view, a);
    }
  size = fm_mathtext_part_lines ((FmAlignItem *) view->data, view->len, above, keep);
  for (guint i = part->len; i-- > 0;)
    if (!keep[i])
      g_ptr_array_remove_index (part, i);
  return size;
}

/* A fraction's two parts are set in one style: where one part has no
 * full-size item (a text-style fraction, 7 of 10 pt, in a cases column or
 * inline), full-size items counted in the other part belong to the next line
 * (cases' "\\frac{1}{n} \\\\ 0" had read \\frac{1}{0}). */
static void
drop_other_size (GPtrArray *part, GPtrArray *other, double em)
{
  double other_max = 0;

  for (guint i = 0; i < other->len; i++)
    other_max = MAX (other_max, ((Item *) other->pdata[i])->size);
  if (other->len == 0 || other_max >= 0.85 * em)
    return;
  for (guint i = part->len; i-- > 0;)
    if (((Item *) part->pdata[i])->size >= 0.85 * em && ((Item *) part->pdata[i])->kind != ITEM_RULE)
      g_ptr_array_remove_index (part, i);
}

static gint
compare_doubles (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* The font size of the text beside an inline region on its line (the
 * median of its glyphs' sizes), 0 when none stands there. The region's own
 * largest size is no measure of it: an inline \dfrac's parts are at the
 * text size, a \frac's at script size, and a region of a fraction alone
 * holds only them. */
static double
line_size (Reader *r)
{
  g_autoptr (GArray) v = NULL;

  if (r->line_sizes == NULL || r->line_sizes->len == 0)
    return 0;
  v = g_array_copy (r->line_sizes);
  g_array_sort (v, compare_doubles);
  return g_array_index (v, double, v->len / 2);
}

/* A fraction (or an overline or underline) by its rule: its parts are the
 * items over and under the bar; fills box. FALSE when the rule has none. */
static gboolean
take_fraction (Reader *r, GPtrArray *items, Item *rule, Item *box)
{
  g_autoptr (GPtrArray) upper = g_ptr_array_new ();
  g_autoptr (GPtrArray) lower = g_ptr_array_new ();
  g_autofree char *num = NULL, *den = NULL;
  double em = r->em, s1 = 0, s2 = 0, part_size = 0;
  FmRect b1 = { 0 }, b2 = { 0 };
  int both;

  for (guint i = 0; i < items->len; i++)
    {
      Item *it = items->pdata[i];
      if (it->used || cx (it) < rule->box.x0 || cx (it) > rule->box.x1 ||
          it->box.x0 < rule->box.x0 - 0.2 * em || it->box.x1 > rule->box.x1 + 0.2 * em)
        continue;
      if (cy (it) < rule->box.y0 && it->box.y0 > rule->box.y0 - 3.0 * em)
        g_ptr_array_add (upper, it);
      else if (cy (it) > rule->box.y1 && it->box.y1 < rule->box.y1 + 3.0 * em)
        g_ptr_array_add (lower, it);
    }
  /* a fraction (parts on both sides; \underline{M}'s part is on its line) */
  if (upper->len > 0 && lower->len > 0)
    {
      double inner = MAX (part_lines (upper, TRUE), part_lines (lower, FALSE));
      /* what it left is a bar over or under glyphs: not silently an
       * \overline or \underline */
      if (upper->len == 0 || lower->len == 0)
        uncertain (r, "a fraction part left empty by its lines");
      /* A fraction inside a part has parts smaller than the part's own
       * text (display: text then script style; inline: script then
       * script-script); full-size ones are \dfrac's or \cfrac's (or
       * \displaystyle's), which this reader writes as \frac. */
      if (inner >= 0.85 * em)
        uncertain (r, "a display-style fraction inside a fraction (\\dfrac, \\cfrac?)");
    }
  if (upper->len > 0 && lower->len > 0)
    for (guint i = lower->len; i-- > 0;)
      {
        Item *it = lower->pdata[i];
        if (it->size >= 0.85 * em && on_other_line (items, rule, it, em))
          g_ptr_array_remove_index (lower, i);
      }
  if (upper->len > 0 && lower->len > 0)
    for (guint i = upper->len; i-- > 0;)
      {
        Item *it = upper->pdata[i];
        if (it->size >= 0.85 * em && on_other_line (items, rule, it, em))
          g_ptr_array_remove_index (upper, i);
      }
  drop_other_size (upper, lower, em);
  drop_other_size (lower, upper, em);
  for (guint i = 0; i < upper->len + lower->len; i++)
    {
      Item *it = i < upper->len ? upper->pdata[i] : lower->pdata[i - upper->len];
      if (it->kind != ITEM_RULE)
        part_size = MAX (part_size, it->size);
    }
  /* a real fraction's parts only (not an overline's or vinculum's) */
  both = upper->len > 0 && lower->len > 0;
  r->frac_depth += both;
  num = parse_subset (r, items, upper, &b1, &s1);
  den = parse_subset (r, items, lower, &b2, &s2);
  r->frac_depth -= both;
  /* Inside a display fraction's part (text style) a \frac's parts are
   * script size; full-size ones are a \dfrac's (the corpus has no \cfrac;
   * \displaystyle\frac draws the same: take_fraction's caller keeps the
   * reading uncertain). */
  if (upper->len > 0 && lower->len > 0 && r->frac_depth > 0 && !r->inline_region && part_size >= 0.85 * em)
    box->tex = g_strdup_printf ("\\dfrac{%s}{%s}", num, den);
  /* Inline, a text-style \frac's parts are script size; parts at the size
   * of the line's text are display style's: \dfrac, or \frac under a
   * \displaystyle that a big operator shows (read_finish). Without a big
   * operator the glyphs cannot tell \dfrac from \displaystyle\frac (the
   * corpus's inline formulas: 122 with \dfrac, 101 with \displaystyle
   * and fractions only); \dfrac, the commoner. */
  else if (upper->len > 0 && lower->len > 0 && r->frac_depth == 0 && r->inline_region &&
           line_size (r) > 0 && part_size >= 0.85 * line_size (r))
    {
      box->tex = g_strdup_printf ("\\dfrac{%s}{%s}", num, den);
      r->inline_dfracs++;
    }
  else if (upper->len > 0 && lower->len > 0)
    {
      /* An inline fraction on the formula's main line with script-size
       * parts shows text style. Its parts are held against the line's text
       * size, else against the region's largest glyphs (r->em). Script-
       * script-size parts are a fraction in a script, its parts drawn
       * alike in both styles (a superscript's rise is not: inline_style
       * keeps x^{\\frac{1}{n}} uncertain), and full-size ones where the line gives
       * no size are display style's or a region of the fraction alone:
       * neither is text style (tidy18: both had kept a word's limits
       * \\limits, uncertain, under a \\displaystyle the glyphs showed).
       * Script size is 0.65-0.75 of the text in CM's sizes and Latin
       * Modern Math, script-script 0.5-0.625: at 0.6-0.625 (CM at 8 pt) a
       * script's fraction still counts, the uncertain side. */
      double ref = line_size (r) > 0 ? line_size (r) : em;
      box->tex = g_strdup_printf ("\\frac{%s}{%s}", num, den);
      if (r->frac_depth == 0 && r->inline_region && part_size >= 0.6 * ref && part_size < 0.85 * ref)
        r->text_style = TRUE;
    }
  else if (lower->len > 0)
    box->tex = g_strdup_printf ("\\overline{%s}", den);
  else if (upper->len > 0)
    {
      /* Rare in formulas, and what an extensible arrow's or a
       * brace's pieces look like. */
      uncertain (r, "a rule under glyphs (\\underline?)");
      box->tex = g_strdup_printf ("\\underline{%s}", num);
    }
  else
    {
      uncertain (r, "a rule that is neither fraction bar nor radical");
      return FALSE;
    }
  box->box = rule->box;
  if (upper->len > 0) { box->box.y0 = MIN (box->box.y0, b1.y0); }
  if (lower->len > 0) { box->box.y1 = MAX (box->box.y1, b2.y1); }
  /* A fraction's line runs through its bar (the math axis); an
   * overline's or underline's through its part, not its rule: the
   * rule's height put \underline{M} (STIX Two) and
   * \overline{\varphi(\xi)} (Latin Modern Math, STIX Two) on rows
   * of their own (development seed 1105). */
  if (upper->len > 0 && lower->len > 0)
    box->mid = cy (rule);
  else
    box->mid = lower->len > 0 ? 0.5 * (b2.y0 + b2.y1) : 0.5 * (b1.y0 + b1.y1);
  /* A fraction on the main line has script-size parts in text style
   * (7 of 10 pt): it counts as full size unless its parts are
   * script-script size. */
  box->size = MAX (s1, s2) >= 0.6 * em ? MAX (em, MAX (s1, s2)) : MAX (s1, s2) / 0.7;
  if (upper->len == 0 || lower->len == 0)
    box->size = MAX (s1, s2);
  return TRUE;
}

/* Fractions and radicals by their rules, longest rule first (outer before
 * inner); the parts are parsed recursively. */
static void
take_rules (Reader *r, GPtrArray *items)
{
  for (;;)
    {
      Item *rule = NULL, *rad = NULL, *box;
      g_autoptr (GPtrArray) lower = g_ptr_array_new ();
      g_autoptr (GPtrArray) index = g_ptr_array_new ();
      double em = r->em, s1 = 0, s2 = 0;
      FmRect b1 = { 0 }, b2 = { 0 };

      for (guint i = 0; i < items->len; i++)
        {
          Item *it = items->pdata[i];
          if (it->kind == ITEM_RULE && !it->used &&
              (rule == NULL || it->box.x1 - it->box.x0 > rule->box.x1 - rule->box.x0))
            rule = it;
        }
      if (rule == NULL)
        return;
      rule->used = TRUE;
      for (guint i = 0; i < items->len; i++)
        {
          Item *g = items->pdata[i];
          if (g->kind == ITEM_GLYPH && !g->used && is_radical_char (g->c) &&
              g->box.x1 >= rule->box.x0 - 0.25 * em && g->box.x0 < rule->box.x0 &&
              rule->box.y0 >= g->box.y0 - radical_rise (g, em) && rule->box.y0 <= g->box.y0 + 0.4 * em)
            rad = g;
        }
      box = item_new (ITEM_BOX);
      if (rad != NULL)
        {
          GString *t = g_string_new ("\\sqrt");
          g_autofree char *body = NULL, *idx = NULL;
          rad->used = TRUE;
          for (guint i = 0; i < items->len; i++)
            {
              Item *it = items->pdata[i];
              if (it->used)
                continue;
              if (cx (it) > rule->box.x0 && cx (it) <= rule->box.x1 + 0.05 * em &&
                  cy (it) > rule->box.y1 && it->box.y0 >= rule->box.y0 - 0.1 * em && cy (it) < rad->box.y1)
                g_ptr_array_add (lower, it);
              else if (cx (it) >= rad->box.x0 - 0.1 * em && cx (it) < rad->box.x1 &&
                       it->box.y1 <= 0.5 * (rad->box.y0 + rad->box.y1) + 0.1 * em && it->size < rad->size)
                g_ptr_array_add (index, it);
            }
          body = parse_subset (r, items, lower, &b1, &s1);
          if (index->len > 0)
            {
              idx = parse_subset (r, items, index, &b2, &s2);
              g_string_append_printf (t, "[%s]", idx);
            }
          if (lower->len == 0)
            uncertain (r, "empty radical");
          g_string_append_printf (t, "{%s}", body);
          box->tex = g_string_free (t, FALSE);
          box->box = rad->box;
          box->box.x1 = MAX (rule->box.x1, b1.x1);
          box->size = MAX (rad->size, s1);
          box->mid = lower->len > 0 ? 0.5 * (b1.y0 + b1.y1) : cy (rad);
        }
      else if (!take_fraction (r, items, rule, box))
        {
          g_free (box);
          continue;
        }
      g_ptr_array_add (r->items, box);
      g_ptr_array_add (items, box);
    }
}

static gboolean
is_limits_word (const char *tex)
{
  static const char *const w[] = { "\\lim", "\\max", "\\min", "\\sup", "\\inf", "\\limsup",
                                   "\\liminf", "\\det", "\\gcd", "\\Pr" };
  for (gsize i = 0; i < G_N_ELEMENTS (w); i++)
    if (g_strcmp0 (tex, w[i]) == 0)
      return TRUE;
  return FALSE;
}

/* A big operator drawn at its display size, against the size of the
 * line's text (or the region's): TeX's display \sum and \prod are 1.4 em
 * tall (text 1.0), its display \int 2.2 em (text 1.1), in CMEX and the
 * OpenType math fonts' display variants alike. */
static gboolean
display_size_op (Reader *r, const Item *op)
{
  double size = line_size (r) > 0 ? line_size (r) : r->em;

  if (op->kind != ITEM_GLYPH || !(op->bigop || is_integral_char (op->c)) || size <= 0)
    return FALSE;
  return op->box.y1 - op->box.y0 >= (is_integral_char (op->c) ? 1.6 : 1.25) * size;
}

/* Inline, big operators drawn at their display size put the formula in
 * display style (read_finish writes \displaystyle). */
static void
note_display_ops (Reader *r)
{
  for (guint i = 0; i < r->items->len && r->inline_region; i++)
    {
      const Item *it = r->items->pdata[i];
      if (display_size_op (r, it))
        r->display_style = TRUE;
      /* a big operator at its text size shows text style (or a fraction
       * part's: then only a word's \limits stays, uncertain) */
      else if (it->kind == ITEM_GLYPH && (it->bigop || is_integral_char (it->c)))
        r->text_style = TRUE;
    }
}

/* An inline operator with limits above and below it (the parts just
 * found; not inside a fraction): in display style, written by read_finish;
 * a big operator at its text size has them by \limits. A word's size does
 * not change with the style: \displaystyle\lim_{..} and \lim\limits_{..}
 * draw alike, and the corpus's inline formulas have the first 136 times
 * (no other big operator), the second 106. A word gets \limits here;
 * read_finish drops it for \displaystyle when no other glyph shows text
 * style (\lim\limits_{n}\frac{1}{n} read CERTAIN \displaystyle\lim..
 * on 7 set-ups: review of reader12q). */
static void
note_inline_limits (Reader *r, const Item *op, GString *t)
{
  if (!r->inline_region || r->frac_depth > 0)
    return;
  if (op->kind == ITEM_GLYPH && display_size_op (r, op))
    {
      r->display_style = TRUE;
      return;
    }
  tex_append (t, "\\limits");
  if (op->kind == ITEM_GLYPH)
    r->glyph_limits++;
  else
    r->word_limits++;
}

/* Limits above and below big operators and \lim-like words. */
static void
take_limits (Reader *r, GPtrArray *items)
{
  double em = r->em;
  for (guint k = 0; k < items->len; k++)
    {
      Item *op = items->pdata[k];
      GPtrArray *part[2];
      FmRect pb[2] = { { 0 } };
      double ps[2];
      char *pt[2] = { NULL, NULL };
      GString *t;

      if (op->used || !((op->kind == ITEM_GLYPH && op->bigop) ||
                        (op->kind == ITEM_WORD && is_limits_word (op->tex))))
        continue;
      for (int side = 0; side < 2; side++)
        {
          gboolean grew = TRUE;
          part[side] = g_ptr_array_new ();
          for (guint i = 0; i < items->len; i++)
            {
              Item *it = items->pdata[i];
              if (it == op || it->used || it->kind == ITEM_RULE)
                continue;
              if (MIN (it->box.x1, op->box.x1) - MAX (it->box.x0, op->box.x0) <= 0.1 * (op->box.x1 - op->box.x0))
                continue;
              /* Latin Modern's Poppler boxes overlap more than CM's: the
               * limit under a 12 pt \lim starts 0.15 em above the word's
               * box bottom (development seed 1103 read "0=_{n}\lim_{\to\infty}",
               * CERTAIN); a script beside it (no overlap in x anyway) starts
               * over half an em above. */
              if (side == 0 ? (it->box.y1 <= op->box.y0 + 0.3 * em && it->box.y1 > op->box.y0 - 1.5 * em && it->size < op->size)
                            : (it->box.y0 >= op->box.y1 - 0.3 * em && it->box.y0 < op->box.y1 + 1.5 * em && it->size < op->size))
                g_ptr_array_add (part[side], it);
            }
          /* The rest of a limit's line: wider than the operator, centred. */
          while (grew && part[side]->len > 0)
            {
              grew = FALSE;
              for (guint i = 0; i < items->len; i++)
                {
                  Item *it = items->pdata[i];
                  gboolean near = FALSE;
                  gboolean other_op = FALSE;
                  if (it == op || it->used || it->kind == ITEM_RULE || g_ptr_array_find (part[side], it, NULL))
                    continue;
                  /* Limits of the next operator (\sum_{k}\sum_{l}) are its own. */
                  for (guint o = 0; o < items->len && !other_op; o++)
                    {
                      Item *op2 = items->pdata[o];
                      other_op = op2 != op && ((op2->kind == ITEM_GLYPH && op2->bigop) ||
                                               (op2->kind == ITEM_WORD && is_limits_word (op2->tex))) &&
                                 MIN (it->box.x1, op2->box.x1) > MAX (it->box.x0, op2->box.x0);
                    }
                  if (other_op)
                    continue;
                  for (guint j = 0; j < part[side]->len && !near; j++)
                    {
                      Item *q = part[side]->pdata[j];
                      near = cy (it) > q->box.y0 && cy (it) < q->box.y1 &&
                             MAX (it->box.x0 - q->box.x1, q->box.x0 - it->box.x1) < 0.25 * em &&
                             it->size < op->size;
                    }
                  if (near)
                    {
                      g_ptr_array_add (part[side], it);
                      grew = TRUE;
                    }
                }
            }
        }
      if (part[0]->len == 0 && part[1]->len == 0)
        {
          g_ptr_array_free (part[0], TRUE);
          g_ptr_array_free (part[1], TRUE);
          continue;
        }
      op->used = TRUE;
      t = g_string_new (NULL);
      tex_append (t, op->tex);
      note_inline_limits (r, op, t);
      for (int side = 1; side >= 0; side--)
        if (part[side]->len > 0)
          {
            pt[side] = parse_subset (r, items, part[side], &pb[side], &ps[side]);
            g_string_append_printf (t, side == 1 ? "_{%s}" : "^{%s}", pt[side]);
          }
      {
        Item *box = item_new (ITEM_BOX);
        gboolean first = TRUE;
        union_box (&box->box, &op->box, &first);
        for (int side = 0; side < 2; side++)
          if (part[side]->len > 0)
            union_box (&box->box, &pb[side], &first);
        box->mid = op->mid;
        box->size = op->size;
        /* An operator whose ink stands taller than the region's em is a
         * display one on the main line, whatever its font's size: CMEX10
         * stays at 10 pt in a 12 pt document, and its \prod with limits
         * had read as a script of what stood before it
         * (P=_{\prod_{j\neq k}}a_{j}, certain; mathtext-prod12.tex). */
        if (op->box.y1 - op->box.y0 >= r->em)
          box->size = MAX (box->size, r->em);
        box->tex = g_string_free (t, FALSE);
        g_ptr_array_add (r->items, box);
        g_ptr_array_add (items, box);
      }
      for (int side = 0; side < 2; side++)
        {
          g_free (pt[side]);
          g_ptr_array_free (part[side], TRUE);
        }
    }
}

/* Scripts of one base: sup and sub lists parsed recursively; primes stay
 * primes (y''). */
/* A script that is one double bar is \parallel (F_{\parallel}, the
 * component along a direction), never half of a norm: CM draws \| and
 * \parallel with one glyph; fresh seed 1002 lost F_{\parallel} on five
 * set-ups to F_{\|}. */
static const char *
script_latex (const char *t)
{
  return strcmp (t, "\\|") == 0 ? "\\parallel" : t;
}

static void
append_scripts (Reader *r, GString *out, GPtrArray *sub, GPtrArray *sup)
{
  FmRect b;
  double s;
  if (sup->len > 0)
    {
      /* Primes come first in x order. */
      g_ptr_array_sort (sup, by_x);
      while (sup->len > 0 && ((Item *) sup->pdata[0])->kind == ITEM_GLYPH &&
             (g_strcmp0 (((Item *) sup->pdata[0])->tex, "'") == 0 ||
              g_strcmp0 (((Item *) sup->pdata[0])->tex, "''") == 0))
        {
          ((Item *) sup->pdata[0])->used = TRUE;
          g_string_append (out, ((Item *) sup->pdata[0])->tex);
          g_ptr_array_remove_index (sup, 0);
        }
    }
  if (sub->len > 0)
    {
      g_autofree char *t = parse_subset (r, NULL, sub, &b, &s);
      g_string_append_printf (out, "_{%s}", script_latex (t));
    }
  if (sup->len > 0)
    {
      g_autofree char *t = parse_subset (r, NULL, sup, &b, &s);
      g_string_append_printf (out, "^{%s}", script_latex (t));
    }
}

/* One line of items: the full-size ones in x order, each followed by its
 * scripts (the smaller items between it and the next full-size one). */
/* Bars: the same glyph opens and closes. */
static gboolean
is_bar_delim (gunichar c)
{
  return c == '|' || c == 0x2223 || c == 0x2016 || c == 0x2225;
}

/* One bar kind for | and U+2223, one for the double bars. */
static gunichar
bar_kind (gunichar c)
{
  return c == 0x2016 || c == 0x2225 ? 0x2016 : '|';
}

/* The size command of a sized delimiter whose ink is h ems tall: the size
 * variants are about 1.2, 1.8, 2.4 and 3 em in CMEX and the OpenType math
 * fonts. */
static const char *
size_step (double h)
{
  return h < 1.4 ? "\\big" : h < 1.95 ? "\\Big" : h < 2.55 ? "\\bigg" : "\\Bigg";
}

/* The size command of sized delimiter m whose ink is h pt tall. amsmath's
 * \big ... \Bigg ask for 1.08, 1.62, 2.16 and 2.7 em of the body's size and
 * get the first variant at least that tall: 1.2, 1.8, 2.4 and 3 em of the
 * extension font, which scales with the body (size_step) except where a
 * set-up keeps it at 10 pt: lmodern's LMMathExtension10 at 12 pt draws
 * \big as its 1.8 em variant, \Big as 2.4 (read \Bigl( and \bigg|, pdf-e2e
 * seed 1045). There the nearest of the sizes that each command draws.
 * CMEX10 unscaled under a larger body is no such set-up: amsmath (and
 * amsfonts) scale cmex with the body, so it means LaTeX's own \big..\Bigg,
 * fixed 8.5..17.5 pt boxes that draw 1.2..3 em of the 10 pt font (size_step;
 * 12 pt \Big( read \bigl( CERTAIN by the ladder). lmodern's 10 pt font
 * comes with or without amsmath: where LaTeX's command would draw the same
 * glyph as amsmath's nearest (18 pt: amsmath's \big, LaTeX's \Big) the
 * size is not sure. */
static const char *
glyph_size_step (Reader *r, const Item *m, double h)
{
  static const double ladder[] = { 1.0, 1.2, 1.8, 2.4, 3.0 };
  static const double asks[] = { 1.08, 1.62, 2.16, 2.7 };
  static const char *const names[] = { "\\big", "\\Big", "\\bigg", "\\Bigg" };
  double ext = MAX (m->size, 1.0), best = G_MAXDOUBLE;
  const char *name = NULL;

  /* lmodern's ladder: fourier's and the OpenType fonts' differ */
  if (r->em <= 1.05 * ext || m->font == NULL || !name_has (m->font, "^(lmex|lmmathextension)"))
    return size_step (h / ext);
  for (guint k = 0; k < G_N_ELEMENTS (asks); k++)
    {
      double need = asks[k] * r->em, drawn = need;   /* past the ladder: built to size */
      for (guint l = 0; l < G_N_ELEMENTS (ladder); l++)
        if (ladder[l] * ext >= need)
          {
            drawn = ladder[l] * ext;
            break;
          }
      if (fabs (h - drawn) < best)
        {
          best = fabs (h - drawn);
          name = names[k];
        }
    }
  if (strcmp (name, size_step (h / ext)) != 0)
    uncertain (r, "a sized delimiter of lmodern's 10 pt font under a larger body (amsmath's size or LaTeX's?)");
  return name;
}

/* The size command of a sized pair open ... close, by its ink. */
static const char *
size_of_pair (Reader *r, const Item *open, const Item *close)
{
  return glyph_size_step (r, open, MIN (open->box.y1 - open->box.y0, close->box.y1 - close->box.y0));
}

/* The pair open ... close's height over *least, the least \left would have
 * drawn around the ink between them (0: the ink cannot be read). TeX's \left takes the first
 * variant at least 901/1000 of twice the content's extent from the axis
 * (\delimiterfactor), or that less 5 pt (\delimitershortfall), and its
 * heights are the fonts' (at least the ink's, near enough). Around a
 * fraction the pair's size is then no \left's: inline
 * \bigl[\frac{\partial\varphi}{\partial x}\bigr] is 1.2 em where \left[ draws
 * 1.8 (read CERTAIN as \left[ on five set-ups of pdf-e2e seed 1037). */
static double
height_for_left (Reader *r, GPtrArray *items, const Item *open, const Item *close, double *least)
{
  const FmGrayImage *img = r->img;
  double s = r->img_scale, axis = 0.5 * (MIN (open->box.y0, close->box.y0) + MAX (open->box.y1, close->box.y1));
  double height = MIN (open->box.y1 - open->box.y0, close->box.y1 - close->box.y0), reach = 0, need;
  FmRect win = { 0 };
  gboolean first = TRUE;
  int x0, x1, y0, y1, top = -1, bottom = -1;

  if (img == NULL || s <= 0)
    return 0;
  for (guint i = 0; i < items->len; i++)
    {
      const Item *it = items->pdata[i];
      if (it != open && it != close && cx (it) > open->box.x1 && cx (it) < close->box.x0)
        union_box (&win, &it->box, &first);
    }
  if (first)
    return 0;
  /* the columns strictly between the pair, the rows of what is inside */
  x0 = MAX (0, (int) ceil ((open->box.x1 - r->img_area.x0) * s) + 1);
  x1 = MIN (img->width, (int) floor ((close->box.x0 - r->img_area.x0) * s) - 1);
  y0 = MAX (0, (int) floor ((win.y0 - r->img_area.y0) * s));
  y1 = MIN (img->height, (int) ceil ((win.y1 - r->img_area.y0) * s));
  for (int y = y0; y < y1; y++)
    {
      gboolean foreign = FALSE;
      /* a rule wider than the pair is the enclosing fraction's bar
       * (\frac{\left(\dfrac{a}{b}\right)^{2}}{c}: b's box reaches it) */
      for (guint i = 0; i < r->items->len && !foreign; i++)
        {
          const Item *it = r->items->pdata[i];
          foreign = it->kind == ITEM_RULE && (it->box.x0 < open->box.x1 || it->box.x1 > close->box.x0) &&
                    y >= (it->box.y0 - r->img_area.y0) * s - 1 && y <= (it->box.y1 - r->img_area.y0) * s + 1;
        }
      for (int x = x0; x < x1 && !foreign; x++)
        if (img->pixels[(gsize) y * img->stride + x] < 128)
          {
            top = top < 0 ? y : top;
            bottom = y;
            break;
          }
    }
  if (top < 0)
    return 0;
  reach = MAX (axis - (r->img_area.y0 + top / s), r->img_area.y0 + (bottom + 1) / s - axis);
  need = *least = MAX (0.901 * 2 * reach, 2 * reach - 5.0);
  if (g_getenv ("FM_MATHTEXT_DEBUG") != NULL)
    g_printerr ("sized pair %.1f pt tall, \\left would draw %.1f pt or more\n", height, need);
  return need > 0 ? height / need : 0;
}

/* How tall the content of a pair of parentheses or brackets may reach
 * before \left leaves the normal glyph: the ink of a normal parenthesis or
 * bracket inside (the fonts' heights are their ink's or a little more:
 * 3 %), else 0: not known (the normal glyphs differ: 1.0 em in CM, 0.85 in
 * Times; STIX Two's \left| around x_{n} takes a sized bar). */
static double
normal_reach (Reader *r, GPtrArray *items, const Item *open, const Item *close, double em)
{
  if (!(open->c == '(' || open->c == '['))
    return 0;
  for (guint i = 0; i < items->len && r->img != NULL; i++)
    {
      const Item *it = items->pdata[i];
      FmRect fit;
      /* the pair's own bracket: a "[" inside \bigl( ... \bigr) is not as
       * tall as a "(" */
      if (it->kind == ITEM_GLYPH && !it->ext && (it->c == open->c || it->c == (open->c == '(' ? ')' : ']')) &&
          cx (it) > open->box.x1 && cx (it) < close->box.x0 && it->size >= 0.95 * em &&
          ink_column_extent (r->img, &r->img_area, r->img_scale, &it->box, &fit))
        {
          if (g_getenv ("FM_MATHTEXT_DEBUG") != NULL)
            g_printerr ("normal %s: %.1f pt of ink\n", it->tex, fit.y1 - fit.y0);
          return 0.97 * (fit.y1 - fit.y0);
        }
    }
  return 0;
}

/* Around a fraction, scripts or a big operator: the explicit size of a pair
 * shorter than \left's (height_for_left), else NULL. The fonts' heights
 * are the ink's or a little more, so a pair within 5 % of the least \left
 * draws may be either (inline \left(\frac{n!}{k!}\right) is 1.02 of it,
 * \bigl[\frac{\partial\varphi}{\partial x}\bigr] 1.00, where \left[ is 1.8 em):
 * \left stays, not sure. Taller, \left or an explicit size draws it alike
 * where it is \left's next step up; \left stays. */
static const char *
explicit_size_around (Reader *r, GPtrArray *items, const Item *open, const Item *close)
{
  double least = 0, ratio = height_for_left (r, items, open, close, &least);

  if (ratio > 0 && ratio < 0.95)
    return size_of_pair (r, open, close);
  if (ratio > 0 && ratio < 1.05)
    uncertain (r, "\\left or \\bigl: the pair is as tall as \\left's least");
  /* CMEX's ladder climbs 0.6 em a step: two steps above the variant \left
   * draws, the pair is no \left's (text-style \Biggl(\frac{a}{b}\Biggr) had
   * read CERTAIN as \left() */
  if (ratio > 0 && open->font != NULL && name_has (open->font, "^(cmex|lmex|lmmathextension)"))
    {
      double ext = MAX (open->size, 1.0), drawn = least;
      for (double step = 1.2; step < 3.05; step += 0.6)
        if (step * ext >= least)
          {
            drawn = step * ext;
            break;
          }
      if (MIN (open->box.y1 - open->box.y0, close->box.y1 - close->box.y0) > drawn + 1.1 * ext)
        {
          /* the explicit size, not sure all the same: the ink read may
           * have missed some of the content */
          uncertain (r, "a pair two sizes taller than \\left draws around its ink");
          return size_of_pair (r, open, close);
        }
    }
  /* Around a sized delimiter of its own height and nothing taller but
   * glyphs \left draws that height too: \ell\bigl(\gamma\bigl([0,t]\bigr)\bigr)
   * read CERTAIN as \left( (used seed 1041); the corpus writes the outer one
   * \bigl 9 times, \left 17. (Around fractions \left stays sure.) */
  gboolean same = FALSE;
  for (guint i = 0; i < items->len; i++)
    {
      const Item *it = items->pdata[i];
      if (it == open || it == close || it->used || cx (it) <= open->box.x1 || cx (it) >= close->box.x0)
        continue;
      if (it->kind == ITEM_RULE || it->kind == ITEM_BOX || it->bigop)
        return NULL;
      same = same || (it->kind == ITEM_GLYPH && it->ext &&
                      it->box.y1 - it->box.y0 >= 0.95 * (open->box.y1 - open->box.y0));
    }
  if (same)
    uncertain (r, "\\left or \\bigl around a sized delimiter of its height");
  return NULL;
}

/* The size command of a sized delimiter pair main_items[k] ... its partner
 * whose content is flat, or NULL. \left chooses a size from what it
 * encloses, and around glyphs of the main size with no scripts, fractions,
 * radicals or big operators it stays at the normal glyph (TeX: 901/1000 of
 * twice the content's extent from the axis, at most 5 pt short of it), so a
 * sized delimiter there was set by \bigl, \Bigl ... (the corpus writes
 * "\frac{d}{dx}\bigl[\cos(x)\bigr]", "\omega_{j}\bigl(\gamma(t)\bigr)": the
 * reader's \left[ made the model's plain [ an unspellable disagreement on
 * development seed 1011). Its step from the ink's height in ems: the size
 * variants are about 1.2, 1.8, 2.4 and 3 em in CMEX and the OpenType math
 * fonts (Latin Modern Math's \bigl( measured 1.08 em of ink). *lined: set
 * where \left and \bigl draw the same (around an overline or scripts). */
static const char *
explicit_size (Reader *r, GPtrArray *items, GPtrArray *main_items, guint k, double main_size, gboolean *lined)
{
  Item *open = main_items->pdata[k], *close = NULL;
  int depth = 0;
  gboolean line_box = FALSE, scripted = FALSE;

  if (open_delim (open->c) == NULL)
    return NULL;
  for (guint j = k + 1; j < main_items->len && close == NULL; j++)
    {
      Item *it = main_items->pdata[j];
      /* a bar pairs with the next sized bar of its kind (its size is only
       * checked, see line_explicit_sizes); bars inside other pairs pair among
       * themselves */
      if (it->kind != ITEM_GLYPH || !it->ext)
        continue;
      if (is_bar_delim (open->c))
        close = is_bar_delim (it->c) && bar_kind (it->c) == bar_kind (open->c) ? it : NULL;
      else if (is_bar_delim (it->c))
        continue;
      else if (open_delim (it->c) != NULL && close_delim (it->c) == NULL)
        depth++;
      else if (close_delim (it->c) != NULL && depth-- == 0)
        close = it;
    }
  if (close == NULL)
    return NULL;
  for (guint i = 0; i < items->len; i++)
    {
      Item *it = items->pdata[i];
      /* used items are inside a word or a box that is checked itself */
      if (it == open || it == close || it->used || cx (it) <= open->box.x1 || cx (it) >= close->box.x0)
        continue;
      /* an overline or underline: \left takes the \big size for it too */
      if (it->kind == ITEM_BOX && it->tex != NULL &&
          (g_str_has_prefix (it->tex, "\\overline{") || g_str_has_prefix (it->tex, "\\underline{")))
        {
          line_box = TRUE;
          continue;
        }
      if (it->kind == ITEM_RULE || it->kind == ITEM_BOX || it->bigop || (it->kind == ITEM_GLYPH && it->ext))
        return explicit_size_around (r, items, open, close);
      scripted = scripted || it->size < 0.85 * main_size;
    }
  /* Around scripts \left takes a sized glyph too (x^{n} reaches 0.9 em
   * above the baseline: TeX's 901/1000 of twice that from the axis is past
   * the normal glyph), so \left and \bigl draw the same: a CERTAIN \left
   * was wrong for D=\bigl\{(z,\zeta)\in\mathbb{C}^n...\bigr\} on every
   * pdfLaTeX set-up of development seed 1113. */
  if (scripted)
    {
      /* ... unless the content stays inside a normal parenthesis's reach
       * (normal_reach): f\bigl(x_{0}+r\cos(t),y_{0}+r\sin(t)\bigr) needs
       * 0.9 of the "(" inside, so \left( would have drawn that (read with
       * a plain "(" on five set-ups of development seed 1133) */
      double least = 0;
      if (height_for_left (r, items, open, close, &least) > 0 && least < normal_reach (r, items, open, close, main_size))
        return size_of_pair (r, open, close);
      *lined = TRUE;
      return NULL;
    }
  /* Around an overline, \left( and \bigl( draw the same \big size (STIX
   * Two: r\bigl(\varphi(\xi),\overline{\varphi(\xi)}\bigr), read CERTAIN
   * as \left, development seed 1105): \left stays, the reading is not sure. */
  if (line_box)
    {
      *lined = TRUE;
      return NULL;
    }
  return size_of_pair (r, open, close);
}

/* Scripts apart from their base. TeX's script shifts keep a script's box
 * (Poppler's: the font's ascent to descent) overlapping its base's, or a
 * larger script's that it is a script of (x^{a^{b}}): superscripts are raised
 * at most to the base's height less sup_drop, subscripts lowered at most to
 * its depth plus sub_drop. A small glyph that overlaps neither by a quarter of
 * its height is a neighbour line's (a limit of an integral in the line above,
 * a script of the line below, taken in by the detector's box: "7\times
 * 10_{22}^{a}", "Pu(z_{a})" on fresh seed 1001): it is not this base's
 * script. It is left out, and the reading is not certain. Labels of
 * extensible arrows sit higher and are not checked here. */
static void
drop_apart_scripts (Reader *r, const Item *m, GPtrArray *scripts)
{
  g_autoptr (GPtrArray) near = g_ptr_array_new ();
  gboolean grew = TRUE;

  while (grew)
    {
      grew = FALSE;
      for (guint i = 0; i < scripts->len; i++)
        {
          Item *it = scripts->pdata[i];
          double h = it->box.y1 - it->box.y0;
          gboolean attached = FALSE;
          if (g_ptr_array_find (near, it, NULL))
            continue;
          /* Some fonts' boxes are far from ascent to descent (newtx's and
           * libertine's math italic: 0.5 em tall, a superscript h overlaps
           * its A by a quarter; fresh seed 1003), so a glyph is also kept
           * unless its centre is more than 0.7 of the base's size from the
           * base's: a script's shift is at most about half an em, a
           * neighbour line's glyph sits a baseline skip away. */
          if (h <= 0 || MIN (it->box.y1, m->box.y1) - MAX (it->box.y0, m->box.y0) >= 0.25 * h ||
              (m->kind != ITEM_BOX && fabs (cy (it) - cy (m)) <= 0.7 * MAX (m->size, 1.0)))
            attached = TRUE;
          for (guint j = 0; j < near->len && !attached; j++)
            {
              const Item *n = near->pdata[j];
              if (it->size < 0.95 * n->size &&
                  MIN (it->box.y1, n->box.y1) - MAX (it->box.y0, n->box.y0) >= 0.25 * h)
                attached = TRUE;
            }
          if (attached)
            {
              g_ptr_array_add (near, it);
              grew = TRUE;
            }
        }
    }
  for (guint i = scripts->len; i-- > 0;)
    {
      Item *it = scripts->pdata[i];
      if (!g_ptr_array_find (near, it, NULL))
        {
          uncertain (r, "a small glyph apart from the line (a neighbour's?)");
          it->used = TRUE;
          g_ptr_array_remove_index (scripts, i);
        }
    }
}

/* State of one line's parse, shared by its steps. */
typedef struct {
  Reader *r;
  GPtrArray *items;       /* the line's items (not owned)                    */
  GPtrArray *main_items;  /* its full-size items, by x                       */
  double main_size;
  int open_depth;         /* \left delimiters not closed yet                 */
  const char **sizes;     /* explicit size of a flat sized pair, by index    */
  GString *out;
  gunichar open_bars[8];  /* per depth (the first 8): the bar kind it opened, or 0 */
  gsize open_out[8];      /* per depth: out's length before its opening delimiter */
  const Item *open_items[8]; /* per depth: its opening delimiter            */
  int cells[8];           /* per depth: column gaps of a one-row matrix in it, -1 once a gap is not one */
  gboolean quad_wide[8];  /* per depth: a column gap as wide as a \quad      */
  gboolean cand[8];       /* per depth: a \big pair, which a matrix can be   */
  gboolean cell_doubt[8]; /* per depth: a gap that may be a column gap        */
  gboolean word_gap[8];   /* per depth: a gap of a word space (a\ b)          */
  const Item *text_lead;  /* a text group written with a leading space (\text{ is}) */
  guint8 *inner;          /* per main item: INNER_OPEN / INNER_CLOSE of a plain pair spaced as \left..\right */
  guint k;                /* the main item being appended                     */
} LineParse;

enum { INNER_NONE, INNER_OPEN, INNER_CLOSE };

/* The line's full-size items, by x: glyphs of at least 0.85 of the largest
 * size, and extension-font glyphs. */
static void
line_main_items (LineParse *lp)
{
  for (guint i = 0; i < lp->items->len; i++)
    {
      Item *it = lp->items->pdata[i];
      if (!it->used && it->kind != ITEM_RULE && !(it->kind == ITEM_GLYPH && it->ext))
        lp->main_size = MAX (lp->main_size, it->size);
    }
  for (guint i = 0; i < lp->items->len; i++)
    {
      Item *it = lp->items->pdata[i];
      if (!it->used && it->kind != ITEM_RULE && (it->size >= 0.85 * lp->main_size || it->ext))
        g_ptr_array_add (lp->main_items, it);
    }
  g_ptr_array_sort (lp->main_items, by_x);
}

/* Sizes of the flat sized pairs, by index of either delimiter. */
static void
line_explicit_sizes (LineParse *lp)
{
  GPtrArray *main_items = lp->main_items;
  const char **sizes = lp->sizes;

  for (guint k = 0; k < main_items->len; k++)
    {
      Item *m = main_items->pdata[k];
      gboolean lined = FALSE;

      /* A sized bar pair around flat content was set by \Bigl| ... \Bigr|
       * (\left| draws the normal bar there), but which bar opens cannot be
       * told from the bars alone (|a|b|): the \left| written stays, not
       * sure (\Bigl|x+y\Bigr| read CERTAIN \left|x+y\right|, review). */
      if (m->kind == ITEM_GLYPH && m->ext && sizes[k] == NULL && is_bar_delim (m->c))
        {
          /* around scripts \left| and \bigl| draw the same bar: the
           * image is right either way, so that stays sure */
          gboolean same_image = FALSE;
          if (explicit_size (lp->r, lp->items, main_items, k, lp->main_size, &same_image) != NULL)
            uncertain (lp->r, "sized bars around flat content");
        }
      else if (m->kind == ITEM_GLYPH && m->ext && sizes[k] == NULL &&
          (sizes[k] = explicit_size (lp->r, lp->items, main_items, k, lp->main_size, &lined)) != NULL)
        for (guint j = k + 1, depth = 0; j < main_items->len; j++)
          {
            Item *it = main_items->pdata[j];
            if (it->kind != ITEM_GLYPH || !it->ext || is_bar_delim (it->c))
              continue;
            if (open_delim (it->c) != NULL && close_delim (it->c) == NULL)
              depth++;
            else if (close_delim (it->c) != NULL && depth-- == 0)
              {
                sizes[j] = sizes[k];
                break;
              }
          }
      if (lined)
        uncertain (lp->r, "\\left or \\bigl around an overline or scripts");
    }
}

/* A one-row matrix (\begin{bmatrix}y&-x\end{bmatrix}, 26 in the corpus)
 * is a flat sized pair (\left[ sized by the row's strut) whose columns
 * stand 2\arraycolsep (10 pt, whatever the font size) apart, written as a
 * \quad by line_append_space: read "\bigl[y\quad-x\bigr]", certain, before.
 * Rewrites the pair's output, now closing with delimiter c, as the
 * matrix; FALSE (nothing done) for a delimiter without a matrix. */
static gboolean
line_matrix_row (LineParse *lp, gunichar c)
{
  const char *env = c == ']' ? "bmatrix" : c == ')' ? "pmatrix" : c == '}' ? "Bmatrix" : NULL;
  char open = c == ']' ? '[' : c == ')' ? '(' : '{';
  gsize at = lp->open_out[lp->open_depth];
  g_autoptr (GString) row = NULL;
  const char *p;
  int depth = 0, quads = 0;

  if (env == NULL || at > lp->out->len)
    return FALSE;
  /* past the opening delimiter's command and character */
  p = lp->out->str + at;
  if (*p == '\\')
    for (p++; g_ascii_isalpha (*p); p++)
      ;
  if (*p == '\\')
    p++;
  /* the environment is the pair's: \bigl(..\bigr] is none */
  if (*p != open)
    return FALSE;
  p++;
  row = g_string_new (NULL);
  g_string_append_printf (row, "\\begin{%s}", env);
  /* only the row's own \quads are its column gaps, one a gap (a \quad
   * in a group is in a cell) */
  while (*p)
    {
      if (*p == '\\' && (p[1] == '{' || p[1] == '}'))
        {
          g_string_append_len (row, p, 2);
          p += 2;
        }
      else if (depth == 0 && g_str_has_prefix (p, "\\quad") && !g_ascii_isalpha (p[5]))
        {
          g_string_append_c (row, '&');
          quads++;
          p += 5;
          if (*p == ' ')
            p++;
        }
      else
        {
          depth += *p == '{' ? 1 : *p == '}' ? -1 : 0;
          g_string_append_c (row, *p++);
        }
    }
  if (quads != lp->cells[lp->open_depth])
    return FALSE;
  /* a word space in a cell (a\ b) is dropped: "ab" */
  if (lp->word_gap[lp->open_depth])
    uncertain (lp->r, "a space inside a one-row matrix's cell");
  g_string_append_printf (row, "\\end{%s}", env);
  /* At 10 pt a \quad is as wide as the column gap: either reading (the
   * corpus's one-row matrices outnumber its \quads in \bigl pairs) */
  if (lp->quad_wide[lp->open_depth])
    uncertain (lp->r, "a one-row matrix or a \\quad inside sized delimiters");
  g_string_truncate (lp->out, at);
  g_string_append (lp->out, row->str);
  return TRUE;
}

/* Whether the bar written at `at` (\left| or \left\|) has a script: an
 * evaluation bar's (\Big|_{0}). */
static gboolean
bar_has_script (const char *bar)
{
  const char *p = bar + strlen ("\\left");

  if (*p == '\\' && g_ascii_isalpha (p[1]))
    for (p++; g_ascii_isalpha (*p); p++)
      ;
  else if (*p == '\\' && p[1] != '\0')
    p += 2;
  else if (*p != '\0')
    p++;
  while (*p == ' ')
    p++;
  return *p == '_' || *p == '^';
}

/* A closing delimiter that is no bar met an open bar pair inside its own:
 * that bar was a \middle| (\left\{x\middle|\frac{x}{2}>0\right\} had read
 * "\left\{x\left|\frac{x}{2}>0\right\}", no LaTeX), whose bar TeX sizes
 * as the pair's. Its \left| becomes \middle| and its depth goes; not sure
 * (a bar with no partner may also be a lost \right|). A bar with scripts,
 * or one shorter than the pair's opening (TeX draws \middle as tall), is an
 * evaluation bar inside the pair
 * (\left(\frac{\partial f}{\partial x}\Big|_{0}\right)): written with the
 * size its ink has, as an unpaired one is (line_unpaired_sizes). */
static void
line_middle_bars (LineParse *lp, const Item *m)
{
  while (!is_bar_delim (m->c) && lp->open_depth >= 2 && lp->open_depth <= (int) G_N_ELEMENTS (lp->open_bars) &&
         lp->open_bars[lp->open_depth - 1] != 0 && lp->open_bars[lp->open_depth - 2] == 0)
    {
      gsize at = lp->open_out[lp->open_depth - 1];
      const char *outer = lp->out->str + lp->open_out[lp->open_depth - 2];
      const Item *bar = lp->open_items[lp->open_depth - 1];
      const Item *opening = lp->open_items[lp->open_depth - 2];
      g_autofree char *size = NULL;

      if (!g_str_has_prefix (lp->out->str + at, "\\left"))
        break;
      if (bar != NULL && opening != NULL &&
          (bar_has_script (lp->out->str + at) ||
           bar->box.y1 - bar->box.y0 < 0.8 * (opening->box.y1 - opening->box.y0)))
        size = g_strdup (glyph_size_step (lp->r, bar, bar->box.y1 - bar->box.y0));
      /* inside \bigl\{ ... \bigr\} the bar is \big| (\middle needs \left) */
      else if (g_str_has_prefix (outer, "\\left"))
        size = g_strdup ("\\middle");
      else
        {
          gsize n = 1;
          while (g_ascii_isalpha (outer[n]))
            n++;
          if (outer[0] != '\\' || n < 3 || outer[n - 1] != 'l')
            break;
          size = g_strndup (outer, n - 1);
        }
      g_string_erase (lp->out, at, strlen ("\\left"));
      g_string_insert (lp->out, at, size);
      lp->open_depth--;
      uncertain (lp->r, "a bar inside a sized pair (\\middle|)");
    }
}

/* A sized delimiter: \left( ... \right), or \bigl( ... \bigr) for a flat
 * pair. Returns the delimiter's LaTeX (*sized owns it when built). */
static const char *
line_sized_delimiter (LineParse *lp, Item *m, guint k, char **sized)
{
  const char *tex = m->tex;
  const char *o = open_delim (m->c), *c = close_delim (m->c);

  /* A bar closes the bar that opened the innermost pair, else opens one
   * (\left[(n-1)\left|\frac{1}{r}\right|\right] had closed the bracket with
   * the first bar, development seed 1107, once the bars were found in the
   * ink). */
  if (is_bar_delim (m->c))
    {
      if (lp->open_depth > 0 && lp->open_depth <= (int) G_N_ELEMENTS (lp->open_bars) &&
          lp->open_bars[lp->open_depth - 1] == bar_kind (m->c))
        o = NULL;
      else
        c = NULL;
    }
  if (o != NULL)
    {
      tex = o;
      if (lp->open_depth < (int) G_N_ELEMENTS (lp->open_bars))
        {
          lp->open_bars[lp->open_depth] = is_bar_delim (m->c) ? bar_kind (m->c) : 0;
          lp->open_out[lp->open_depth] = lp->out->len;
          lp->open_items[lp->open_depth] = m;
          /* a matrix's delimiters are sized by its row's strut, one step
           * up (\big): only such a flat pair's gaps can be its columns */
          lp->cells[lp->open_depth] = g_strcmp0 (lp->sizes[k], "\\big") == 0 ? 0 : -1;
          lp->quad_wide[lp->open_depth] = FALSE;
          lp->cand[lp->open_depth] = lp->cells[lp->open_depth] == 0;
          lp->cell_doubt[lp->open_depth] = FALSE;
          lp->word_gap[lp->open_depth] = FALSE;
        }
      lp->open_depth++;
      /* "\\left(" -> "\\bigl(" */
      if (lp->sizes[k] != NULL)
        tex = *sized = g_strdup_printf ("%sl%s", lp->sizes[k], o + strlen ("\\left"));
    }
  else if (c != NULL && lp->open_depth > 0)
    {
      line_middle_bars (lp, m);
      tex = c;
      lp->open_depth--;
      if (lp->sizes[k] != NULL)
        tex = *sized = g_strdup_printf ("%sr%s", lp->sizes[k], c + strlen ("\\right"));
      if (lp->open_depth < (int) G_N_ELEMENTS (lp->cells) && lp->cells[lp->open_depth] > 0 &&
          line_matrix_row (lp, m->c))
        tex = "";
      /* a pair that is no clean matrix but had a gap a column gap can
       * be: [V&W] (the cell's italic correction widens its gap), [a\quad
       * b&c] at 12 pt, [a&&b] */
      else if (lp->open_depth < (int) G_N_ELEMENTS (lp->cells) && lp->cand[lp->open_depth] &&
               lp->cell_doubt[lp->open_depth])
        uncertain (lp->r, "a one-row matrix or spaces inside sized delimiters");
    }
  else if (c != NULL)
    uncertain (lp->r, "unbalanced sized delimiter");
  return tex;
}

/* The smaller items between the base m (k-th full-size item) and the next
 * full-size one: above its middle are superscripts, below subscripts. */
static void
line_collect_scripts (LineParse *lp, Item *m, Item *next, guint k, GPtrArray *sub, GPtrArray *sup)
{
  for (guint i = 0; i < lp->items->len; i++)
    {
      Item *it = lp->items->pdata[i];
      double d;
      if (it->used || it->kind == ITEM_RULE || g_ptr_array_find (lp->main_items, it, NULL))
        continue;
      /* an extensible arrow's label starts over its tail */
      if (cx (it) < m->box.x0 + (m->shaft ? 0.0 : 0.3 * (m->box.x1 - m->box.x0)) ||
          (next != NULL && cx (it) > next->box.x0))
        continue;
      if (k == 0 && cx (it) < m->box.x0)
        continue;
      d = (cy (it) - m->mid) / MAX (m->size, 1.0);
      if (d < -0.1)
        g_ptr_array_add (sup, it);
      else if (d > 0.1)
        g_ptr_array_add (sub, it);
      else
        {
          uncertain (lp->r, "small glyph on the baseline");
          g_ptr_array_add (d < 0 ? sup : sub, it);
        }
    }
  /* A prime is the base's superscript (x' is x^{\prime}) unless it follows
   * a glyph of the subscript (x_{n'}): Poppler boxes a prime set before a
   * subscript from the script's ascent to descent, at the subscript's x
   * (pdfLaTeX STIX Two, LuaTeX Latin Modern: \mathcal{L}'_0 read
   * \mathcal{L}_{'0}, development seed 1112). */
  for (guint i = 0; i < sub->len; i++)
    {
      Item *it = sub->pdata[i];
      gboolean first = it->kind == ITEM_GLYPH && it->tex != NULL && it->tex[0] == '\'';
      for (guint j = 0; j < sub->len && first; j++)
        {
          const Item *o = sub->pdata[j];
          first = o == it || (o->tex != NULL && o->tex[0] == '\'') || it->box.x0 <= o->box.x0 + 0.1 * m->size;
        }
      if (first)
        {
          g_ptr_array_add (sup, g_ptr_array_steal_index (sub, i));
          i--;
        }
    }
}

/* All scripts on one side by the base's middle, yet at two heights with
 * overlapping columns: x_0^2 in a font whose boxes sit differently (STIX).
 * Split them at the widest height gap. */
static void
split_one_sided_scripts (const Item *m, GPtrArray *sub, GPtrArray *sup)
{
  GPtrArray *all;
  double gap = 0, cut = 0;

  if (!(sub->len + sup->len >= 2 && (sub->len == 0 || sup->len == 0)))
    return;
  all = sub->len > 0 ? sub : sup;
  for (guint a = 0; a < all->len; a++)
    for (guint b = 0; b < all->len; b++)
      {
        Item *p = all->pdata[a], *q = all->pdata[b];
        if (cy (q) > cy (p) && cy (q) - cy (p) > gap &&
            MIN (p->box.x1, q->box.x1) > MAX (p->box.x0, q->box.x0))
          {
            gap = cy (q) - cy (p);
            cut = 0.5 * (cy (p) + cy (q));
          }
      }
  if (gap > 0.35 * m->size)
    {
      g_autoptr (GPtrArray) moved = g_ptr_array_new ();
      for (guint a = 0; a < all->len; a++)
        g_ptr_array_add (moved, all->pdata[a]);
      g_ptr_array_set_size (sub, 0);
      g_ptr_array_set_size (sup, 0);
      for (guint a = 0; a < moved->len; a++)
        g_ptr_array_add (cy (moved->pdata[a]) < cut ? sup : sub, moved->pdata[a]);
    }
}

/* An arrow with a label over it, inside its length: \xrightarrow, with
 * one under it too: \xrightarrow[..]{..} (read CERTAIN as
 * "\longrightarrow_{u}^{\sim}" before). \xrightarrow draws a \relbar
 * under its arrow head however short the label, so a label over one arrow
 * glyph is \overset{..}{\to}'s (it had been written \xrightarrow, which
 * draws a longer arrow). Returns TRUE when it wrote one. */
static gboolean
line_append_arrow_label (LineParse *lp, const Item *m, const char *tex, GPtrArray *sub, GPtrArray *sup)
{
  gboolean right = g_strcmp0 (tex, "\\to") == 0 || g_strcmp0 (tex, "\\longrightarrow") == 0;
  gboolean left = g_strcmp0 (tex, "\\leftarrow") == 0 || g_strcmp0 (tex, "\\longleftarrow") == 0;
  gboolean bare = g_strcmp0 (tex, "\\to") == 0 || g_strcmp0 (tex, "\\leftarrow") == 0;
  gboolean inside = sup->len > 0;
  FmRect b;
  double sz, wide, em;
  g_autofree char *label = NULL;
  g_autofree char *below = NULL;
  g_autofree char *t = NULL;

  for (guint i = 0; i < sup->len && inside; i++)
    inside = cx (sup->pdata[i]) > m->box.x0 && cx (sup->pdata[i]) < m->box.x1;
  for (guint i = 0; i < sub->len && inside; i++)
    inside = cx (sub->pdata[i]) > m->box.x0 && cx (sub->pdata[i]) < m->box.x1;
  /* a label over a long arrow \xrightarrow does not draw (mathtools'
   * \xleftrightarrow, \xmapsto, \xhookrightarrow, or \overset over
   * \longmapsto ...): \overset's reading, not sure (read CERTAIN as
   * \overset{f}{\longmapsto} before) */
  if (!(right || left) && inside && tex != NULL &&
      (g_str_has_prefix (tex, "\\long") || g_str_has_prefix (tex, "\\Long") || g_str_has_prefix (tex, "\\hook")))
    {
      uncertain (lp->r, "a label over a long arrow (\\overset, or mathtools' \\xmapsto, \\xleftrightarrow?)");
      return FALSE;
    }
  if (!((right || left) && inside))
    {
      /* a shaft as long as nothing over it: amscd's arrows, \xrightarrow{} */
      if (m->shaft)
        uncertain (lp->r, "an arrow built from pieces without a label over it");
      return FALSE;
    }
  label = parse_subset (lp->r, NULL, sup, &b, &sz);
  wide = b.x1 - b.x0;
  if (sub->len > 0)
    {
      below = parse_subset (lp->r, NULL, sub, &b, &sz);
      wide = MAX (wide, b.x1 - b.x0);
    }
  /* \xrightarrow is its widest label's width and 14 mu of the label's
   * size (\ext@arrow), at least its own arrow glyph (an em in CM, 1.22 in
   * STIX Two Math); amscd's @>f>>
   * arrow is at least 2.5 pc whatever its label (A@>f>>B read CERTAIN as
   * A\xrightarrow{f}B), \overset{f}{\longrightarrow} is 1.6 em, and spaces
   * at the label's edges (\xrightarrow{\ f\ }) leave no ink: any other
   * length is not \xrightarrow's, or not with this label */
  em = MAX (lp->r->em, 1.0);
  if (!bare && (m->box.x1 - m->box.x0) > MAX (wide + 14.0 / 18.0 * sz, m->head_w > 0 ? m->head_w : em) + 0.25 * em)
    uncertain (lp->r, "an arrow longer than its label (amscd's, \\overset, or spaces in the label?)");
  /* shorter only where the label sets the length (the arrow's own is the
   * font's: STIX Two Math's is 0.7 em) */
  if (!bare && (m->box.x1 - m->box.x0) < wide + 14.0 / 18.0 * sz - 0.25 * em)
    uncertain (lp->r, "an arrow not as long as \\xrightarrow draws for its label");
  /* Not a row of shaft pieces: \xrightarrow's arrowfill puts a second piece
   * in once its gap reaches a relbar less 4 mu (0.556 em in CM), so with one
   * piece it is shorter than its head and half an em; one long-arrow glyph
   * that no piece joined (head_w 0: U+27F6 in the Unicode engines) it never
   * draws. (A short label's one piece can lie wholly under the head: CM's
   * \\xrightarrow{i} is one em, as wide as its head.)
   * \overset{\alpha\beta}{\longrightarrow} had read CERTAIN as
   * \xrightarrow{\alpha\beta} (review of readerfix4). */
  if (!bare && !m->shaft &&
      (m->head_w <= 0 || (m->box.x1 - m->box.x0) >= m->head_w + 0.5 * em))
    uncertain (lp->r, "a label over a long arrow that is no row of shaft pieces (\\overset{..}{\\longrightarrow}?)");
  if (bare && below != NULL)
    {
      /* \overset{a}{\underset{b}{\to}} or \stackrel: not in the corpus */
      uncertain (lp->r, "labels over and under one arrow glyph");
      t = g_strdup_printf ("\\overset{%s}{\\underset{%s}{%s}}", label, below, tex);
    }
  else if (bare)
    t = g_strdup_printf ("\\overset{%s}{%s}", label, tex);
  else if (below != NULL)
    t = g_strdup_printf ("%s[%s]{%s}", right ? "\\xrightarrow" : "\\xleftarrow", below, label);
  else
    t = g_strdup_printf ("%s{%s}", right ? "\\xrightarrow" : "\\xleftarrow", label);
  tex_append (lp->out, t);
  return TRUE;
}

/* Small items above a symbol and centred over it are stacked on it
 * (\overset{\text{def}}{=}, \stackrel): a superscript starts at the
 * base's right edge (it had read =^{\text{def}}, development seed 1101). */
static gboolean
line_append_overset (LineParse *lp, const Item *m, const char *tex, GPtrArray *sub, GPtrArray *sup)
{
  FmRect b = { 0 };
  gboolean first = TRUE;
  double s;
  g_autofree char *t = NULL;

  if (sub->len > 0 || sup->len == 0 || m->kind != ITEM_GLYPH || m->ext || m->bigop || is_integral_char (m->c) ||
      (m->c < 0x80 && g_ascii_isalnum ((char) m->c)) || (m->c >= 0x1D400 && m->c <= 0x1D7FF))
    return FALSE;
  for (guint i = 0; i < sup->len; i++)
    union_box (&b, &((Item *) sup->pdata[i])->box, &first);
  if (0.5 * (b.x0 + b.x1) > m->box.x1 || 0.5 * (b.x0 + b.x1) < m->box.x0 || b.x0 > m->box.x1 - 0.15 * m->size)
    return FALSE;
  t = parse_subset (lp->r, NULL, sup, &b, &s);
  g_string_append_printf (lp->out, "\\overset{%s}{", t);
  tex_append (lp->out, tex);
  g_string_append (lp->out, "}");
  return TRUE;
}

/* Whether a subscript starts under a prime (TeX stacks the two at one x,
 * after the base's italic correction at most) rather than right of it. */
static gboolean
stacked_under (GPtrArray *sub, const Item *prime)
{
  double x0 = G_MAXDOUBLE;

  for (guint i = 0; i < sub->len; i++)
    x0 = MIN (x0, ((Item *) sub->pdata[i])->box.x0);
  return x0 < prime->box.x1 - 0.3 * (prime->box.x1 - prime->box.x0);
}

/* The k-th full-size item with its scripts. */
/* A display-size big operator with its scripts beside it, in a display
 * and outside any fraction: \sum\nolimits_{j\in E_{k}} (the Stacks project
 * writes it in 1663 of its 17874 displays, ../shared), which without
 * \nolimits draws its limits above and below (read \sum_{j\in E_{k}},
 * certain, on five set-ups of development seed 1124). The display size:
 * ink 1.2 of its font size or taller (CMEX's text \sum is 1.0, its display
 * one 1.4; an array cell's \sum is text-size). */
static gboolean
line_nolimits (LineParse *lp, const Item *m, GPtrArray *sub, GPtrArray *sup)
{
  return m->kind == ITEM_GLYPH && m->bigop && !lp->r->inline_region && lp->r->frac_depth == 0 &&
         sub->len + sup->len > 0 && m->box.y1 - m->box.y0 >= 1.2 * MAX (m->size, 1.0);
}

static void
line_append_item (LineParse *lp, guint k)
{
  Reader *r = lp->r;
  Item *m = lp->main_items->pdata[k];
  Item *next = k + 1 < lp->main_items->len ? lp->main_items->pdata[k + 1] : NULL;
  g_autoptr (GPtrArray) sub = g_ptr_array_new ();
  g_autoptr (GPtrArray) sup = g_ptr_array_new ();
  const char *tex = m->tex;
  g_autofree char *sized = NULL;
  g_autofree char *spaced = NULL;

  if (m->used)
    return;
  m->used = TRUE;
  if (m->kind == ITEM_GLYPH && m->ext)
    tex = line_sized_delimiter (lp, m, k, &sized);
  else if (lp->inner[k] != INNER_NONE)
    tex = sized = g_strconcat (lp->inner[k] == INNER_OPEN ? "\\left" : "\\right", tex, NULL);
  if (m == lp->text_lead && tex != NULL && g_str_has_prefix (tex, "\\text{"))
    tex = spaced = g_strconcat ("\\text{ ", tex + strlen ("\\text{"), NULL);
  lp->text_lead = NULL;
  if (tex == NULL)
    {
      uncertain (r, "unknown glyph");
      tex = "?";
    }
  {
    const char *acc;
    if (m->kind == ITEM_GLYPH && is_accent_char (m->c, &acc))
      uncertain (r, "an accent without a base");
  }
  line_collect_scripts (lp, m, next, k, sub, sup);
  /* Not beside extension-font glyphs and big operators: their scripts
   * sit by TeX's rules for them, against boxes refitted to ink (a
   * display integral's upper limit is above its fitted box). */
  if (!(m->kind == ITEM_GLYPH && (m->ext || m->bigop || is_integral_char (m->c))) &&
      g_strcmp0 (tex, "\\to") != 0 && g_strcmp0 (tex, "\\longrightarrow") != 0 &&
      g_strcmp0 (tex, "\\leftarrow") != 0 && g_strcmp0 (tex, "\\longleftarrow") != 0)
    {
      drop_apart_scripts (r, m, sub);
      drop_apart_scripts (r, m, sup);
    }
  split_one_sided_scripts (m, sub, sup);
  if (line_append_arrow_label (lp, m, tex, sub, sup) || line_append_overset (lp, m, tex, sub, sup))
    return;
  tex_append (lp->out, tex);
  if (line_nolimits (lp, m, sub, sup))
    tex_append (lp->out, "\\nolimits");
  /* x'_1 and x_1' are one drawing (the prime is a superscript of the same
   * nucleus, stacked over the subscript; the normaliser writes both x_{1}'):
   * only a subscript right of the prime, as in {x'}_1, is another. */
  if (sub->len > 0 && sup->len > 0 && ((Item *) sup->pdata[0])->kind == ITEM_GLYPH)
    for (guint i = 0; i < sup->len; i++)
      if (g_strcmp0 (((Item *) sup->pdata[i])->tex, "'") == 0 && !stacked_under (sub, sup->pdata[i]))
        uncertain (r, "a subscript right of a prime ({x'}_1?)");
  append_scripts (r, lp->out, sub, sup);
}

/* Small items left of every full-size one (prescripts). */
static void
line_place_leftovers (LineParse *lp)
{
  for (guint i = 0; i < lp->items->len; i++)
    {
      Item *it = lp->items->pdata[i];
      if (!it->used && it->kind != ITEM_RULE)
        {
          uncertain (lp->r, "glyphs the layout did not place");
          it->used = TRUE;
          if (it->tex != NULL)
            {
              g_autofree char *t = g_strdup_printf ("{}^{%s}", it->tex);
              g_string_prepend (lp->out, t);
            }
        }
    }
}

/* A gap of gap_pt points inside the innermost open pair: a column gap of
 * a one-row matrix (line_matrix_row) or not. */
static void
line_count_cell_gap (LineParse *lp, double gap_pt)
{
  int d = lp->open_depth - 1;
  double em = MAX (lp->main_size, 1.0);

  if (d < 0 || d >= (int) G_N_ELEMENTS (lp->cells) || !lp->cand[d])
    {
      /* outside a \big pair a 10 pt gap is an array's column gap as
       * likely as a \quad, which is wider from 11 pt up */
      if (lp->main_size > 10.4 && gap_pt >= 0.8 * em && fabs (gap_pt - 10.0) <= 0.4)
        uncertain (lp->r, "a 10 pt gap: a column gap or a \\quad");
      return;
    }
  if (gap_pt < 0.8 * em)
    {
      /* a\ b in a cell: line_append_space drops it ("ab&c") */
      if (gap_pt >= 0.3 * em)
        lp->word_gap[d] = TRUE;
      return;
    }
  if (fabs (gap_pt - 10.0) <= 0.4)
    {
      lp->cell_doubt[d] = TRUE;
      if (fabs (gap_pt - lp->main_size) <= 0.4)
        lp->quad_wide[d] = TRUE;
      if (lp->cells[d] >= 0)
        lp->cells[d]++;
      return;
    }
  /* n column gaps in a row (n - 1 empty cells: [a&&b]); a cell ending in
   * a letter adds its italic correction (up to a quarter em: V's) to the
   * gap: [P&Q] at 12 pt (11.67 pt) is as wide as \bigl[u\quad v\bigr]
   * (11.70 pt, cmr12's \quad), so neither is sure */
  for (int n = 2; n <= 4; n++)
    if (fabs (gap_pt - 10.0 * n) <= 0.4 * n)
      lp->cell_doubt[d] = TRUE;
  if (gap_pt > 10.4 && gap_pt <= 10.0 + 0.25 * em)
    lp->cell_doubt[d] = TRUE;
  lp->cells[d] = -1;
}

/* Whether TeX puts no space of its own on this side of an item: letters,
 * digits, Greek and ordinary symbols (Ord), and brackets (Open and Close:
 * TeX's table has no space between Close and Ord or Open). `after`: the
 * item stands left of the gap (a closing bracket), else right of it (an
 * opening one). Words are operators (\sin: a thin space) unless they are
 * one letter (\mathrm{d}). */
static gboolean
is_unspaced_atom (const Item *it, gboolean after)
{
  const char *t = it->tex;

  if (t == NULL || it->ext)
    return FALSE;
  if (it->kind == ITEM_WORD)
    return g_str_has_prefix (t, "\\mathrm{") && g_ascii_isalpha (t[8]) && t[9] == '}' && t[10] == 0;
  if (it->kind != ITEM_GLYPH)
    return FALSE;
  if (g_ascii_isalnum (t[0]) && t[1] == 0)
    return TRUE;
  if (strchr (after ? ")]" : "([", t[0]) != NULL && t[1] == 0)
    return TRUE;
  /* a closing bar is an Ord (\int_0^1|f|\,d\mu read |f|d\mu CERTAIN); not an
   * opening one: an italic f's correction before a bar's thin stem
   * measures 0.16 em in fourier (\|f_n-f\|_S read f\,\|, fresh seed 1071) */
  if (after && (strcmp (t, "|") == 0 || strcmp (t, "\\|") == 0))
    return TRUE;
  if (t[0] == '\\' && g_ascii_isalpha (t[1]))
    {
      static const char *const ords[] = {
        "\\alpha", "\\beta", "\\gamma", "\\delta", "\\epsilon", "\\varepsilon", "\\zeta", "\\eta",
        "\\theta", "\\vartheta", "\\iota", "\\kappa", "\\lambda", "\\mu", "\\nu", "\\xi", "\\pi",
        "\\rho", "\\varrho", "\\sigma", "\\tau", "\\upsilon", "\\phi", "\\varphi", "\\chi", "\\psi",
        "\\omega", "\\Gamma", "\\Delta", "\\Theta", "\\Lambda", "\\Xi", "\\Pi", "\\Sigma", "\\Upsilon",
        "\\Phi", "\\Psi", "\\Omega", "\\partial", "\\infty", "\\ell", "\\hbar", "\\nabla", NULL,
      };
      const char *base = t;
      /* \mathbf{x}, \boldsymbol{\alpha}, \mathcal{F}...: one letter styled */
      const char *brace = strchr (t, '{');
      g_autofree char *inner = NULL;
      if (brace != NULL && g_str_has_suffix (t, "}"))
        {
          inner = g_strndup (brace + 1, strlen (brace + 1) - 1);
          base = inner;
          if ((g_ascii_isalnum (base[0]) && base[1] == 0))
            return TRUE;
        }
      return g_strv_contains (ords, base);
    }
  return FALSE;
}

/* The widest run of ink-free columns of the region's render between the
 * centres of a and b, in the rows of either's box, in points; -1 without a
 * render. Glyph boxes are advance widths: an italic letter's italic
 * correction (CMMI f: 0.11 em) stands beyond its box as white that no
 * space command put there, and side bearings differ by glyph, so what
 * TeX's explicit spaces add is read from the ink. */
static double
ink_space_between (const Reader *r, const Item *a, const Item *b)
{
  const FmGrayImage *img = r->img;
  double s;
  int x0, x1, y0, y1, run = 0, best = 0;

  if (img == NULL)
    return -1;
  s = r->img_scale;
  x0 = MAX (0, (int) ceil ((cx (a) - r->img_area.x0) * s));
  x1 = MIN (img->width, (int) floor ((cx (b) - r->img_area.x0) * s));
  y0 = MAX (0, (int) floor ((MIN (a->box.y0, b->box.y0) - r->img_area.y0) * s));
  y1 = MIN (img->height, (int) ceil ((MAX (a->box.y1, b->box.y1) - r->img_area.y0) * s));
  if (x1 <= x0 || y1 <= y0)
    return -1;
  for (int x = x0; x < x1; x++)
    {
      gboolean ink = FALSE;
      for (int y = y0; y < y1 && !ink; y++)
        ink = img->pixels[(gsize) y * img->stride + x] < 128;
      run = ink ? 0 : run + 1;
      best = MAX (best, run);
    }
  return best / s;
}

/* Whether a (subset-stripped) font is Computer Modern or Latin Modern:
 * CMMI7, LMMathItalic7, LatinModernMath-Regular. */
static gboolean
font_is_computer_modern (const char *font)
{
  static const char *const prefixes[] = { "cm", "lm", "latinmodern", NULL };

  for (int k = 0; font != NULL && prefixes[k] != NULL; k++)
    if (g_ascii_strncasecmp (font, prefixes[k], strlen (prefixes[k])) == 0)
      return TRUE;
  return FALSE;
}

/* A small space (\, or a word space) between two atoms TeX puts no space
 * between (is_unspaced_atom: f\,dz, f(x)\,dx, 0.160\ \mu), on a line of
 * full-size items (or a CM/LM script line), written and UNCERTAIN: the reading had been CERTAIN
 * without it, and the model's agreeing reading drops such spaces (used
 * seeds 1053 and 1055: d(f\,dz) confident and wrong on five set-ups).
 * The space is the smaller of the boxes' gap and the ink's: advance boxes
 * leave an italic correction out (CMMI f: 0.11 em of white that no space
 * command put there) and the ink leaves side bearings in (CM's ][ : 0.25 em
 * of white). Over the used seeds 1041-1045 and 1052-1055 (4690 formulas
 * without a space, 3457 such pairs), 10 pairs measured 0.155 em or more
 * (newtx's f, which TeX sets up to 0.22 em from the letter before it) and a
 * thin space measured 0.166-0.29; after a script (\scriptspace, the
 * script's own italic correction) 8 of 1151 reached 0.21. The word space
 * is a third of an em in Computer Modern, a quarter in Times, a fifth in
 * Libertine: from 0.3 em it is one, below that a thin space is likelier
 * (the corpus writes \, 1345 times, ~ 77, \: 35). */
static void
line_append_small_space (LineParse *lp, const Item *base, const Item *prev, const Item *m, double gap)
{
  gboolean after_script = prev != base;
  double ink, space;

  if (base == NULL || !is_unspaced_atom (base, TRUE) || !is_unspaced_atom (m, FALSE))
    return;
  /* On a script line only in Computer Modern / Latin Modern, where the
   * thin space (0.195 em of the script) stands clear of letter pairs: in
   * newtx (i|j 0.170, F|j 0.218), Libertine (J|y 0.214), Charter (V|t
   * 0.194) and Fourier (T|Y 0.169) pairs with no space measure as wide as
   * a \, (a_{ij} read a_{i\,j}: review of reader12t) */
  if (lp->main_size < 0.85 * lp->r->em && !(font_is_computer_modern (prev->font) && font_is_computer_modern (m->font)))
    return;
  /* the thin space of a \left..\right pair's Inner atom (line_inner_pairs) */
  if (lp->inner != NULL && lp->k > 0 && (lp->inner[lp->k] == INNER_OPEN || lp->inner[lp->k - 1] == INNER_CLOSE))
    return;
  /* a script of base, or base itself */
  if (after_script && !(prev->size < base->size && cx (prev) > base->box.x1 - 0.1 * base->size))
    return;
  ink = ink_space_between (lp->r, prev, m);
  if (ink < 0)
    return;
  space = MIN (gap, ink / MAX (lp->main_size, 1.0));
  /* newtx sets its italic f 0.2-0.23 em from the letter before it (xf,
   * \alpha f, Df: six CERTAIN readings of the used seeds would have got a
   * \, there): before an f only a wider gap is a space */
  if (strcmp (m->tex, "f") == 0 && space < 0.25)
    return;
  if (g_getenv ("FM_MATHTEXT_DEBUG") != NULL)
    g_printerr ("small space %.3f em (box %.3f) %s|%s after script %d\n", space, gap, prev->tex, m->tex, after_script);
  /* XeTeX and LuaTeX set an OpenType letter's italic correction apart
   * less often, and their thin space is the boxes' whole gap: Latin
   * Modern Math's f\,d is 0.166 em of box and 0.14-0.15 of ink (the f
   * leans over it). Libertinus Math's f\,d is not told from its f( this
   * way (0.168 em of box, 0.03 and 0.08 of ink): it stays unseen. */
  if (space < (after_script ? 0.21 : 0.155) &&
      !(!after_script && font_is_unicode_math (prev->font) && fabs (gap - 1.0 / 6.0) <= 0.006 && ink / MAX (lp->main_size, 1.0) >= 0.12))
    return;
  tex_append (lp->out, space >= 0.3 ? "\\ " : "\\,");
  /* in a script the space is measured in the script's em, as TeX's mu
   * are (3 mu: a sixth of the script's quad): e^{-0.0616\,t} had been read
   * without it, CERTAIN (development seed 1163, four set-ups) */
  uncertain (lp->r, "a small space between ordinary symbols (\\, or a word space?)");
}

/* The smallest gap after a text group that is a word space: TeX's
 * interword space is 0.33 em in CM and LM, 0.25 em in Times, 0.19-0.20 em
 * in Libertine (set loose in a justified line, tighter in a display). */
#define TEXT_WORD_SPACE 0.17

/* An item TeX sets no space before after a text group: a letter, a digit,
 * an opening bracket or a text word (a relation or an operator gets its
 * own math space, 0.17-0.28 em, which is no word space). */
static gboolean
starts_ordinary (const Item *m)
{
  /* an operator name (\sin, \operatorname{..}) gets TeX's thin space
   * after a text group, one rounding step from a word space: only text
   * and upright letters are ordinary */
  if (m->kind == ITEM_WORD)
    return m->tex != NULL && (g_str_has_prefix (m->tex, "\\text{") || g_str_has_prefix (m->tex, "\\mathrm{"));
  if (m->kind != ITEM_GLYPH)
    return FALSE;
  return m->c < 0x80 ? g_ascii_isalnum ((char) m->c) || m->c == '(' || m->c == '[' :
         (m->c >= 0x0391 && m->c <= 0x03F5) || (m->c >= 0x1D400 && m->c <= 0x1D7FF);
}

/* An item TeX sets no space after before a text group: a letter, a digit,
 * a closing bracket. */
static gboolean
ends_ordinary (const Item *m)
{
  if (m->kind != ITEM_GLYPH)
    return FALSE;
  return m->c < 0x80 ? g_ascii_isalnum ((char) m->c) || m->c == ')' || m->c == ']' :
         (m->c >= 0x0391 && m->c <= 0x03F5) || (m->c >= 0x1D400 && m->c <= 0x1D7FF);
}

/* An em of space or two before m, beyond what TeX puts between atoms (a
 * relation's 5 mu, a comma's 3 mu): \quad or \qquad, and \; after a text
 * group (below) (", \qquad m=1" had
 * read ",m=1", development seed 1101; the corpus has \quad 1656 times and
 * \qquad 608). Wider is not a spacing command (an equation number's gap),
 * and not certain. */
/* Whether out ends with the text group tex as written: \text{..}, or
 * \text{ ..} with the leading space line_append_space gave it. */
static gboolean
out_ends_with_text (const GString *out, const char *tex)
{
  const char *inner = tex + strlen ("\\text{");
  gsize n = strlen (inner), head;

  if (out->len < n || !g_str_has_suffix (out->str, inner))
    return FALSE;
  head = out->len - n;
  return (head >= 6 && strncmp (out->str + head - 6, "\\text{", 6) == 0) ||
         (head >= 7 && strncmp (out->str + head - 7, "\\text{ ", 7) == 0);
}

static void
line_append_space (LineParse *lp, const Item *base, const Item *m)
{
  double right = -G_MAXDOUBLE, gap;
  const Item *prev = NULL;

  if (m->used)
    return;
  for (guint i = 0; i < lp->items->len; i++)
    {
      const Item *it = lp->items->pdata[i];
      if (it->used && it->kind != ITEM_RULE && cx (it) < cx (m) && it->box.x1 > right)
        right = it->box.x1, prev = it;
    }
  if (prev == NULL)
    return;
  gap = (m->box.x0 - right) / MAX (lp->main_size, 1.0);
  line_count_cell_gap (lp, m->box.x0 - right);
  if (gap >= 2.6)
    uncertain (lp->r, "a space wider than \\qquad");
  else if (gap >= 1.6)
    tex_append (lp->out, "\\qquad");
  else if (gap >= 0.8)
    tex_append (lp->out, "\\quad");
  else if (gap >= 0.3 && lp->main_size < 0.85 * lp->r->em)
    /* In a script or an extensible arrow's label TeX puts no space around
     * relations and binary operators, at most a thin one (1/6 em) by an
     * operator, and an italic correction: 0.3 em is a spacing command (the
     * label 1,\ f_{j},\ \ldots read CERTAIN without its word spaces on
     * every set-up of pdf-e2e seed 1039; STIX Two's \ is 0.35 em of it). */
    /* (not written: TeX's own thin space between an operator and what
     * follows it stays in a script, e^{\int p(x)dx}, and written as a word
     * space it had cost fresh seed 1061 that formula on pdfLaTeX stix2) */
    uncertain (lp->r, "a space in a script (\\ , \\;?)");
  else if (gap >= 0.5 && prev->kind == ITEM_WORD && prev->tex != NULL && g_str_has_prefix (prev->tex, "\\text{"))
    /* After a text group a word space is a third of an em; 0.6 em is
     * the word space and \; (\text{for }\;k: the corpus writes \;
     * in 159 of the 176 small spaces after a text group; development
     * seed 1112 had dropped it on every set-up) */
    tex_append (lp->out, "\\;");
  else if (gap >= TEXT_WORD_SPACE && prev->kind == ITEM_WORD && prev->tex != NULL &&
           g_str_has_prefix (prev->tex, "\\text{") && out_ends_with_text (lp->out, prev->tex) &&
           starts_ordinary (m))
    /* The word space alone is typed inside the group (\text{for }x,
     * \text{by }(3.24): TeX sets no space after a text group, so the gap
     * on the page is the group's own; the amsmath guide's `for x` had read
     * `\text{for}x`, which draws "forx"). */
    g_string_insert_c (lp->out, lp->out->len - 1, ' ');
  else if (gap >= TEXT_WORD_SPACE && m->kind == ITEM_WORD && m->tex != NULL && g_str_has_prefix (m->tex, "\\text{") &&
           !g_str_has_prefix (m->tex, "\\text{ ") && (prev->kind == ITEM_WORD || ends_ordinary (prev)))
    /* and before a text group after a letter, a digit or a closing
     * bracket, inside it: r-j\text{ is odd}, written when the group is
     * (line_append_item): m->tex is shared with the alignment's cuts
     * (FmAlignItem.tex), which read it as parsed */
    lp->text_lead = m;
  else
    line_append_small_space (lp, base, prev, m, gap);
}

/* The white between a and b (a left of b) in ems of the line's size: the
 * smaller of the advance boxes' gap and the ink's (line_append_small_space
 * says why both), or -1 without a render. */
static double
small_gap (LineParse *lp, const Item *a, const Item *b)
{
  double em = MAX (lp->main_size, 1.0);
  double ink = ink_space_between (lp->r, a, b);

  if (ink < 0)
    return -1;
  return MIN ((b->box.x0 - a->box.x1) / em, ink / em);
}

/* The closing partner of plain (not sized) opening delimiter main item k
 * at the same size, by nesting (a bar: the next bar of its kind), or -1. */
static int
plain_partner (LineParse *lp, guint k)
{
  static const char *const pairs[][2] = { { "(", ")" }, { "[", "]" }, { "\\{", "\\}" }, { "|", "|" }, { "\\|", "\\|" } };
  const Item *m = lp->main_items->pdata[k];
  const char *close = NULL;
  int depth = 0;

  if (m->kind != ITEM_GLYPH || m->ext || m->tex == NULL || m->size < 0.85 * lp->main_size)
    return -1;
  for (guint p = 0; p < G_N_ELEMENTS (pairs) && close == NULL; p++)
    if (strcmp (m->tex, pairs[p][0]) == 0)
      close = pairs[p][1];
  if (close == NULL)
    return -1;
  for (guint j = k + 1; j < lp->main_items->len; j++)
    {
      const Item *c = lp->main_items->pdata[j];
      if (c->kind != ITEM_GLYPH || c->tex == NULL)
        continue;
      if (strcmp (c->tex, close) == 0 && depth == 0)
        return !c->ext && fabs (c->size - m->size) <= 0.05 * m->size ? (int) j : -1;
      if (strcmp (c->tex, close) == 0)
        depth--;
      else if (strcmp (c->tex, m->tex) == 0)
        depth++;
    }
  return -1;
}

/* Whether a smaller glyph starts at item c's right edge: a script on it. */
static gboolean
has_script_after (LineParse *lp, const Item *c)
{
  for (guint i = 0; i < lp->items->len; i++)
    {
      const Item *it = lp->items->pdata[i];
      if (it != c && it->kind != ITEM_RULE && it->size < 0.85 * c->size &&
          it->box.x0 >= c->box.x1 - 0.1 * c->size && it->box.x0 <= c->box.x1 + 0.3 * c->size)
        return TRUE;
    }
  return FALSE;
}

/* The space left of main item k in TeX's terms: 1 a thin space (or more),
 * 0 none, -1 unknown or not told apart (see line_inner_pairs). */
static int
thin_before (LineParse *lp, guint k)
{
  const Item *m = lp->main_items->pdata[k], *base, *prev = NULL;
  double right = -G_MAXDOUBLE, space;

  if (k == 0 || !is_unspaced_atom (base = lp->main_items->pdata[k - 1], TRUE))
    return -1;
  for (guint i = 0; i < lp->items->len; i++)
    {
      const Item *it = lp->items->pdata[i];
      if (it->kind != ITEM_RULE && it != m && cx (it) < cx (m) && it->box.x1 > right)
        right = it->box.x1, prev = it;
    }
  if (prev != base && !(prev != NULL && prev->size < base->size && cx (prev) > base->box.x1 - 0.1 * base->size))
    return -1;
  if ((space = small_gap (lp, prev, m)) < 0)
    return -1;
  return space >= (prev != base ? 0.21 : 0.155) ? 1 : 0;
}

/* The same right of closing delimiter main item k: before an Ord, an
 * opening bracket or a punctuation mark; *punct: before a punctuation mark
 * (. or , or ;). */
static int
thin_after (LineParse *lp, guint k, gboolean *punct)
{
  const Item *c = lp->main_items->pdata[k], *next;
  double space;

  *punct = FALSE;
  if (k + 1 >= lp->main_items->len)
    return -1;
  next = lp->main_items->pdata[k + 1];
  *punct = next->kind == ITEM_GLYPH && next->tex != NULL && strchr (",;.", next->tex[0]) != NULL && next->tex[1] == 0;
  if (!is_unspaced_atom (next, FALSE) && !*punct)
    return -1;
  if ((space = small_gap (lp, c, next)) < 0)
    return -1;
  return space >= 0.155 ? 1 : 0;
}

/* Plain brackets and bars that TeX spaced as a \left..\right pair. Around
 * flat content \left( draws the normal glyph, but the pair is one Inner
 * atom, which TeX sets a thin space from an Ord or a closing bracket before
 * it and from an Ord, an opening bracket or a punctuation mark after it,
 * where ( ) and | get none (The TeXbook, ch. 18): F\approx-k\left(x-x_o\right).
 * and e^{-ct}\left(-c\sin t\right) had read -k\,(x-x_o) (used seed
 * 1060, dev seed 1146: every set-up), \sup\left\|f(z)\right\|. and
 * \{\left|x_M\right|r^{-M}\} the pair without its spaces (used seeds 1065,
 * 1066). A thin space on one side and none on the other is a typed \, ,
 * and so is one after the pair where nothing before it tells (TeX spaces
 * an operator, a relation or an opening bracket alike from both): people
 * type (x+1)\,dx and |f|\,d\mu, seldom a \, before a full stop. A pair with
 * a script on its closer is no such atom (the script sits elsewhere). Not
 * sure: k\,(x)= draws as k\left(x\right)=. */
static void
line_inner_pairs (LineParse *lp)
{
  /* in a script TeX puts no such thin space (\int_{\partial B_r(z)} had read
   * B_{r}\left(z\right), fresh seed 1071 on newtx) */
  if (lp->main_size < 0.85 * lp->r->em)
    return;
  for (guint k = 0; k < lp->main_items->len; k++)
    {
      int c = plain_partner (lp, k), before, after;
      gboolean punct;

      if (c < 0 || lp->inner[k] != INNER_NONE || lp->inner[c] != INNER_NONE ||
          has_script_after (lp, lp->main_items->pdata[c]))
        continue;
      before = thin_before (lp, k);
      after = thin_after (lp, (guint) c, &punct);
      if (g_getenv ("FM_MATHTEXT_DEBUG") != NULL)
        g_printerr ("plain pair %s..: thin before %d, after %d\n", ((Item *) lp->main_items->pdata[k])->tex, before, after);
      /* a thin space after the pair alone is a typed one (f(x)\,dx,
       * \int|f|\,d\mu) but before a punctuation mark */
      if ((before == 1 && after != 0) || (after == 1 && before == -1 && punct))
        {
          lp->inner[k] = INNER_OPEN;
          lp->inner[c] = INNER_CLOSE;
          uncertain (lp->r, "plain brackets spaced as \\left..\\right (or a typed \\,?)");
        }
    }
}

/* A sized delimiter with no partner on its line is no \left: \left|
 * without \right is not LaTeX. An evaluation bar (\frac{\partial}{\partial
 * z}\big|_{p}: the corpus writes \big| 32 times, \Big| 72, \bigr| once) or
 * a delimiter whose partner the box cut off is written with the size its
 * ink has (read `\left|_{p}` on every set-up of development seed 1124, and
 * the model's agreeing `\Big|` stood where the glyph is \big). */
static void
line_unpaired_sizes (LineParse *lp)
{
  for (int d = MIN (lp->open_depth, (int) G_N_ELEMENTS (lp->open_out)); d-- > 0;)
    {
      const Item *m = lp->open_items[d];
      gsize at = lp->open_out[d];
      g_autofree char *size = NULL;

      if (m == NULL || !g_str_has_prefix (lp->out->str + at, "\\left"))
        continue;
      size = g_strconcat (glyph_size_step (lp->r, m, m->box.y1 - m->box.y0), is_bar_delim (m->c) ? "" : "l", NULL);
      g_string_erase (lp->out, at, strlen ("\\left"));
      g_string_insert (lp->out, at, size);
    }
}

static char *
parse_line (Reader *r, GPtrArray *items)
{
  g_autoptr (GPtrArray) main_items = g_ptr_array_new ();
  g_autofree const char **sizes = NULL;
  g_autofree guint8 *inner = NULL;
  LineParse lp = { r, items, main_items, 0, 0, NULL, g_string_new (NULL) };

  line_main_items (&lp);
  lp.sizes = sizes = g_new0 (const char *, main_items->len + 1);
  lp.inner = inner = g_new0 (guint8, main_items->len + 1);
  line_explicit_sizes (&lp);
  line_inner_pairs (&lp);
  for (guint k = 0; k < main_items->len; k++)
    {
      lp.k = k;
      if (k > 0)
        line_append_space (&lp, main_items->pdata[k - 1], main_items->pdata[k]);
      line_append_item (&lp, k);
    }
  if (lp.open_depth > 0)
    {
      uncertain (r, "unbalanced sized delimiter");
      line_unpaired_sizes (&lp);
    }
  line_place_leftovers (&lp);
  return g_string_free (lp.out, FALSE);
}

/* Removes one occurrence of `symbol` from the symbols the glyphs back. */
static void
drop_symbol (Reader *r, const char *symbol)
{
  for (guint k = 0; k < r->symbols->len; k++)
    if (strcmp (r->symbols->pdata[k], symbol) == 0)
      {
        g_ptr_array_remove_index (r->symbols, k);
        return;
      }
}

/* The symbols an item left out of the reading backed: a glyph's own, a
 * word's letters (\text{abc}, \mathrm{n}, \det). */
static void
drop_word_symbols (Reader *r, const Item *word)
{
  const char *c = word->tex;

  if (word->kind == ITEM_GLYPH)
    {
      if (word->symbol != NULL)
        drop_symbol (r, word->symbol);
      return;
    }
  if (c == NULL || word->kind != ITEM_WORD)
    return;
  c = strchr (c, '{') != NULL ? strchr (c, '{') + 1 : c + (*c == '\\');
  for (; *c != '\0' && *c != '}'; c++)
    {
      char one[2] = { *c, 0 };
      drop_symbol (r, one);
    }
}

/* A row of the body text's words: upright words of two letters or more,
 * with nothing else but sentence punctuation and what else the body text
 * holds: letters, digits and words of a text face, upright or italic (a row
 * "e lemma", "20242024 ha", "er. ne" over an inline formula, seen in every
 * STIX Two set-up of development seed 1101; a math row has a math face's
 * letters or symbols). */
static gboolean
is_word_row (GPtrArray *row)
{
  gboolean word = FALSE;
  int letters = 0, alnum = 0;

  for (guint q = 0; q < row->len; q++)
    {
      Item *it = row->pdata[q];
      gboolean text_face = it->font != NULL && it->font[0] != 0 && fm_font_classify (it->font) != FM_FONT_MATH;
      if (text_face && it->kind == ITEM_GLYPH && it->c < 0x80 && g_ascii_isalnum ((char) it->c))
        {
          letters += g_ascii_isalpha ((char) it->c);
          alnum++;
        }
      else if (text_face && it->kind == ITEM_WORD)
        {
          letters++;
          alnum++;
        }
      if (it->kind == ITEM_WORD && it->tex != NULL && g_str_has_prefix (it->tex, "\\text{"))
        word = TRUE;
      else if (!(it->kind == ITEM_GLYPH && it->style == STYLE_RM &&
                 (it->c == '.' || it->c == ',' || it->c == ';' || it->c == ':')) &&
               !(text_face && it->kind == ITEM_WORD) &&
               !(text_face && it->kind == ITEM_GLYPH && it->c < 0x80 &&
                 (g_ascii_isalnum ((char) it->c) || strchr (".,;:", (int) it->c) != NULL)))
        return FALSE;
    }
  /* Digits alone are not the body text's (CMR's digits are math too). */
  return word || (letters > 0 && alnum >= 3);
}

/* An inline formula is one line of math: where its box took in words of the
 * text line above or below ("er point nu" over v=6\times10^{4}: development
 * seed 1010, pdfLaTeX stix2 and XeLaTeX STIX Two Math, read as one aligned
 * that the model's \upsilon=... then outvoted), those rows are the
 * neighbour's. They are left out, with their letters' symbols, and the
 * reading is UNCERTAIN. Nothing is dropped when every row is words. */
static void
drop_word_rows (Reader *r, GPtrArray *rows)
{
  guint words = 0;

  for (guint j = 0; j < rows->len; j++)
    words += is_word_row (rows->pdata[j]);
  if (words == 0 || words == rows->len)
    return;
  uncertain (r, "a line of words beside an inline formula (a neighbour's?)");
  for (guint j = rows->len; j-- > 0;)
    {
      GPtrArray *row = rows->pdata[j];
      if (!is_word_row (row))
        continue;
      for (guint q = 0; q < row->len; q++)
        {
          Item *it = row->pdata[q];
          it->used = TRUE;
          /* its letters no longer back a symbol of the formula */
          drop_word_symbols (r, it);
        }
      g_ptr_array_remove_index (rows, j);
    }
}

/* An upright word that starts an inline region and stands a word space
 * (0.2 em or more) before an ordinary symbol is the sentence's word that
 * the detector's box took in ("Have f=qP", "thus y(x,0)" on development
 * seed 1100, fourier and libertine): TeX sets no space between \text{...}
 * and a letter, digit or opening delimiter after it. Dropped, UNCERTAIN.
 * Not lower: newtxmath's thin space after an operator is 0.19 em
 * (\operatorname{Im}z, development seed 1104), as wide as Libertine's word
 * space in a justified line (0.19-0.20 em, "more g_k" on seed 1103), so
 * the two are told apart by the model's spelling (fm-recognize.c
 * without_spaced_word), not here. */
static void
drop_leading_word (Reader *r)
{
  Item *first = NULL, *next = NULL;

  for (guint i = 0; i < r->items->len; i++)
    {
      Item *it = r->items->pdata[i];
      if (!it->used && it->kind != ITEM_RULE && (first == NULL || it->box.x0 < first->box.x0))
        first = it;
    }
  if (first == NULL || first->kind != ITEM_WORD || first->tex == NULL || !g_str_has_prefix (first->tex, "\\text{"))
    return;
  for (guint i = 0; i < r->items->len; i++)
    {
      Item *it = r->items->pdata[i];
      /* any item beside it, a script too ("\\text{gr}^{i}P") */
      if (it != first && !it->used && it->kind != ITEM_RULE &&
          it->box.y1 > first->box.y0 && it->box.y0 < first->box.y1 &&
          it->box.x0 >= first->box.x1 - 0.05 * first->size && (next == NULL || it->box.x0 < next->box.x0))
        next = it;
    }
  if (next == NULL || next->kind != ITEM_GLYPH || next->box.x0 - first->box.x1 < 0.2 * first->size ||
      fabs (next->size - first->size) > 0.1 * first->size)
    return;
  if (!(next->c < 0x80 ? g_ascii_isalnum ((char) next->c) || next->c == '(' || next->c == '[' :
        (next->c >= 0x0391 && next->c <= 0x03F5) || (next->c >= 0x1D400 && next->c <= 0x1D7FF)))
    return;
  uncertain (r, "a word before an inline formula (a neighbour's?)");
  first->used = TRUE;
  drop_word_symbols (r, first);
}

/* Column alignment of several lines (fm-mathtext-align.c): the hook's
 * view of the reader. */
static char *
align_parse_line (gpointer reader, GPtrArray *items)
{
  return parse_line (reader, items);
}

static void
align_uncertain (gpointer reader, const char *why)
{
  uncertain (reader, why);
}

/* A delimiter piece merged into a taller one backs no symbol of its own. */
static void
align_forget_piece (gpointer reader, gpointer item)
{
  Item *it = item;

  it->used = TRUE;
  if (it->symbol != NULL)
    drop_symbol (reader, it->symbol);
}

/* Characters whose box starts the probes measured (below) beside letters,
 * digits and Greek letters: brackets, a bar, a leading sign, \partial,
 * \nabla, \infty, letter-like symbols. Big operators are left out: the
 * reader fits their boxes to the ink. */
static gboolean
origin_measured_char (gunichar c)
{
  static const char measured[] = "([{|+\u2212\u2016\u2202\u2207\u221e\u27e8\u2329\u00b5\u210e\u211d\u2126\u2206";

  return g_ascii_isalnum (c) || (c >= 0x391 && c <= 0x3f6) || (c >= 0x1d400 && c <= 0x1d7ff) ||
         (c > 0 && g_utf8_strchr (measured, -1, c) != NULL);
}

/* Where a glyph's box starts right of its TeX origin, in em of its size:
 * FALSE where not measured. Poppler boxes a glyph from where the PDF draws
 * it, and virtual fonts draw some letters off their TeX origin (mathptmx's
 * f 0.15 em right of it, C 0.05 em left, the same Nimbus italic 0.025 em
 * left in txfonts: the range over the set-ups). Measured with typeset
 * probes (bench/RESULTS.md, reader12t: letters, digits, Greek letters and
 * some symbols at a line's start, 10 and 12 pt, every make-truth.py set-up,
 * pdfLaTeX, XeLaTeX, LuaLaTeX); fm-mathtext-origins.inc. Computer Modern,
 * Latin Modern and STIX Two draw every glyph at its origin, unless a
 * virtual font moves them (mathpazo's CMSY10 0.0125 em right). */
typedef struct
{
  const char *font;
  gunichar c;
  double lo, hi;
} GlyphOriginMove;

static const GlyphOriginMove glyph_origin_table[] = {
#include "fm-mathtext-origins.inc"
};

/* The first row of FONT in glyph_origin_table, or its length: the table is
 * generated sorted by font name (case folded), then character, and is
 * looked up for every glyph of every aligned row. */
static guint
glyph_origin_first_row (const char *font)
{
  guint lo = 0, hi = G_N_ELEMENTS (glyph_origin_table);

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_ascii_strcasecmp (glyph_origin_table[mid].font, font) < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

static gboolean
glyph_origin_moves (const char *font, gunichar c, double *lo, double *hi)
{
  static const char *const exact[] = { "cm", "lm", "latinmodern", "stixtwo", NULL };
  gboolean by_prefix = FALSE, font_known = FALSE;

  *lo = *hi = 0;
  if (font == NULL)
    return FALSE;
  for (int k = 0; exact[k] != NULL; k++)
    by_prefix = by_prefix || g_ascii_strncasecmp (font, exact[k], strlen (exact[k])) == 0;
  for (guint k = glyph_origin_first_row (font);
       k < G_N_ELEMENTS (glyph_origin_table) && g_ascii_strcasecmp (font, glyph_origin_table[k].font) == 0; k++)
    {
      if (glyph_origin_table[k].c == c && c != 0)
        {
          *lo = glyph_origin_table[k].lo;
          *hi = glyph_origin_table[k].hi;
          return TRUE;
        }
      if (glyph_origin_table[k].c == 0)
        {
          font_known = TRUE;
          *lo = glyph_origin_table[k].lo;
          *hi = glyph_origin_table[k].hi;
        }
    }
  /* a character the probes did not meet in this font: Computer Modern's
   * fonts move all glyphs alike, the others are unmeasured (a font that
   * drew every measured one at its origin draws its letters so too) */
  if (by_prefix)
    return TRUE;
  return font_known && *lo == 0 && *hi == 0 && origin_measured_char (c);
}

static char *
align_rows (Reader *r, GPtrArray *items)
{
  FmAlignOps ops = { r, align_parse_line, align_uncertain, align_forget_piece };
  g_autoptr (GArray) view = g_array_new (FALSE, TRUE, sizeof (FmAlignItem));

  for (guint i = 0; i < items->len; i++)
    {
      Item *it = items->pdata[i];
      FmAlignItem a = { it, it->box, it->mid, it->size, it->tex, it->ext, it->kind == ITEM_GLYPH, FALSE };
      if (it->kind == ITEM_GLYPH)
        {
          a.origin = glyph_origin_moves (it->font, it->c, &a.origin_lo, &a.origin_hi);
          a.font = it->font;
        }
      if (!it->used && it->kind != ITEM_RULE)
        g_array_append_val (view, a);
    }
  return fm_mathtext_align (&ops, (FmAlignItem *) view->data, view->len);
}

/* Lines: the full-size items grouped by vertical overlap. */
static char *
parse_list (Reader *r, GPtrArray *items)
{
  g_autoptr (GPtrArray) rows = NULL;
  g_autoptr (GArray) view = NULL;
  g_autofree gboolean *take = NULL;
  g_autofree guint *line = NULL;
  double main_size = 0;
  guint n_rows;

  take_rules (r, items);
  take_limits (r, items);
  for (guint i = 0; i < items->len; i++)
    {
      Item *it = items->pdata[i];
      if (!it->used && it->kind != ITEM_RULE && !(it->kind == ITEM_GLYPH && it->ext))
        main_size = MAX (main_size, it->size);
    }
  /* Rows: full-size items that share a line (fm_mathtext_group_lines, as
   * the aligner's find_rows numbers them) */
  view = g_array_new (FALSE, TRUE, sizeof (FmAlignItem));
  take = g_new (gboolean, items->len + 1);
  line = g_new (guint, items->len + 1);
  for (guint i = 0; i < items->len; i++)
    {
      Item *it = items->pdata[i];
      FmAlignItem a = { it, it->box, it->mid, it->size, it->tex, it->ext, it->kind == ITEM_GLYPH,
                        it->kind == ITEM_RULE };
      g_array_append_val (view, a);
      take[i] = !it->used && it->kind != ITEM_RULE && it->size >= 0.85 * main_size;
      /* a tall delimiter over several rows belongs to none: it chained a
       * matrix's rows into one line (fm-mathtext-align.c pairs it) */
      if (it->kind == ITEM_GLYPH && it->ext && !it->bigop && !is_integral_char (it->c) &&
          it->box.y1 - it->box.y0 > 1.5 * main_size)
        take[i] = FALSE;
    }
  rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  n_rows = fm_mathtext_group_lines ((FmAlignItem *) view->data, view->len, take, main_size, line);
  for (guint k = 0; k < n_rows; k++)
    g_ptr_array_add (rows, g_ptr_array_new ());
  for (guint i = 0; i < items->len; i++)
    if (line[i] != G_MAXUINT)
      g_ptr_array_add (rows->pdata[line[i]], items->pdata[i]);
  if (rows->len > 1 && r->inline_region)
    drop_word_rows (r, rows);
  if (rows->len <= 1)
    return parse_line (r, items);
  /* Several lines: rows and columns (fm-mathtext-align.c) */
  return align_rows (r, items);
}

/* ---- glyph collection ------------------------------------------------------ */

static const char *const operator_words[] = {
  "arccos", "arcsin", "arctan", "arg", "cos", "cosh", "cot", "coth", "csc", "deg", "det",
  "dim", "exp", "gcd", "hom", "inf", "ker", "lg", "lim", "liminf", "limsup", "ln", "log",
  "max", "min", "Pr", "sec", "sin", "sinh", "sup", "tan", "tanh", "mod", NULL,
};

gboolean
fm_mathtext_is_operator_word (const char *word)
{
  for (int k = 0; operator_words[k] != NULL; k++)
    if (strcmp (operator_words[k], word) == 0)
      return TRUE;
  return FALSE;
}

static gboolean
is_accent_char (gunichar c, const char **cmd)
{
  switch (c)
    {
    case 0x02C6: case '^': *cmd = "\\hat"; return TRUE;
    case 0x02DC: *cmd = "\\tilde"; return TRUE;
    case 0x00AF: case 0x02C9: *cmd = "\\bar"; return TRUE;
    case 0x02D9: *cmd = "\\dot"; return TRUE;
    case 0x00A8: *cmd = "\\ddot"; return TRUE;
    case 0x02C7: *cmd = "\\check"; return TRUE;
    case 0x02D8: *cmd = "\\breve"; return TRUE;
    case 0x00B4: *cmd = "\\acute"; return TRUE;
    case 0x20D7: *cmd = "\\vec"; return TRUE;
    case 0x0300: *cmd = "\\grave"; return TRUE;
    case 0x0301: *cmd = "\\acute"; return TRUE;
    case 0x0302: *cmd = "\\hat"; return TRUE;
    case 0x0303: *cmd = "\\tilde"; return TRUE;
    case 0x0304: *cmd = "\\bar"; return TRUE;
    case 0x0306: *cmd = "\\breve"; return TRUE;
    case 0x0307: *cmd = "\\dot"; return TRUE;
    case 0x0308: *cmd = "\\ddot"; return TRUE;
    case 0x030C: *cmd = "\\check"; return TRUE;
    case 0x030A: case 0x02DA: *cmd = "\\mathring"; return TRUE;
    case 0x0060: *cmd = "\\grave"; return TRUE;   /* a text font's grave accent */
    case 0x20DB: *cmd = "\\dddot"; return TRUE;
    case 0x1DCD: *cmd = "\\widehat"; return TRUE;     /* CMEX's, cmex_char */
    case 0x0360: *cmd = "\\widetilde"; return TRUE;
    default: return FALSE;
    }
}

/* A text face's apostrophe glued to the end of a word of two letters or
 * more (Maxwell's: the amsmath guide's `\text{Maxwell's equations}` had
 * read as two words and a prime, which the model then garbled). A math
 * prime is the math symbol font's (CMSY's U+2032), never a text face's. */
static gboolean
is_word_apostrophe (const Item *b, const Item *word, gsize letters)
{
  return !b->used && b->kind == ITEM_GLYPH && (b->c == 0x2019 || b->c == '\'') && letters >= 2 &&
         b->font != NULL && fm_font_classify (b->font) == FM_FONT_TEXT &&
         fabs (b->size - word->size) <= 0.05 * word->size && b->box.x0 <= word->box.x1 + 0.12 * word->size &&
         b->box.x0 >= word->box.x1 - 0.3 * word->size;
}

/* The items keep holds (all of them where keep is NULL) in x order, the
 * walk the merges below share. A plain array: g_ptr_array_copy would carry
 * r->items' free function along. */
static GPtrArray *
items_by_x (Reader *r, gboolean (*keep) (const Item *it))
{
  GPtrArray *sorted = g_ptr_array_new ();

  for (guint i = 0; i < r->items->len; i++)
    if (keep == NULL || keep (r->items->pdata[i]))
      g_ptr_array_add (sorted, r->items->pdata[i]);
  g_ptr_array_sort (sorted, by_x);
  return sorted;
}

/* Upright letters in a row, glued (gap < 0.12 em), one font and size, become
 * words: operator names, \mathrm{d}, \text{...}. */
static void
merge_words (Reader *r)
{
  GPtrArray *g = r->items;
  g_autoptr (GPtrArray) sorted = items_by_x (r, NULL);

  for (guint i = 0; i < sorted->len; i++)
    {
      Item *a = sorted->pdata[i], *word;
      GString *w;
      guint j;
      gboolean op = FALSE;
      if (a->used || a->kind != ITEM_GLYPH || a->style != STYLE_RM || a->c >= 0x80 || !g_ascii_isalpha ((char) a->c))
        continue;
      w = g_string_new (NULL);
      g_string_append_unichar (w, a->c);
      word = item_new (ITEM_WORD);
      word->font = g_strdup (a->font);
      word->box = a->box;
      word->size = a->size;
      word->mid = a->mid;
      a->used = TRUE;
      Item *apos = NULL;
      for (j = i + 1; j < sorted->len; j++)
        {
          Item *b = sorted->pdata[j];
          double end = apos != NULL ? apos->box.x1 : word->box.x1;
          if (apos == NULL && is_word_apostrophe (b, word, w->len))
            {
              /* kept only with a letter after it (Maxwell's, don't) */
              apos = b;
              continue;
            }
          if (b->used || b->kind != ITEM_GLYPH || b->style != STYLE_RM || b->c >= 0x80 ||
              !g_ascii_isalpha ((char) b->c))
            {
              if (b->box.x0 > end + 0.12 * a->size)
                break;
              continue;
            }
          if (fabs (b->size - a->size) > 0.05 * a->size || fabs (b->mid - a->mid) > 0.1 * a->size ||
              b->box.x0 > end + 0.12 * a->size || b->box.x0 < end - 0.3 * a->size)
            continue;
          if (apos != NULL)
            {
              g_string_append_c (w, '\'');
              apos->used = TRUE;
              apos = NULL;
            }
          g_string_append_unichar (w, b->c);
          word->box.x1 = MAX (word->box.x1, b->box.x1);
          b->used = TRUE;
          /* \limsup and \liminf: TeX puts a thin space inside. */
          if (strcmp (w->str, "lim") == 0)
            for (guint k = j + 1; k + 2 < sorted->len; k++)
              {
                Item *s0 = sorted->pdata[k], *s1 = sorted->pdata[k + 1], *s2 = sorted->pdata[k + 2];
                char tail[4] = { (char) s0->c, (char) s1->c, (char) s2->c, 0 };
                if (s0->used || s0->kind != ITEM_GLYPH)
                  continue;
                if (s0->box.x0 - word->box.x1 < 0.3 * a->size && s0->style == STYLE_RM && s1->style == STYLE_RM &&
                    s2->style == STYLE_RM && s0->kind == ITEM_GLYPH && s1->kind == ITEM_GLYPH && s2->kind == ITEM_GLYPH &&
                    (strcmp (tail, "sup") == 0 || strcmp (tail, "inf") == 0))
                  {
                    g_string_append (w, tail);
                    word->box.x1 = MAX (word->box.x1, s2->box.x1);
                    s0->used = s1->used = s2->used = TRUE;
                    j = sorted->len;
                  }
                break;
              }
        }
      op |= fm_mathtext_is_operator_word (w->str);
      if (op)
        word->tex = g_strdup_printf (strcmp (w->str, "mod") == 0 ? "\\bmod" : "\\%s", w->str);
      else if (w->len == 1)
        {
          /* \mathrm{d}, \text{s} (a unit) and \operatorname{d} look the same. */
          uncertain (r, "upright letter (\\mathrm or \\text)");
          word->tex = g_strdup_printf ("\\mathrm{%s}", w->str);
        }
      else
        {
          uncertain (r, "upright word (\\text, \\mathrm or \\operatorname)");
          word->tex = g_strdup_printf ("\\text{%s}", w->str);
        }
      g_string_free (w, TRUE);
      g_ptr_array_add (g, word);
    }
}

/* Whether the region holds a letter of a math italic face (CMMI,
 * NewTXMI, Latin Modern Math's U+1D434...): then a text face's italic
 * letters are no math letters. Under mathptmx the math letters are the
 * text's own italic (NimbusRomNo9L-ReguItal), and nothing is told apart. */
static gboolean
has_math_italic_letter (Reader *r)
{
  for (guint i = 0; i < r->items->len; i++)
    {
      const Item *it = r->items->pdata[i];
      if (it->kind == ITEM_GLYPH && it->style == STYLE_PLAIN && it->font != NULL &&
          ((it->c < 0x80 && g_ascii_isalpha ((char) it->c)) || (it->c >= 0x1D434 && it->c <= 0x1D467)) &&
          fm_font_classify (it->font) == FM_FONT_MATH)
        return TRUE;
    }
  return FALSE;
}

static gboolean
is_text_italic_letter (const Item *it)
{
  return !it->used && it->kind == ITEM_GLYPH && it->c < 0x80 && g_ascii_isalpha ((char) it->c) && it->font != NULL &&
         fm_font_classify (it->font) == FM_FONT_TEXT_ITALIC && !fm_font_is_bold (it->font);
}

/* Two or more glued letters of a text face's italic beside math italic
 * letters: a word in \mathit or \textit (M\colon\mathcal{I}\to\textit{Ab} had
 * read M:\mathcal{I}\to Ab CERTAIN, math italic letters, on every set-up
 * of development seed 1147; libertine's italic read \text{Ab}). The corpus
 * writes \mathit{word} 4872 times and \textit{word} 2591, and the two draw
 * alike but for a last italic correction: \mathit, UNCERTAIN. */
static void
merge_italic_words (Reader *r)
{
  g_autoptr (GPtrArray) sorted = NULL;

  if (!has_math_italic_letter (r))
    return;
  sorted = items_by_x (r, is_text_italic_letter);
  for (guint i = 0; i < sorted->len;)
    {
      Item *a = sorted->pdata[i], *word;
      GString *w = g_string_new (NULL);
      guint j = i + 1;

      g_string_append_c (w, (char) a->c);
      for (double end = a->box.x1; j < sorted->len; j++)
        {
          Item *b = sorted->pdata[j];
          if (g_strcmp0 (b->font, a->font) != 0 || fabs (b->size - a->size) > 0.05 * a->size ||
              fabs (b->mid - a->mid) > 0.1 * a->size || b->box.x0 > end + 0.12 * a->size || b->box.x0 < end - 0.3 * a->size)
            break;
          g_string_append_c (w, (char) b->c);
          end = b->box.x1;
        }
      if (w->len >= 2)
        {
          word = item_new (ITEM_WORD);
          word->font = g_strdup (a->font);
          word->box = a->box;
          word->box.x1 = ((Item *) sorted->pdata[j - 1])->box.x1;
          word->size = a->size;
          word->mid = a->mid;
          word->tex = g_strdup_printf ("\\mathit{%s}", w->str);
          for (guint k = i; k < j; k++)
            ((Item *) sorted->pdata[k])->used = TRUE;
          uncertain (r, "italic letters of a text face (\\mathit or \\textit)");
          g_ptr_array_add (r->items, word);
        }
      g_string_free (w, TRUE);
      i = j;
    }
}

/* The letters of a word item that a text phrase can take in: a text
 * group's (\text{by}) or an article's (\mathrm{a}, \mathrm{I}), NULL for
 * an operator name, another lone upright letter (the d of
 * `\text{and}\ \mathrm{d}y` is a differential: it had read
 * `\text{and d}y`) or anything else. */
static char *
phrase_letters (const Item *it)
{
  const char *t = it->tex;

  if (it->used || it->kind != ITEM_WORD || t == NULL || it->font == NULL ||
      fm_font_classify (it->font) != FM_FONT_TEXT)
    return NULL;
  if (g_str_has_prefix (t, "\\text{"))
    t += strlen ("\\text{");
  else if (strcmp (t, "\\mathrm{a}") == 0 || strcmp (t, "\\mathrm{A}") == 0 || strcmp (t, "\\mathrm{I}") == 0)
    t += strlen ("\\mathrm{");
  else
    return NULL;
  return g_strndup (t, strlen (t) - 1);
}

static gboolean
is_unused (const Item *it)
{
  return !it->used;
}

/* Text words a word space apart (TEXT_WORD_SPACE up to half an em: beyond,
 * a spacing command stands between them), on one baseline in one size,
 * are one text group with its spaces: `\text{Maxwell's equations}`,
 * `\text{is odd}`. Read word by word they were `\text{is}\text{odd}`,
 * which draws "isodd" (the amsmath guide's displays, development). */
static void
merge_text_phrases (Reader *r)
{
  g_autoptr (GPtrArray) sorted = items_by_x (r, is_unused);

  for (guint i = 0; i < sorted->len; i++)
    {
      Item *a = sorted->pdata[i];
      g_autofree char *phrase = NULL;

      if (a->used || a->kind != ITEM_WORD || a->tex == NULL || !g_str_has_prefix (a->tex, "\\text{") ||
          (phrase = phrase_letters (a)) == NULL)
        continue;
      for (;;)
        {
          Item *next = NULL;
          g_autofree char *more = NULL;
          double gap;

          for (guint j = 0; j < sorted->len; j++)
            {
              Item *b = sorted->pdata[j];
              if (b != a && !b->used && b->kind != ITEM_RULE && b->box.y1 > a->box.y0 && b->box.y0 < a->box.y1 &&
                  b->box.x0 >= a->box.x1 - 0.05 * a->size && (next == NULL || b->box.x0 < next->box.x0))
                next = b;
            }
          if (next == NULL || (more = phrase_letters (next)) == NULL)
            break;
          gap = (next->box.x0 - a->box.x1) / MAX (a->size, 1.0);
          if (gap < TEXT_WORD_SPACE || gap >= 0.5 || fabs (next->size - a->size) > 0.05 * a->size ||
              fabs (next->mid - a->mid) > 0.1 * a->size)
            break;
          g_free (a->tex);
          a->tex = g_strdup_printf ("\\text{%s %s}", phrase, more);
          g_free (phrase);
          phrase = phrase_letters (a);
          a->box.x1 = MAX (a->box.x1, next->box.x1);
          a->box.y0 = MIN (a->box.y0, next->box.y0);
          a->box.y1 = MAX (a->box.y1, next->box.y1);
          next->used = TRUE;
        }
    }
}

/* CMSY-like fonts, whose unnamed glyphs Poppler reports by their code
 * (negationslash as "6", mapstochar as "7"). Latin Modern's Type 1 font is
 * named LMMathSymbols10-Regular (its TFM lmsy10): its \mapsto had read
 * "V7\to V", CERTAIN (development seeds 1105 and 1109). */
static gboolean
font_is_tex_symbols (const char *font)
{
  return name_has (font, "^(cmsy|cmbsy|lmsy|lmmathsymbols|txsy|pxsy|rtxsy|rpxsy|zplsy|ntxsy|fourier-math-symbols)");
}

/* The n-th item after (n > 0) or before (n < 0) the i-th of sorted (by x)
 * on the i-th's line: its box overlaps the i-th's by a third of the
 * i-th's height (scripts do, a line above or below does not). */
static Item *
neighbour_on_line (GPtrArray *sorted, guint i, int n)
{
  const Item *a = sorted->pdata[i];
  int step = n > 0 ? 1 : -1, left = ABS (n);

  for (int j = (int) i + step; j >= 0 && j < (int) sorted->len; j += step)
    {
      Item *b = sorted->pdata[j];
      if (MIN (a->box.y1, b->box.y1) - MAX (a->box.y0, b->box.y0) > (a->box.y1 - a->box.y0) / 3 && --left == 0)
        return b;
    }
  return NULL;
}

/* Whether colon a's left neighbour's box reaches it while a space follows:
 * TeX puts a space before both colons outside scripts (the relation's 5 mu,
 * \colon's 2 mu), and a relation colon in a script has none on either
 * side; a box that touches a spaced colon took in the space before it. */
static gboolean
colon_box_touches (const Item *prev, const Item *a, const Item *b)
{
  return a->box.x0 - prev->box.x1 < 0.01 * a->size && b->box.x0 - a->box.x1 > 0.08 * a->size &&
         fabs (b->mid - a->mid) < 0.1 * a->size && fabs (prev->mid - a->mid) < 0.1 * a->size;
}

/* The colon a between two glyphs (colon_box_touches, colon_spaced),
 * spelt from the ink's spaces: a relation ":" has a thick space (5 mu) on
 * both sides, a \colon less before than after (amsmath's 2 mu and 6 mu;
 * unicode-math's punctuation none and 3 mu). Measured white after less
 * white before (bench/RESULTS.md, issue 12): relation -0.107 to 0.070 em,
 * and 0.101 before TeX Gyre Termes' wide-bearing `[` (cls-edges-lua),
 * \colon 0.134 to 0.305 em (pdfLaTeX CM, LM, mathptmx, newtx, fourier,
 * libertine, STIX Two; XeLaTeX STIX Two Math; 10-12 pt), but 0.106 for
 * STIX Two Math's at the coarser render of a tight region (the pixels
 * move the white by some 0.04 em): over 0.11 \colon; more white before is
 * never \colon. Without a render, or between 0.075 and 0.11, ":" (ten
 * times as common in the corpus) and unsure. */
static void
colon_by_ink (Reader *r, const Item *prev, Item *a, const Item *b)
{
  double before = ink_space_between (r, prev, a), after = ink_space_between (r, a, b);

  if (g_getenv ("FM_MATHTEXT_DEBUG") != NULL)
    g_printerr ("colon ink before %.3f after %.3f em\n", before / a->size, after / a->size);
  if (before >= 0 && after >= 0 && after - before > 0.11 * a->size)
    {
      g_free (a->tex);
      a->tex = g_strdup ("\\colon");
    }
  else if (before < 0 || after < 0 || after - before > 0.075 * a->size)
    uncertain (r, "a colon whose spaces the ink does not tell (\":\" or \\colon?)");
}

/* Whether colon a stands on the line between prev and b with space after
 * it: then its spelling is read from the ink (colon_by_ink). The boxes'
 * gap before it holds the left glyph's italic correction (Times' italic f:
 * `f\colon U` measured 0.26 em before the colon, read as the relation's
 * thick space, fresh seed 1076 on mathptmx, newtx, fourier, libertine). */
static gboolean
colon_spaced (const Item *prev, const Item *a, const Item *b)
{
  return b->box.x0 - a->box.x1 > 0.08 * a->size && fabs (b->mid - a->mid) < 0.1 * a->size &&
         fabs (prev->mid - a->mid) < 0.1 * a->size;
}

/* Neighbours in x order: three dots (\ldots, \cdots), \pmb's overprints,
 * touching minus signs, \colon, ":=" and \cong. */
static void
merge_sequences (Reader *r)
{
  g_autoptr (GPtrArray) sorted = items_by_x (r, NULL);

  /* Three dots in a row are \ldots or \cdots (TeX sets them as three
   * glyphs); ":=" is \coloneqq. */
  for (guint i = 0; i + 1 < sorted->len; i++)
    {
      Item *a = sorted->pdata[i], *b, *c, *prev;
      gboolean dot = a->c == '.' || a->c == 0x22C5 || a->c == 0x00B7;
      if (a->used || a->kind != ITEM_GLYPH)
        continue;
      /* Neighbours on a's line: a box that took in a line of text above
       * puts its letters between (":" and "=" of f'(x):=A with "problem"
       * above them, development seed 1101). */
      b = neighbour_on_line (sorted, i, 1);
      c = b != NULL ? neighbour_on_line (sorted, i, 2) : NULL;
      prev = neighbour_on_line (sorted, i, -1);
      if (b == NULL)
        continue;
      if (b->kind == ITEM_GLYPH && !b->used && b->c == a->c && fabs (b->box.x0 - a->box.x0) < 0.1 * a->size &&
          fabs (b->mid - a->mid) < 0.1 * a->size)
        {
          /* Pieces of one tall delimiter (fitted to its ink, they share its
           * box): one delimiter, one symbol (fm-mathtext-align.c). */
          if (a->ext && a->c < 0x80 && strchr ("([{)]}", (int) a->c) != NULL)
            {
              align_forget_piece (r, b);
              continue;
            }
          /* The same glyph printed twice, a little apart: \pmb's poor man's
           * bold, or an overprint we cannot spell. */
          uncertain (r, "overprinted glyphs (\\pmb?)");
          b->used = TRUE;
          continue;
        }
      if (dot && c != NULL && b->c == a->c && c->c == a->c && !b->used && !c->used &&
          b->box.x0 - a->box.x1 < 0.3 * a->size && c->box.x0 - b->box.x1 < 0.3 * a->size &&
          fabs (b->mid - a->mid) < 0.05 * a->size && fabs (c->mid - a->mid) < 0.05 * a->size)
        {
          g_free (a->tex);
          a->tex = g_strdup (a->c == '.' ? "\\ldots" : "\\cdots");
          a->box.x1 = c->box.x1;
          b->used = c->used = TRUE;
        }
      else if ((a->c == 0x2212 || a->c == '-') && (b->c == 0x2212 || b->c == '-' || b->c == 0x2192 || b->c == 0x27F6) &&
               b->box.x0 - a->box.x1 < 0.05 * a->size && fabs (b->mid - a->mid) < 0.1 * a->size &&
               (b->c == 0x2212 || b->c == '-'))
        {
          /* Minus signs that touch: the pieces of an extensible arrow
           * (\xrightarrow, amscd's arrows), whose length is the label's. */
          uncertain (r, "an arrow built from pieces");
        }
      else if (a->c == ':' && prev != NULL && b->c != '=' && prev->kind == ITEM_GLYPH &&
               (colon_box_touches (prev, a, b) || (r->img != NULL && colon_spaced (prev, a, b))))
        {
          /* Poppler widens a glyph's box over the kern that follows it in
           * one TJ array (pdfLaTeX's `[(\011)-278(:)]TJ` for \Psi : at
           * 12 pt, development seed 1073: the box of \Psi reached the
           * colon, read \colon), and a left glyph's italic correction
           * widens the boxes' gap: the spelling is read from the rendered
           * ink's spaces instead (colon_by_ink; ":" and unsure where they
           * do not tell). */
          colon_by_ink (r, prev, a, b);
        }
      else if (a->c == ':' && prev != NULL && b->c != '=' && prev->kind == ITEM_GLYPH &&
               a->box.x0 - prev->box.x1 < 0.25 * a->size &&
               b->box.x0 - a->box.x1 > a->box.x0 - prev->box.x1 + 0.08 * a->size &&
               fabs (b->mid - a->mid) < 0.1 * a->size)
        {
          /* TeX spaces a relation ":" alike on both sides (\thickmuskip,
           * 5 mu); amsmath's \colon has 2 mu before and 6 mu after. */
          g_free (a->tex);
          a->tex = g_strdup ("\\colon");
        }
      else if (a->c == ':' && prev != NULL && b->c != '=' && prev->kind == ITEM_GLYPH &&
               b->box.x0 - a->box.x1 > 0.08 * a->size && fabs (b->mid - a->mid) >= 0.1 * a->size)
        {
          /* A spaced colon before a glyph whose box middle is not the
           * line's (MSBM's and txsyb's \mathbb boxes sit some 0.2 em off:
           * `h\colon\mathbb{R}`, review of reader12s): neither the ink nor
           * the boxes were measured, so ":" is not certain either way and
           * an agreeing model's \colon stays (the spelling doubt makes the
           * reading DOUBTFUL: fm-recognize.c, with_relation_colon). A
           * raised left neighbour (f' : X') keeps the corpus's ":": flagged
           * too, it lost `f':X'\to B'` (right, 0.91) to the model's \colon
           * on development seed 1157 (fourier). */
          uncertain (r, "a colon whose spaces the ink does not tell (\":\" or \\colon?)");
        }
      else if (a->c == ':' && b->c == '=' && !b->used && b->box.x0 - a->box.x1 < 0.15 * a->size)
        {
          /* ":=" and \coloneqq (mathtools) differ only in the colon's height. */
          uncertain (r, "\":=\" or \\coloneqq");
          g_free (a->tex);
          a->tex = g_strdup ("\\coloneqq");
          a->box.x1 = b->box.x1;
          b->used = TRUE;
        }
      else if (((a->c == 0x223C && b->c == '=') || (a->c == '=' && b->c == 0x223C)) && !b->used &&
               fabs (cx (a) - cx (b)) < 0.2 * a->size)
        {
          /* \cong: a tilde set over an equals sign, both at one x; in x
           * order either may come first (Latin Modern's "=" starts 0.001 pt
           * left of its tilde: "=\sim", development seed 1114). */
          g_free (a->tex);
          a->tex = g_strdup ("\\cong");
          a->c = 0x223C;   /* as when the tilde comes first */
          a->box.y0 = MIN (a->box.y0, b->box.y0);
          a->box.y1 = MAX (a->box.y1, b->box.y1);
          b->used = TRUE;
        }
    }
}

static gboolean
is_bar_char (gunichar c)
{
  return c == '|' || c == 0x2223 || c == 0x2016 || c == 0x2225;
}

/* The nearest glyph on b's line (its middle within 0.1 em) left (dir -1) or
 * right (dir 1) of it: other lines of the region (a neighbour's words) do
 * not come between. */
static Item *
line_neighbour (Reader *r, const Item *b, int dir)
{
  Item *best = NULL;

  for (guint j = 0; j < r->items->len; j++)
    {
      Item *o = r->items->pdata[j];
      if (o == b || o->kind != ITEM_GLYPH || fabs (o->mid - b->mid) >= 0.1 * b->size ||
          (dir < 0 ? o->box.x0 >= b->box.x0 : o->box.x0 <= b->box.x0))
        continue;
      if (best == NULL || (dir < 0 ? o->box.x0 > best->box.x0 : o->box.x0 < best->box.x0))
        best = o;
    }
  return best;
}

/* Nothing between x0 and x1 beside b: the space around a relation is
 * empty, where a closing bar's script fills it (|z_{1}|^{2}+ had read
 * |z_{1}\mid^{2}, development seed 1101). */
static gboolean
gap_is_empty (Reader *r, double x0, double x1, const Item *b)
{
  for (guint j = 0; j < r->items->len; j++)
    {
      const Item *o = r->items->pdata[j];
      if (o != b && !o->used && o->kind == ITEM_GLYPH && o->box.x1 > x0 + 0.01 && o->box.x0 < x1 - 0.01 &&
          o->box.y1 > b->box.y0 && o->box.y0 < b->box.y1)
        return FALSE;
    }
  return TRUE;
}

/* A bar with a relation's thick space on both sides is \mid, a double one
 * \parallel (fresh seed 1002); absolute-value and norm bars hug their
 * contents. */
static void
merge_relation_bars (Reader *r)
{
  for (guint i = 0; i < r->items->len; i++)
    {
      Item *b = r->items->pdata[i], *a, *c;
      if (b->kind != ITEM_GLYPH || !is_bar_char (b->c) || b->ext || b->used)
        continue;
      a = line_neighbour (r, b, -1);
      c = line_neighbour (r, b, 1);
      if (a != NULL && c != NULL && !a->used &&
          !a->bigop && !c->bigop && !a->ext && !c->ext &&
          fabs (a->size - b->size) < 0.05 * b->size && fabs (c->size - b->size) < 0.05 * b->size &&
          b->box.x0 - a->box.x1 > 0.2 * b->size && c->box.x0 - b->box.x1 > 0.2 * b->size &&
          gap_is_empty (r, a->box.x1, b->box.x0, b) && gap_is_empty (r, b->box.x1, c->box.x0, b))
        {
          g_free (b->tex);
          b->tex = g_strdup (b->c == 0x2016 || b->c == 0x2225 ? "\\parallel" : "\\mid");
        }
    }
}

/* The base of a combining accent that lies over no glyph's box, by how
 * Poppler boxes it in a Type 1 font:
 * - one it takes as one character with the glyph before gets half of that
 *   glyph's box, beside it, and nothing overlaps it (fourier's \bar{z} and
 *   \hat{\mathbf{y}}: Utopia's accents come as U+0304 and U+0302, "an
 *   accent without a base", development seed 1112): the glyph whose box it
 *   continues, which gets the whole box back;
 * - CMMI's \vec is a sliver at its base's left edge (TeX kerned it back):
 *   the glyph that starts where it ends (\langle\vec{u},2\vec{v}\rangle,
 *   development seed 1112).
 * NULL otherwise. */
static Item *
accent_beside (Reader *r, Item *a)
{
  double w = a->box.x1 - a->box.x0;
  const char *acc;
  Item *base = NULL;

  /* The sliver case only in the fonts it was seen in: a zero-width mark
   * that follows its base in another Type 1 font would go on the next
   * glyph, read sure (review). */
  if (font_is_unicode_math (a->font) || (w > 0.05 * r->em && w < 0.15 * r->em) ||
      (w <= 0.05 * r->em && !name_has (a->font, "^(cmmi|lmmi)")))
    return NULL;
  for (guint j = 0; j < r->items->len; j++)
    {
      Item *b = r->items->pdata[j];
      gboolean line = fabs (b->box.y0 - a->box.y0) < 0.1 * r->em && fabs (b->box.y1 - a->box.y1) < 0.1 * r->em;
      if (b == a || b->used || b->kind != ITEM_GLYPH || is_accent_char (b->c, &acc) || !line)
        continue;
      if (w >= 0.15 * r->em && MIN (b->box.x1, a->box.x1) - MAX (b->box.x0, a->box.x0) > 0.05)
        return NULL;   /* something lies under it after all */
      if (w >= 0.15 * r->em ? fabs (b->box.x1 - a->box.x0) < 0.05 : fabs (b->box.x0 - a->box.x1) < 0.3)
        base = b;
    }
  if (base != NULL && w >= 0.15 * r->em)
    base->box.x1 = a->box.x1;
  return base;
}

/* Whether the glyphs under wide accent a (by their middles) may not be
 * its whole base. TeX takes the widest of CMEX's three sizes (0.556,
 * 1 and 1.444 of the font size; Latin Modern's alike) that the base is as
 * wide as, the smallest if none, and centres it on a base of several
 * glyphs (on one glyph it is skewed):
 * - the widest over a wider base spans its middle glyphs only
 *   (\widehat{ABCD} read A\widehat{BC}D, certain): a glyph within 0.3 em
 *   of the group may be part of it (a letter's italic correction, up to
 *   a quarter em, stands between W and X in \widetilde{WXYZ});
 * - a group too narrow or too wide for the size, or off the accent's
 *   centre, is not its base; a narrow base's skewed accent reaches over
 *   the next glyph's middle (\widetilde{l}l read \widetilde{ll}), so the
 *   smallest over two glyphs is unsure. */
static gboolean
wide_accent_doubtful (Reader *r, Item *a, GPtrArray *base)
{
  Item *first = base->pdata[0], *last = base->pdata[base->len - 1];
  double sz = MAX (a->size, 1.0);
  double w = (a->box.x1 - a->box.x0) / sz, gw = (last->box.x1 - first->box.x0) / sz;
  double off = ((a->box.x0 + a->box.x1) - (first->box.x0 + last->box.x1)) / 2 / sz;

  if (w > 1.2)
    for (guint j = 0; j < r->items->len; j++)
      {
        Item *b = r->items->pdata[j];
        if (b == a || b->used || b->kind != ITEM_GLYPH || g_ptr_array_find (base, b, NULL) ||
            fabs (b->box.y1 - first->box.y1) > 0.1 * r->em)
          continue;
        if ((b->box.x1 <= first->box.x0 + 0.05 * r->em && first->box.x0 - b->box.x1 < 0.3 * r->em) ||
            (b->box.x0 >= last->box.x1 - 0.05 * r->em && b->box.x0 - last->box.x1 < 0.3 * r->em))
          {
            uncertain (r, "a glyph beside the widest wide accent's group");
            return TRUE;
          }
      }
  /* as wide as its size and narrower than the next one */
  if ((w >= 0.8 && gw < w - 0.08) || (w < 0.8 && gw > 1.08) || (w >= 0.8 && w <= 1.2 && gw > 1.52))
    return TRUE;
  if (base->len < 2)
    return FALSE;
  if (fabs (off) > 0.06)
    return TRUE;
  if (w < 0.8)
    {
      uncertain (r, "the smallest wide accent over two glyphs");
      return TRUE;
    }
  return FALSE;
}

/* A wide accent from the extension font (\widehat{xy}) over the glyphs
 * whose middles its width spans, on one baseline and of one size (else
 * it stays unknown: the reading is uncertain). Poppler boxes the extension
 * glyph below its ink, so only its width is read. */
static void
merge_wide_accent (Reader *r, Item *a, const char *acc)
{
  g_autoptr (GPtrArray) base = g_ptr_array_new ();
  Item *first;
  GString *t;

  for (guint j = 0; j < r->items->len; j++)
    {
      Item *b = r->items->pdata[j];
      if (b != a && !b->used && b->kind == ITEM_GLYPH && !b->ext && !b->bigop && b->tex != NULL &&
          cx (b) >= a->box.x0 && cx (b) <= a->box.x1)
        g_ptr_array_add (base, b);
    }
  if (base->len == 0)
    return;
  g_ptr_array_sort (base, by_x);
  first = base->pdata[0];
  /* a glyph beside the bases that reaches under the accent (the script
   * of \widehat{dx_j} or of {\widehat{dx}}_j) leaves the group unknown */
  for (guint j = 0; j < r->items->len; j++)
    {
      Item *b = r->items->pdata[j];
      if (b != a && !b->used && b->kind == ITEM_GLYPH && !g_ptr_array_find (base, b, NULL) &&
          b->box.x1 > a->box.x0 + 0.05 * r->em && b->box.x0 < a->box.x1 - 0.05 * r->em &&
          b->box.y0 < first->box.y1 && b->box.y1 > first->box.y0)
        return;
    }
  for (guint j = 1; j < base->len; j++)
    {
      Item *b = base->pdata[j];
      if (fabs (b->box.y1 - first->box.y1) > 0.1 * r->em || fabs (b->size - first->size) > 0.1 * first->size)
        return;
    }
  if (wide_accent_doubtful (r, a, base))
    return;
  t = g_string_new (acc);
  g_string_append_c (t, '{');
  for (guint j = 0; j < base->len; j++)
    {
      Item *b = base->pdata[j];
      tex_append (t, b->tex);
      first->box.x1 = MAX (first->box.x1, b->box.x1);
      if (j > 0)
        b->used = TRUE;
    }
  g_string_append_c (t, '}');
  g_free (first->tex);
  first->tex = g_string_free (t, FALSE);
  first->accented = TRUE;
  /* its ink: over the bases, up to 0.3 em above their boxes (a hat over
   * ascenders) */
  a->box.y0 = first->box.y0 - 0.3 * r->em;
  a->box.y1 = cy (first);
  first->box.y0 = a->box.y0;
  a->used = TRUE;
}

/* An accent over the glyph under its centre: \hat{x}... */
static void
merge_accent (Reader *r, Item *a, const char *acc)
{
  GPtrArray *g = r->items;

  Item *base = NULL;
  double x = cx (a);

  if (a->c == 0x1DCD || a->c == 0x0360)
    {
      merge_wide_accent (r, a, acc);
      return;
    }

  /* A combining mark of an OpenType math font (XeTeX's \vec is U+20D7)
   * has no width, and its ink lies left of where Poppler boxes it: at the
   * base's right edge, inside the next glyph by a hair (\vec{a}e^{t} had
   * read a\vec{e}^{t}, tests/fixtures/pdf/mathtext-stix2-xe.tex). Not
   * CMMI's \vec, which Poppler boxes alike but where TeX set it. */
  if (a->box.x1 - a->box.x0 < 0.02 * r->em && ((a->c >= 0x0300 && a->c <= 0x036F) || (a->c >= 0x20D0 && a->c <= 0x20FF)) &&
      font_is_unicode_math (a->font))
    x -= 0.1 * r->em;
  for (guint j = 0; j < g->len; j++)
    {
      Item *b = g->pdata[j];
      if (b != a && !b->used && b->kind != ITEM_RULE && x >= b->box.x0 && x <= b->box.x1 &&
          cy (b) >= cy (a) - 0.1 * r->em && (b->kind != ITEM_GLYPH || !is_accent_char (b->c, &acc)))
        base = b;
    }
  if (base == NULL && ((a->c >= 0x0300 && a->c <= 0x036F) || (a->c >= 0x20D0 && a->c <= 0x20FF)))
    base = accent_beside (r, a);
  is_accent_char (a->c, &acc);
  if (base != NULL && base->tex != NULL)
    {
      char *t = g_strdup_printf ("%s{%s}", acc, base->tex);
      g_free (base->tex);
      base->tex = t;
      base->box.y0 = MIN (base->box.y0, a->box.y0);
      base->accented = TRUE;
      a->used = TRUE;
    }
}

/* \not: a slash over the next relation. The slash strikes a glyph of its
 * own size on its own line: the slash of a script-size \neq in a limit
 * under \prod lies inside the operator's columns too, and had made it
 * "\not\prod" (found on fresh seed 1025 on CM, LM and fourier). */
static void
merge_not (Reader *r, Item *a)
{
  GPtrArray *g = r->items;
  Item *best = NULL;
  /* LaTeX's \notin (\c@ncel) is an ordinary slash drawn over the middle
   * of \in, not CMSY's negation slash: a '/' whose middle lies inside the
   * next glyph's box (development seed 1115, CM and LM: "z\notin/U_{2}",
   * certain). A slash set beside its neighbours never stands inside one. */
  gboolean over = a->c == '/';

  for (guint j = 0; j < g->len && best == NULL; j++)
    {
      Item *b = g->pdata[j];
      double w = b->box.x1 - b->box.x0;
      if (b == a || b->used || b->kind != ITEM_GLYPH || b->tex == NULL || b->bigop || b->ext ||
          cx (b) <= a->box.x0 - 0.1 * r->em || cx (b) >= a->box.x1 + 0.6 * r->em)
        continue;
      if (over && (b->c == '/' || cx (a) < b->box.x0 + 0.2 * w || cx (a) > b->box.x1 - 0.2 * w))
        continue;
      /* same size (a script slash pairs with the script "="), and its
       * middle inside the slash's height */
      if (b->size > 1.25 * a->size || b->size < 0.8 * a->size || cy (b) < a->box.y0 || cy (b) > a->box.y1)
        continue;
      best = b;
    }
  if (best != NULL)
    {
      Item *b = best;
      /* a zero struck through is how a text font without U+2205 draws
       * \emptyset (mathptmx, development seed 1115: "Z=0/") */
      char *t = b->c == '=' ? g_strdup ("\\neq") : b->c == 0x2208 ? g_strdup ("\\notin")
                : (over && b->c == '0') ? g_strdup ("\\emptyset")
                : g_strdup_printf ("\\not%s%s", g_ascii_isalpha (b->tex[0]) ? " " : "", b->tex);
      g_free (b->tex);
      b->tex = t;
      b->box.x0 = MIN (b->box.x0, a->box.x0);
      a->used = TRUE;
    }
}

/* Long arrows and \mapsto from their pieces. */
static void
merge_arrow (Reader *r, Item *a)
{
  GPtrArray *g = r->items;

  /* \longrightarrow = a minus (or =) overlapping the arrow; \mapsto = the
   * mapsto bar before it. */
  gboolean longer = FALSE, maps = FALSE, hook = FALSE;

  if (a->head_w <= 0)
    a->head_w = a->box.x1 - a->box.x0;
  /* Two passes: the minus first, so that \longmapsto's bar, which
   * sits where the minus starts, is looked for from the widened
   * arrow (pdfLaTeX CM, fourier, newtx had read "7\longrightarrow"). */
  for (guint j = 0, pass = 0; pass < 2; j = (j + 1 == g->len) ? (pass++, 0) : j + 1)
    {
      Item *b = g->pdata[j];
      gboolean piece;
      if (b == a || b->used || b->kind != ITEM_GLYPH)
        continue;
      if (fabs (cy (b) - cy (a)) > 0.2 * r->em)
        continue;
      /* stix2's Type 1 relbar comes as a "," of the arrow's own font
       * (merge_arrow_shaft): one of them is \xrightarrow's short shaft
       * (A\xrightarrow{f}B read A,\overset{f}{\to}B CERTAIN) */
      piece = b->c == 0x2212 || b->c == '-' || b->c == '=' || b->c == 0x2190 || b->c == 0x21D0 ||
              (b->c == ',' && g_strcmp0 (b->font, a->font) == 0);
      if (pass == 1 && piece)
        continue;
      /* The minus starts left of the arrow (\longrightarrow), or
       * where it does and ends inside it: \xrightarrow{i} with a
       * short label, whose arrowfill overlaps the two. */
      if (pass == 0 && piece &&
          b->box.x1 > a->box.x0 - 0.05 * r->em && a->c != b->c &&
          (b->box.x0 < a->box.x0 ||
           (b->box.x0 <= a->box.x0 + 0.02 * r->em && b->box.x1 <= a->box.x1 + 0.02 * r->em)))
        {
          longer = TRUE;
          a->box.x0 = MIN (a->box.x0, b->box.x0);
          /* \xleftrightarrow's left head took its shaft in: so has the arrow */
          a->shaft = a->shaft || b->shaft;
          b->used = TRUE;
          if (b->c == 0x2190 || b->c == 0x21D0)
            a->c = (a->c == 0x21D2) ? 0x21D4 : 0x2194;
        }
      else if (pass == 1 && (b->c == 0x21A6 || b->c == 0x22A2 || b->c == 0x007C ||
                (b->c == '7' && font_is_tex_symbols (b->font))) && b->box.x1 > a->box.x0 - 0.15 * r->em &&
               /* the bar has no width in CMSY and txsys: Poppler's
                * box for it starts where the arrow's does */
               b->box.x0 <= a->box.x0 + 0.02 * r->em && b->size == a->size &&
               b->box.x1 - b->box.x0 < 0.3 * r->em)
        {
          maps = TRUE;
          a->box.x0 = MIN (a->box.x0, b->box.x0);
          b->used = TRUE;
        }
      /* \hookrightarrow is CMMI's \lhook (Poppler's ",") joined to the
       * arrow's tail at the arrow's height, where a comma sits low and a
       * space away (X\xhookrightarrow{f}Y read X,\xrightarrow{f}Y CERTAIN) */
      else if (pass == 1 && b->c == ',' && a->c == 0x2192 && g_strcmp0 (b->font, a->font) != 0 &&
               b->box.x0 < a->box.x0 && b->box.x1 > a->box.x0 - 0.05 * r->em && b->size == a->size &&
               fabs (cy (b) - cy (a)) < 0.1 * r->em)
        {
          hook = TRUE;
          a->box.x0 = MIN (a->box.x0, b->box.x0);
          b->used = TRUE;
        }
    }
  if (hook)
    {
      g_free (a->tex);
      a->tex = g_strdup ("\\hookrightarrow");
    }
  else if (longer || maps)
    {
      const char *t;
      switch (a->c)
        {
        case 0x2192: t = maps ? (longer ? "\\longmapsto" : "\\mapsto") : "\\longrightarrow"; break;
        case 0x2190: t = "\\longleftarrow"; break;
        case 0x21D2: t = "\\Longrightarrow"; break;
        case 0x21D0: t = "\\Longleftarrow"; break;
        case 0x2194: t = "\\longleftrightarrow"; break;
        default: t = "\\Longleftrightarrow"; break;
        }
      g_free (a->tex);
      a->tex = g_strdup (t);
    }
}

/* An extensible arrow's shaft. amsmath's \xrightarrow{..} (715 of the
 * corpus's formulas, ../shared) and \xleftarrow{..} draw their arrow as long
 * as the label (\arrowfill@): a \relbar, \cleaders of \relbars and the
 * head, so pieces of one glyph touch in a row up to the arrow's tail. Each
 * piece alone was a minus (or, in stix2's Type 1 math font, Poppler's ","),
 * the shaft's ink a rule under the label (read "\underline{...}" and a row
 * of minus signs on every set-up of pdf-e2e seed 1039). Takes a row of two
 * or more into the arrow a, whose box then spans the shaft (so its ink is
 * the arrow's, not a rule): line_append_arrow_label writes it with its
 * label. One minus over the tail is \longrightarrow's (merge_arrow). */
static void
merge_arrow_shaft (Reader *r, Item *a)
{
  gboolean leftward = a->c == 0x2190;
  g_autoptr (GPtrArray) row = g_ptr_array_new ();
  FmRect span = a->box;
  gunichar piece = 0;
  gboolean grew = TRUE;

  while (grew)
    {
      grew = FALSE;
      for (guint j = 0; j < r->items->len; j++)
        {
          Item *p = r->items->pdata[j];
          gboolean touches;
          if (p == a || p->used || p->kind != ITEM_GLYPH || g_ptr_array_find (row, p, NULL) ||
              !(p->c == 0x2212 || p->c == '-' || (p->c == ',' && g_strcmp0 (p->font, a->font) == 0)) ||
              (piece != 0 && p->c != piece) || fabs (p->size - a->size) > 0.05 * a->size ||
              fabs (cy (p) - cy (a)) > 0.1 * a->size)
            continue;
          touches = leftward ? p->box.x0 <= span.x1 + 0.05 * a->size && p->box.x1 > span.x1
                             : p->box.x1 >= span.x0 - 0.05 * a->size && p->box.x0 < span.x0;
          if (!touches)
            continue;
          piece = p->c;
          g_ptr_array_add (row, p);
          span.x0 = MIN (span.x0, p->box.x0);
          span.x1 = MAX (span.x1, p->box.x1);
          grew = TRUE;
        }
    }
  if (row->len < 2)
    return;
  for (guint j = 0; j < row->len; j++)
    ((Item *) row->pdata[j])->used = TRUE;
  a->head_w = a->box.x1 - a->box.x0;
  a->box = span;
  a->shaft = TRUE;
  g_free (a->tex);
  a->tex = g_strdup (leftward ? "\\longleftarrow" : "\\longrightarrow");
}

/* Accents over a glyph; TeX's two-piece symbols (\not, long arrows, \mapsto). */
static void
merge_pieces (Reader *r)
{
  GPtrArray *g = r->items;

  /* before merge_sequences, which calls touching minus signs unread */
  for (guint i = 0; i < g->len; i++)
    {
      Item *a = g->pdata[i];
      if (!a->used && a->kind == ITEM_GLYPH && (a->c == 0x2192 || a->c == 0x2190))
        merge_arrow_shaft (r, a);
    }
  merge_sequences (r);
  merge_relation_bars (r);
  for (guint i = 0; i < g->len; i++)
    {
      Item *a = g->pdata[i];
      const char *acc;
      if (a->used || a->kind != ITEM_GLYPH)
        continue;
      if (is_accent_char (a->c, &acc))
        merge_accent (r, a, acc);
      else if (a->c == 0x0338 || a->c == 0x29F8 || a->c == '/' || (a->c == '6' && font_is_tex_symbols (a->font)))
        merge_not (r, a);
      else if (a->c == 0x2192 || a->c == 0x2190 || a->c == 0x21D2 || a->c == 0x21D0 || a->c == 0x2194 || a->c == 0x21D4)
        merge_arrow (r, a);
    }
}

/* The character a glyph's code stands for where Poppler's is not it (the
 * extension fonts' own slots, raw OMS codes); c otherwise. */
static gunichar
font_code_char (Reader *r, const Item *it, gunichar c)
{
  /* newtxmath's symbol font (txsys: the newtx and libertine set-ups) keeps
   * its math accents at codes 0x9E-0xAE (grave ... check, \dddot at 0xA8,
   * \vec at 0xAE: txsys.pfb's encoding), which come as Latin-1 (\vec{e}
   * read "e?" on development seed 1112, \hat's 0xA0 was a space). */
  static const gunichar tx_accents[] = { 0x0300, 0x0301, 0x0302, 0x0303, 0x0304, 0x0306, 0x0307, 0x0308,
                                         0x030A, 0x030C, 0x20DB, 0, 0, 0, 0, 0, 0x20D7 };

  if (c >= 0x9E && c <= 0xAE && tx_accents[c - 0x9E] != 0 && name_has (it->font, "^txsys$"))
    return tx_accents[c - 0x9E];
  /* Codes 0x20-0x2F of the extension font come as ASCII (Poppler has no
   * Unicode for braceleftBigg: a \Biggl\{ read as "("); the pieces of
   * taller delimiters as Adobe's private-use codes (fm-mathtext-align.c) */
  if (it->ext && adobe_piece_delim (c) != 0)
    c = adobe_piece_delim (c);
  /* and CMEX's display-size \bigcup ... \bigvee (0x5B-0x5F) as ASCII
   * punctuation: \biguplus read "]" */
  else if (it->ext && (c < 0x30 || (c < 0x80 && g_ascii_isalpha ((char) c)) ||
                       (c >= 0x5B && c <= 0x5F && name_has (it->font, "^(cmex|lmmathextension)"))))
    {
      gunichar m = cmex_char (c);
      /* the wide accents' slots are CMEX's (Latin Modern's is a copy);
       * newtx's txexs keeps other glyphs there ("(Y,p)" read
       * (Y,\widetilde{p}), tests/fixtures/pdf/cls-commas-newtx) */
      if ((m == 0x1DCD || m == 0x0360) && !name_has (it->font, "^(cmex|lmmathextension)"))
        m = 0;
      c = m != 0 ? m : 0xFFFD;
    }
  /* OMS-encoded symbol fonts (CMSY's layout) keep \surd at code 0x70:
   * one without ToUnicode comes raw as "p" (fourier's
   * Fourier-Math-Symbols: v=\sqrt{2a\Delta x} read with a "p" and an
   * \overline, fresh seed 1018 after it was scored). */
  else if (c == 'p' && (font_is_tex_symbols (it->font) || name_has (it->font, "^fourier-math-symbols")))
    c = 0x221A;
  else if (it->ext && c >= 0x80 && c <= 0xFF && fourier_mex_char (it->font, c) != 0)
    {
      /* its \Big and \bigg delimiters are one glyph (0xB3...), so the
       * size step read from the ink is not sure above \big */
      if (c >= 0xB3)
        uncertain (r, "fourier's sized delimiters: \\Big and \\bigg draw one glyph");
      c = fourier_mex_char (it->font, c);
    }
  else if (it->ext && c >= 0xC3 && c <= 0xDE && name_has (it->font, "^txexs$") &&
           (is_bigop_char (cmex_char (c - 0x7D)) || is_integral_char (cmex_char (c - 0x7D))))
    {
      /* newtxmath's txexs keeps CMEX's big operators (0x46-0x61: \bigodot
       * ... \coprod, text and display sizes) 0x7D codes up, where Poppler
       * reads Latin-1 (text-size \bigoplus as U+00C9, an unknown glyph:
       * tests/fixtures/pdf/mathtext-txexs.tex) */
      c = cmex_char (c - 0x7D);
    }
  else if (it->ext && c >= 0x80 && c <= 0xFF)
    {
      /* Latin-1 codes in an extension font are its own encoding's
       * slots, not characters: fourier's sized parentheses come as
       * U+00B5 and U+00B6 and had read as \mu ... \P, CERTAIN
       * (fresh seed 1003). Unknown: the reading is UNCERTAIN. */
      c = 0xFFFD;
    }
  return c;
}

/* The glyph's symbol token for constrained decoding: the innermost token of
 * its LaTeX (\mathbb{R} -> R). */
static char *
symbol_of (const char *tex)
{
  const char *open = strrchr (tex, '{');
  if (open != NULL && tex[0] == '\\' && strchr (open, '}') != NULL)
    return g_strndup (open + 1, strchr (open, '}') - open - 1);
  return g_strdup (tex);
}

/* A glyph of the page left out of the region whose box reaches into the
 * render around it (read_page draws 2 pt more on every side): its strokes
 * are in the pixels, and none of them is the formula's rule. */
static void
add_foreign (Reader *r, const FmRect *area, const FmRect *b)
{
  if (b->x1 < area->x0 - 2 || b->x0 > area->x1 + 2 || b->y1 < area->y0 - 2 || b->y0 > area->y1 + 2)
    return;
  g_array_append_val (r->foreign, *b);
}

static void
collect_glyphs (Reader *r, PopplerPage *page, const FmRect *area)
{
  /* The page's layer is read once, not once per formula (issue 15). */
  const FmTextLayer *tl = fm_document_get_text_layer_locked (page);
  const char *p;
  guint idx = 0, last_idx = 0;
  double area_h = area->y1 - area->y0;
  Item *last = NULL;   /* the glyph read from character last_idx */

  if (tl == NULL || tl->n_rects == 0)
    return;
  p = tl->text;
  for (; p != NULL && *p && idx < tl->n_rects; p = g_utf8_next_char (p), idx++)
    {
      gunichar c = g_utf8_get_char (p);
      PopplerRectangle *pr = &tl->rects[idx];
      FmRect b = { MIN (pr->x1, pr->x2), MIN (pr->y1, pr->y2), MAX (pr->x1, pr->x2), MAX (pr->y1, pr->y2) };
      PopplerTextAttributes *at = (glong) idx < tl->n_chars ? tl->attr_of[idx] : NULL;
      double ccx = 0.5 * (b.x0 + b.x1), ccy = 0.5 * (b.y0 + b.y1), tol = 1.0;
      gboolean punct = c == '.' || c == ',' || c == ';';
      Item *it;

      if ((g_unichar_isspace (c) && !(c == 0xA0 && at != NULL && name_has (fm_font_strip_subset (at->font_name), "^txsys$"))) ||
          c == 0)
        continue;
      /* A variation selector is no glyph: newtxmath's txexs maps its display
       * \sum to U+2211 U+FE01, and Poppler splits the glyph's box between
       * the two (libertine, development seed 1112: half a \sum and an
       * unknown glyph, its ink's bottom read as a rule). It widens the
       * glyph it follows. */
      if ((c >= 0xFE00 && c <= 0xFE0F) || (c >= 0xE0100 && c <= 0xE01EF))
        {
          if (last != NULL && last_idx + 1 == idx)
            {
              gboolean first = FALSE;
              union_box (&last->box, &b, &first);
              last_idx = idx;
            }
          continue;
        }
      /* A display's sentence punctuation ("x = 1 ."): TeX sets it right
       * after the formula, inside the math, but the detector leaves it out
       * of the box (it is text punctuation to it); the formula's source and
       * the image model's widened crop have it. The nearest glyph right of
       * the box, within an em and a half, on the box's lines.
       * Sentence punctuation whose centre is right of the box is the
       * sentence's, not the formula's, even within the tolerance below: an
       * inline "k" followed by its period (LuaLaTeX/Libertinus, seed 1010),
       * boxed by the detector to the k's edge. */
      if (r->want_trailing && ccx > area->x1 + (punct ? 0 : tol) && b.x0 < r->trailing_x &&
          b.x0 < area->x1 + 1.5 * (at ? at->font_size : b.y1 - b.y0) && ccy > area->y0 && ccy < area->y1)
        {
          r->trailing = c;
          r->trailing_x = b.x0;
        }
      if (ccx < area->x0 - tol || ccx > area->x1 + (punct ? 0 : tol))
        {
          /* the text around an inline formula gives the line's size */
          if (r->inline_region && at != NULL && at->font_size > 0 && ccy > area->y0 && ccy < area->y1 &&
              !g_unichar_isspace (c))
            g_array_append_val (r->line_sizes, at->font_size);
          add_foreign (r, area, &b);
          continue;
        }
      /* Type 1 radicals and extension-font glyphs hang below their box. */
      if (ccy < area->y0 - tol || ccy > area->y1 + tol)
        {
          /* pdfLaTeX's STIX Two boxes its big operators and delimiter
           * pieces high above their ink too (a display \prod's box ended
           * 2 pt above the formula's, development seed 1101). */
          PiecePart part;
          gboolean hanging = is_radical_char (c) || is_bigop_char (c) || is_integral_char (c) ||
                             (piece_delim (c, &part) != 0 && c >= 0x2320) ||
                             (at != NULL && fm_font_is_math_extension (at->font_name));
          double h = b.y1 - b.y0;
          if (!hanging || ccy + 0.75 * h < area->y0 || b.y0 > area->y1 || h > 3 * area_h + 20)
            {
              add_foreign (r, area, &b);
              continue;
            }
        }
      /* The relation colon of STIX Two (pdfLaTeX) and of unicode-math is
       * U+2236 RATIO, the \colon of both U+003A: read alike, the spacing
       * tells them apart. newtx's \star is named BLACK STAR (U+2605,
       * unicode-math's \bigstar). */
      if (c == 0x2236)
        c = ':';
      if (c == 0x2605 && at != NULL && name_has (fm_font_strip_subset (at->font_name), "^(newtxmi|ntxmi)"))
        c = 0x22C6;
      it = item_new (ITEM_GLYPH);
      it->c = c;
      it->font = g_strdup (fm_font_strip_subset (at ? at->font_name : ""));
      it->size = at ? at->font_size : b.y1 - b.y0;
      it->box = b;
      it->mid = ccy;
      /* fm_font_is_math_extension's "stix\w*ex" also matches STIXTwoText:
       * only math faces are read by the extension encoding. */
      it->ext = fm_font_is_math_extension (it->font) && fm_font_classify (it->font) == FM_FONT_MATH;
      c = it->c = font_code_char (r, it, c);
      /* Poppler names a font it has no name for (a Type 3 bitmap font from
       * Metafont) "Default"; its codes are not characters. */
      if (it->font[0] == 0 || strcmp (it->font, "Default") == 0 || strcmp (it->font, "[none]") == 0)
        {
          r->type3++;
          it->tex = NULL;
        }
      else
        it->tex = fm_mathtext_glyph_latex (c, it->font);
      it->style = (c < 0x80 && g_ascii_isalpha ((char) c)) ? font_letter_style (it->font, c) : STYLE_PLAIN;
      it->bigop = is_bigop_char (c);
      /* mathptmx draws \epsilon and \varepsilon with Adobe Symbol's one
       * epsilon (pdftotext gives U+03B5 for both) */
      if (c == 0x03B5 && name_has (it->font, "^standardsym|^symbol|^psyr|^usyr"))
        {
          /* Written as a glyph of unknown meaning, "?", which the pipeline
           * matches with any one symbol: with \varepsilon the model's right
           * \epsilon disagreed and a decode constrained to \varepsilon was
           * taken (development seed 1010, twice). */
          uncertain (r, "Adobe Symbol's epsilon: \\epsilon or \\varepsilon");
          g_free (it->tex);
          it->tex = g_strdup ("?");
        }
      if (it->tex != NULL && name_has (it->font, "^rsfs"))
        uncertain (r, "rsfs letters: \\mathscr, or \\mathcal under mathptmx");
      if (g_getenv ("FM_MATHTEXT_DEBUG") != NULL)
        g_printerr ("glyph U+%04X %s %.1fpt [%.1f %.1f %.1f %.1f] -> %s\n", c, it->font, it->size,
                    b.x0, b.y0, b.x1, b.y1, it->tex ? it->tex : "(unknown)");
      if (it->tex == NULL)
        r->unknown++;
      else
        it->symbol = symbol_of (it->tex);
      g_ptr_array_add (r->items, it);
      last = it;
      last_idx = idx;
    }
}

/* A letter that draws one piece of ink (not i, j, nor a fraktur or
 * double-struck letter, which may draw several). */
static gboolean
is_one_piece_letter (const Item *it)
{
  Style style = STYLE_PLAIN;
  char letter = 0;
  const char *greek = NULL;
  gunichar c = it->c;

  if (it->kind != ITEM_GLYPH || it->tex == NULL || it->ext || it->accented)
    return FALSE;
  if (c >= 0x1D400 && c <= 0x1D7FF)
    {
      if (!math_alphanumeric (c, &style, &letter, &greek) || (style != STYLE_PLAIN && style != STYLE_BF && style != STYLE_BOLDSYM))
        return FALSE;
      if (greek != NULL)
        return TRUE;
      c = (gunichar) letter;
    }
  if (c < 0x80)
    return g_ascii_isalpha ((char) c) && c != 'i' && c != 'j' && it->style != STYLE_FRAK && it->style != STYLE_BB;
  return (c >= 0x03B1 && c <= 0x03C9) || c == 0x2202;
}

/* XeTeX's and LuaTeX's accents over OpenType letters are combining marks
 * (U+20D7 for \vec, U+0304 for \bar) that Poppler's text layout may leave
 * out, and their ink lies inside the letter's box or touches it, so the ink
 * check above takes it for the letter's: \vec{a}e^{t} read ae^{t}, \bar{\partial}\psi read
 * \partial\psi, CERTAIN (development seeds 1100 and 1101, every OpenType
 * set-up). Above a one-piece letter's ink, inside its box, a white gap and
 * more ink that no other item's box holds is such an accent. */
static gboolean
ink_above_letter (Reader *r, const FmGrayImage *img, const FmRect *origin, double scale, const Item *g,
                  const FmRect *region)
{
  int x0 = MAX (0, (int) floor ((g->box.x0 - origin->x0) * scale));
  int x1 = MIN (img->width, (int) ceil ((g->box.x1 - origin->x0) * scale));
  /* up to a third of an em over the box (XeTeX's \bar over \partial sits
   * above it), not out of the region */
  int top = MAX (0, (int) floor ((MAX (g->box.y0 - 0.3 * g->size, region->y0) - origin->y0) * scale));
  int y = MIN (img->height - 1, (int) floor ((cy (g) - origin->y0) * scale));
  int state = 0, gap = 0;   /* 0 below the body, 1 in it, 2 in a gap above it */
  double scan_y0 = origin->y0 + top / scale;
  /* the other items over the scanned columns, once (a region may be a page) */
  g_autoptr (GPtrArray) near = g_ptr_array_new ();

  for (guint j = 0; j < r->items->len; j++)
    {
      const Item *o = r->items->pdata[j];
      if (o != g && o->kind != ITEM_WORD && o->box.x1 >= g->box.x0 && o->box.x0 <= g->box.x1 &&
          o->box.y1 + 1.0 / scale >= scan_y0 && o->box.y0 - 1.0 / scale <= cy (g) + 1.0 / scale)
        g_ptr_array_add (near, (gpointer) o);
    }
  for (; y >= top; y--)
    {
      gboolean ink = FALSE;
      double py = origin->y0 + (y + 0.5) / scale;
      for (int x = x0; x < x1 && !ink; x++)
        {
          double px = origin->x0 + (x + 0.5) / scale;
          gboolean other = FALSE;
          if (img->pixels[(gsize) y * img->stride + x] >= 128)
            continue;
          for (guint j = 0; j < near->len && !other; j++)
            {
              const Item *o = near->pdata[j];
              other = o->box.x0 <= px && px <= o->box.x1 && o->box.y0 - 1.0 / scale <= py &&
                      py <= o->box.y1 + 1.0 / scale;
            }
          ink = !other;
        }
      if (state == 0 && ink)
        state = 1;
      else if (state == 1 && !ink)
        state = 2, gap = 1;
      else if (state == 2 && !ink)
        gap++;
      else if (state == 2 && ink)
        return gap >= 2;
    }
  return FALSE;
}

static void
find_lost_accents (Reader *r, const FmGrayImage *img, const FmRect *origin, double scale, const FmRect *region)
{
  for (guint i = 0; i < r->items->len; i++)
    {
      const Item *g = r->items->pdata[i];
      if (!g->used && g->size >= 0.85 * r->em && is_one_piece_letter (g) && font_is_unicode_math (g->font) &&
          ink_above_letter (r, img, origin, scale, g, region))
        {
          uncertain (r, "ink over a letter (an accent the text layer lost?)");
          return;
        }
    }
}

/* ---- sized delimiters the text layer lost (fm-mathtext-delim.h) ---------- */

/* One connected piece of the render's ink: its pixels (y * width + x) and
 * their bounding box, x1 and y1 exclusive. */
typedef struct {
  GArray *pixels;
  int x0, y0, x1, y1;
} InkPiece;

/* The 8-connected ink from pixel seed, marking seen; stack: scratch of
 * width * height ints. */
static void
ink_piece_flood (const FmGrayImage *img, guint8 *seen, int *stack, int seed, InkPiece *p)
{
  int w = img->width, h = img->height, sp = 0;

  g_array_set_size (p->pixels, 0);
  p->x0 = p->x1 = seed % w;
  p->y0 = p->y1 = seed / w;
  seen[seed] = 1;
  stack[sp++] = seed;
  while (sp > 0)
    {
      int q = stack[--sp], qx = q % w, qy = q / w;
      g_array_append_val (p->pixels, q);
      p->x0 = MIN (p->x0, qx); p->x1 = MAX (p->x1, qx + 1);
      p->y0 = MIN (p->y0, qy); p->y1 = MAX (p->y1, qy + 1);
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
          {
            int nx = qx + dx, ny = qy + dy;
            if (nx < 0 || ny < 0 || nx >= w || ny >= h || seen[(gsize) ny * w + nx] ||
                img->pixels[(gsize) ny * img->stride + nx] >= 128)
              continue;
            seen[(gsize) ny * w + nx] = 1;
            stack[sp++] = ny * w + nx;
          }
    }
}

/* The piece as a mask of its bounding box (newly allocated). */
static guint8 *
ink_piece_mask (const InkPiece *p, int img_width, FmInkShape *shape)
{
  guint8 *mask = g_new0 (guint8, (gsize) (p->x1 - p->x0) * (p->y1 - p->y0));

  for (guint k = 0; k < p->pixels->len; k++)
    {
      int q = g_array_index (p->pixels, int, k);
      mask[(gsize) (q / img_width - p->y0) * (p->x1 - p->x0) + (q % img_width - p->x0)] = 1;
    }
  shape->mask = mask;
  shape->width = p->x1 - p->x0;
  shape->height = p->y1 - p->y0;
  return mask;
}

static gunichar
mirror_delim (gunichar c)
{
  static const gunichar pairs[][2] = { { '(', ')' }, { '[', ']' }, { '{', '}' }, { 0x27E8, 0x27E9 },
                                       { 0x230A, 0x230B }, { 0x2308, 0x2309 }, { '|', '|' }, { 0x2016, 0x2016 } };
  for (gsize k = 0; k < G_N_ELEMENTS (pairs); k++)
    if (pairs[k][0] == c || pairs[k][1] == c)
      return pairs[k][0] == c ? pairs[k][1] : pairs[k][0];
  return 0;
}

/* The delimiter that the text layer kept and whose mirror image `shape` is
 * (a \bigr) for a lost \bigl(), as its mirror; 0 if none. seen: w * h
 * bytes, all 0, left so; stack: w * h ints of scratch (the caller's, reused
 * rather than allocated per kept delimiter and candidate). */
static gunichar
lost_delim_partner (Reader *r, const FmGrayImage *img, const FmRect *origin, double scale, const FmInkShape *shape,
                    guint8 *seen, int *stack)
{
  int w = img->width, h = img->height;
  gunichar found = 0;
  InkPiece p = { g_array_new (FALSE, FALSE, sizeof (int)) };

  for (guint i = 0; i < r->items->len && found == 0; i++)
    {
      Item *it = r->items->pdata[i];
      int x0 = MAX (0, (int) floor ((it->box.x0 - origin->x0) * scale));
      int x1 = MIN (w, (int) ceil ((it->box.x1 - origin->x0) * scale));
      int y = (int) floor ((cy (it) - origin->y0) * scale);

      if (it->kind != ITEM_GLYPH || !it->ext || it->used || mirror_delim (it->c) == 0 || y < 0 || y >= h ||
          fabs ((it->box.y1 - it->box.y0) * scale - shape->height) > 2)
        continue;
      /* the partner's ink: the piece its middle row crosses */
      g_array_set_size (p.pixels, 0);
      for (int x = x0; x < x1 && p.pixels->len == 0; x++)
        if (img->pixels[(gsize) y * img->stride + x] < 128)
          ink_piece_flood (img, seen, stack, y * w + x, &p);
      if (p.pixels->len > 0)
        {
          FmInkShape theirs;
          g_autofree guint8 *mask = ink_piece_mask (&p, w, &theirs);
          if (fm_mathtext_delim_mirrors (shape, &theirs))
            found = mirror_delim (it->c);
          for (guint k = 0; k < p.pixels->len; k++)
            seen[g_array_index (p.pixels, int, k)] = 0;
        }
    }
  g_array_unref (p.pixels);
  return found;
}

/* Two bars side by side, as tall as each other: one \| (CMEX draws the
 * sized \| as one glyph of two strokes, 0.19 em apart: at most a tenth of
 * the smallest one's height; not measured in the region's em, which a
 * script-size fraction makes small). */
static void
pair_lost_bars (Reader *r, GPtrArray *lost)
{
  for (guint i = 0; i < lost->len; i++)
    for (guint j = 0; j < lost->len; j++)
      {
        Item *a = lost->pdata[i], *b = lost->pdata[j];
        double ha = a->box.y1 - a->box.y0, hb = b->box.y1 - b->box.y0;
        gboolean first = FALSE;
        if (a == b || a->used || b->used || a->c != '|' || b->c != '|' || b->box.x0 < a->box.x1 ||
            b->box.x0 - a->box.x1 > 0.15 * MIN (ha, hb) || fabs (ha - hb) > 0.05 * MAX (ha, hb) ||
            fabs (a->box.y0 - b->box.y0) > 0.05 * MAX (ha, hb))
          continue;
        union_box (&a->box, &b->box, &first);
        a->c = 0x2016;
        a->by_shape = a->by_shape || b->by_shape;
        b->used = TRUE;
      }
  /* Bars left close together unpaired: \| or | | cannot be told. */
  for (guint i = 0; i < lost->len; i++)
    for (guint j = 0; j < lost->len; j++)
      {
        Item *a = lost->pdata[i], *b = lost->pdata[j];
        if (a != b && !a->used && !b->used && a->c == '|' && b->c == '|' && b->box.x0 >= a->box.x1 &&
            b->box.x0 - a->box.x1 <= 0.3 * MIN (a->box.y1 - a->box.y0, b->box.y1 - b->box.y0))
          uncertain (r, "two bars side by side (\\| or | |?)");
      }
}

/* Which pixels of the render lie in a glyph's box (any item's but a rule's),
 * by the test lost_delim_candidate made per pixel and item: a pixel's
 * centre inside the box, edges included. The test is one of x and one of y,
 * so each box fills the rectangle of its passing columns and rows. */
static guint8 *
glyph_box_mask (Reader *r, const FmGrayImage *img, const FmRect *origin, double scale)
{
  int w = img->width, h = img->height;
  guint8 *mask = g_new0 (guint8, (gsize) w * h);

  for (guint i = 0; i < r->items->len; i++)
    {
      const Item *it = r->items->pdata[i];
      int x0 = w, x1 = -1, y0 = h, y1 = -1;
      if (it->kind == ITEM_RULE)
        continue;
      /* a pixel off the computed edge either way, tested exactly */
      for (int x = MAX (0, (int) floor ((it->box.x0 - origin->x0) * scale) - 1);
           x < MIN (w, (int) ceil ((it->box.x1 - origin->x0) * scale) + 1); x++)
        {
          double px = origin->x0 + (x + 0.5) / scale;
          if (px >= it->box.x0 && px <= it->box.x1)
            x0 = MIN (x0, x), x1 = MAX (x1, x);
        }
      for (int y = MAX (0, (int) floor ((it->box.y0 - origin->y0) * scale) - 1);
           y < MIN (h, (int) ceil ((it->box.y1 - origin->y0) * scale) + 1); y++)
        {
          double py = origin->y0 + (y + 0.5) / scale;
          if (py >= it->box.y0 && py <= it->box.y1)
            y0 = MIN (y0, y), y1 = MAX (y1, y);
        }
      for (int y = y0; y <= y1; y++)
        memset (mask + (gsize) y * w + x0, 1, x1 >= x0 ? x1 - x0 + 1 : 0);
    }
  return mask;
}

/* Whether a piece of ink is a delimiter's that no glyph holds: taller than
 * the normal delimiters (TeX's \big is 1.2 em), narrow, and hardly inside
 * any glyph's box (a glyph's own ink is, a big operator's and a radical's
 * once fitted to it). *in_box: glyph_box_mask's, made at the first piece
 * tall and narrow enough (a region's pixels times its items was the cost). */
static gboolean
lost_delim_candidate (Reader *r, const InkPiece *p, const FmGrayImage *img, const FmRect *origin, double scale,
                      guint8 **in_box)
{
  double h = (p->y1 - p->y0) / scale, w = (p->x1 - p->x0) / scale;
  long inside = 0;

  if (h < 1.05 * r->em || w > 0.8 * r->em || h < 2 * w)
    return FALSE;
  if (*in_box == NULL)
    *in_box = glyph_box_mask (r, img, origin, scale);
  for (guint k = 0; k < p->pixels->len; k++)
    inside += (*in_box)[g_array_index (p->pixels, int, k)];
  return inside <= 0.2 * p->pixels->len;
}

/* The points from a delimiter's side (dir 1: its right, -1: its left) to
 * the first ink beside it within its rows, up to `reach`; G_MAXDOUBLE when
 * none is that close. */
static double
ink_gap (const FmGrayImage *img, const FmRect *origin, double scale, const FmRect *box, int dir, double reach)
{
  int y0 = MAX (0, (int) floor ((box->y0 - origin->y0) * scale));
  int y1 = MIN (img->height, (int) ceil ((box->y1 - origin->y0) * scale));
  int edge = dir > 0 ? (int) ceil ((box->x1 - origin->x0) * scale) : (int) floor ((box->x0 - origin->x0) * scale) - 1;
  int steps = (int) ceil (reach * scale);

  for (int k = 0; k < steps; k++)
    {
      int x = edge + dir * k;
      if (x < 0 || x >= img->width)
        break;
      for (int y = y0; y < y1; y++)
        if (img->pixels[(gsize) y * img->stride + x] < 128)
          return k / scale;
    }
  return G_MAXDOUBLE;
}

/* Whether a delimiter found by its shape alone (no kept partner mirrors its
 * ink) is one: it must be one of a mirrored pair of one height and top (the
 * other kept by the text layer or found too) with ink close inside both.
 * A shape is not a glyph: an array's column rule (\begin{array}{c|c}), a
 * \vrule or a drawn line draws a bar too, and read as one it was a CERTAIN
 * \left|. Between a delimiter and what it encloses TeX puts its side
 * bearing and at most \nulldelimiterspace (about 0.3 em in all); an array
 * puts \arraycolsep (5 pt at every size, 0.5 em at 10 pt) between its rules
 * and columns. At least 4 pt: a region of script glyphs alone (an inline
 * \left\|\frac{a^2}{x+1}\right\|, tests/fixtures/pdf/cls-spacing.pdf) has a
 * script-sized em, and the gaps are the text size's. */
static gboolean
shape_find_paired (Reader *r, GPtrArray *lost, const Item *it, const FmGrayImage *img, const FmRect *origin,
                   double scale)
{
  /* At most 4.5 pt: \arraycolsep stays 5 pt when the type grows, so
   * 0.38 em alone would reach an array's rules from about 13 pt up. */
  double h = it->box.y1 - it->box.y0, reach = MIN (MAX (0.38 * r->em, 4.0), 4.5);

  for (int from = 0; from < 2; from++)
    {
      GPtrArray *list = from == 0 ? lost : r->items;
      for (guint i = 0; i < list->len; i++)
        {
          const Item *o = list->pdata[i], *left, *right;
          double gl, gr, ho = o->box.y1 - o->box.y0, tol = MAX (0.05 * MAX (h, ho), 2.0 / scale);
          if (o == it || o->used || o->kind != ITEM_GLYPH || !o->ext || o->c != mirror_delim (it->c) ||
              fabs (ho - h) > tol || fabs (o->box.y0 - it->box.y0) > tol)
            continue;
          left = o->box.x0 < it->box.x0 ? o : it;
          right = left == o ? it : o;
          if (open_delim (left->c) == NULL || close_delim (right->c) == NULL || right->box.x0 <= left->box.x1)
            continue;
          /* the ink just inside each lies between them */
          gl = ink_gap (img, origin, scale, &left->box, 1, r->em);
          gr = ink_gap (img, origin, scale, &right->box, -1, r->em);
          if (g_getenv ("FM_MATHTEXT_DEBUG") != NULL)
            g_printerr ("shape pair U+%04X U+%04X: ink inside %.2f / %.2f em\n", left->c, right->c, gl / r->em,
                        gr / r->em);
          if (gl <= reach && gr <= reach && gl < right->box.x0 - left->box.x1 && gr < right->box.x0 - left->box.x1)
            return TRUE;
        }
    }
  return FALSE;
}

/* Sized delimiters whose codes the text layer dropped (fm-mathtext-delim.h),
 * from the tall narrow pieces of ink inside the region that no glyph holds:
 * the mirror of a kept partner, else the delimiter its shape draws. Each
 * becomes an extension-font glyph, so the line parser sizes it (\bigl or
 * \left) like the ones the text layer kept. Unrecognised ink stays
 * unexplained (the reading is not certain), and so does a shape without a
 * pair (shape_find_paired). */
static void
find_lost_delimiters (Reader *r, const FmGrayImage *img, const FmRect *origin, double scale, const FmRect *region)
{
  int w = img->width, h = img->height;
  g_autofree guint8 *seen = g_new0 (guint8, (gsize) w * h);
  g_autofree guint8 *partner_seen = NULL;
  g_autofree guint8 *in_box = NULL;
  g_autofree int *stack = g_new (int, (gsize) w * h);
  g_autoptr (GPtrArray) lost = g_ptr_array_new ();
  InkPiece p = { g_array_new (FALSE, FALSE, sizeof (int)) };
  int rx0 = MAX (0, (int) floor ((region->x0 - origin->x0) * scale));
  int ry0 = MAX (0, (int) floor ((region->y0 - origin->y0) * scale));
  int rx1 = MIN (w, (int) ceil ((region->x1 - origin->x0) * scale));
  int ry1 = MIN (h, (int) ceil ((region->y1 - origin->y0) * scale));
  const char *font = "CMEX10";
  double size = r->em;

  for (guint i = 0; i < r->items->len; i++)
    {
      const Item *it = r->items->pdata[i];
      if (it->ext)
        font = it->font, size = it->size;
      /* lmodern keeps its extension font at 10 pt (glyph_size_step) */
      else if (g_strcmp0 (font, "CMEX10") == 0 && it->font != NULL && name_has (it->font, "^lm(roman|math)"))
        font = "LMMathExtension10-Regular", size = MIN (r->em, 10.0);
    }
  for (int y = ry0; y < ry1; y++)
    for (int x = rx0; x < rx1; x++)
      {
        FmInkShape shape;
        g_autofree guint8 *mask = NULL;
        gunichar d;
        Item *it;
        if (seen[(gsize) y * w + x] || img->pixels[(gsize) y * img->stride + x] >= 128)
          continue;
        ink_piece_flood (img, seen, stack, y * w + x, &p);
        if (!lost_delim_candidate (r, &p, img, origin, scale, &in_box))
          continue;
        mask = ink_piece_mask (&p, w, &shape);
        if (partner_seen == NULL)
          partner_seen = g_new0 (guint8, (gsize) w * h);
        d = lost_delim_partner (r, img, origin, scale, &shape, partner_seen, stack);
        it = item_new (ITEM_GLYPH);
        if (d == 0)
          {
            d = fm_mathtext_delim_shape (&shape, r->em * scale);
            it->by_shape = TRUE;
          }
        if (g_getenv ("FM_MATHTEXT_DEBUG") != NULL)
          g_printerr ("lost delimiter? %dx%d px at %.1f %.1f: U+%04X%s\n", shape.width, shape.height,
                      origin->x0 + p.x0 / scale, origin->y0 + p.y0 / scale, d, it->by_shape ? " (shape)" : "");
        if (d == 0)
          {
            item_free (it);
            continue;
          }
        it->c = d;
        it->font = g_strdup (font);
        it->size = size;
        it->box = (FmRect) { origin->x0 + p.x0 / scale, origin->y0 + p.y0 / scale,
                             origin->x0 + p.x1 / scale, origin->y0 + p.y1 / scale };
        it->ext = TRUE;
        g_ptr_array_add (lost, it);
      }
  g_array_unref (p.pixels);
  pair_lost_bars (r, lost);
  for (guint i = 0; i < lost->len; i++)
    {
      Item *it = lost->pdata[i];
      if (!it->used && it->by_shape && !shape_find_paired (r, lost, it, img, origin, scale))
        uncertain (r, "a sized delimiter read from its shape alone, without a pair around content");
    }
  for (guint i = 0; i < lost->len; i++)
    {
      Item *it = lost->pdata[i];
      if (it->used)
        {
          item_free (it);
          continue;
        }
      it->mid = cy (it);
      it->tex = fm_mathtext_glyph_latex (it->c, it->font);
      it->symbol = symbol_of (it->tex);
      g_ptr_array_add (r->symbols, g_strdup (it->symbol));
      g_ptr_array_add (r->items, it);
    }
}

/* Ink inside the region that is neither a rule nor connected to ink inside
 * a glyph's box, in square points: a delimiter or symbol drawn as a path, an
 * image, a glyph the text layer lost (CMEX's \Big| can come without a
 * text-layer glyph, LuaTeX's \hat over an OpenType letter without one). The
 * text would read fine without it and be wrong. Connected ink, not a padded
 * box, because Poppler's boxes come from the font's ascent and descent, which
 * some fonts understate (MSBM10's R pokes 0.2 em above its box), while an
 * accent sits just as close above its letter but apart from it. */
static double
ink_outside_glyphs (Reader *r, const FmGrayImage *img, const FmRect *origin, double scale, const FmRect *region)
{
  int w = img->width, h = img->height;
  guint8 *covered = g_new0 (guint8, (gsize) w * h);
  int *stack = g_new (int, (gsize) w * h);
  long count = 0;
  double pad = 0.08 * r->em;
  int rx0 = MAX (0, (int) floor ((region->x0 - origin->x0) * scale));
  int ry0 = MAX (0, (int) floor ((region->y0 - origin->y0) * scale));
  int rx1 = MIN (w, (int) ceil ((region->x1 - origin->x0) * scale));
  int ry1 = MIN (h, (int) ceil ((region->y1 - origin->y0) * scale));

#define INK(X, Y) (img->pixels[(gsize) (Y) * img->stride + (X)] < 128)
  for (guint i = 0; i < r->items->len; i++)
    {
      Item *it = r->items->pdata[i];
      double p = it->kind == ITEM_RULE ? 1.0 / scale : pad;
      int x0 = MAX (0, (int) floor ((it->box.x0 - p - origin->x0) * scale));
      int y0 = MAX (0, (int) floor ((it->box.y0 - 1.0 / scale - origin->y0) * scale));
      int x1 = MIN (w, (int) ceil ((it->box.x1 + p - origin->x0) * scale));
      int y1 = MIN (h, (int) ceil ((it->box.y1 + 1.0 / scale - origin->y0) * scale));
      for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++)
          {
            int sp = 0;
            if (covered[(gsize) y * w + x] || !INK (x, y))
              continue;
            covered[(gsize) y * w + x] = 1;
            if (it->kind == ITEM_RULE)
              continue;
            /* Everything connected to the glyph's ink is the glyph's. */
            stack[sp++] = y * w + x;
            while (sp > 0)
              {
                int q = stack[--sp], qx = q % w, qy = q / w;
                for (int dy = -1; dy <= 1; dy++)
                  for (int dx = -1; dx <= 1; dx++)
                    {
                      int nx = qx + dx, ny = qy + dy;
                      if (nx < 0 || ny < 0 || nx >= w || ny >= h || covered[(gsize) ny * w + nx] || !INK (nx, ny))
                        continue;
                      covered[(gsize) ny * w + nx] = 1;
                      stack[sp++] = ny * w + nx;
                    }
              }
          }
    }
  for (int y = ry0; y < ry1; y++)
    for (int x = rx0; x < rx1; x++)
      if (INK (x, y) && !covered[(gsize) y * w + x])
        {
          count++;
          if (g_getenv ("FM_MATHTEXT_DEBUG") != NULL && count % 20 == 1)
            g_printerr ("  uncovered ink at %.1f %.1f\n", origin->x0 + x / scale, origin->y0 + y / scale);
        }
#undef INK
  g_free (stack);
  g_free (covered);
  if (g_getenv ("FM_MATHTEXT_DEBUG") != NULL)
    g_printerr ("ink outside glyphs: %.2f pt^2\n", count / (scale * scale));
  return count / (scale * scale);
}

/* Poppler boxes a glyph by its font's ascent and descent (about one em
 * tall); where its layout took two lines for one (an inline \frac under
 * \linespread{0.85}: numerator and denominator boxed alike, 1.95 of their
 * size tall, x 0.1 pt wide) the boxes say nothing of where the glyphs
 * stand, and "\overline{xy}" was read, certain. Extension glyphs are
 * boxed below their ink anyway and are fitted to it. */
static void
check_glyph_boxes (Reader *r)
{
  for (guint i = 0; i < r->items->len; i++)
    {
      Item *it = r->items->pdata[i];
      if (it->kind == ITEM_GLYPH && !it->ext && it->size > 0 && it->box.y1 - it->box.y0 > 1.6 * it->size)
        {
          uncertain (r, "a glyph box taller than its font (Poppler's layout merged lines)");
          return;
        }
    }
}

/* The region's glyphs and a render of its ink, with a margin for hanging
 * glyphs and rules at its edge: fraction bars and vinculums are not in the
 * text layer. On return *area is the area the render's pixels cover. */
static gboolean
read_page (Reader *r, FmDocument *doc, const FmRegion *region, FmRect *area, double *scale,
           FmGrayImage **img, GError **error)
{
  PopplerPage *page;

  fm_document_lock (doc);
  page = fm_document_get_page_locked (doc, region->page, error);
  if (page == NULL)
    {
      fm_document_unlock (doc);
      return FALSE;
    }
  r->want_trailing = region->kind == FM_REGION_DISPLAY;
  r->inline_region = region->kind == FM_REGION_INLINE;
  r->trailing_x = G_MAXDOUBLE;
  collect_glyphs (r, page, area);
  {
    FmRect ink_area = { area->x0 - 2, area->y0 - 2, area->x1 + 2, area->y1 + 2 };
    cairo_surface_t *s;
    double pw, ph;
    poppler_page_get_size (page, &pw, &ph);
    ink_area.x0 = MAX (ink_area.x0, 0); ink_area.y0 = MAX (ink_area.y0, 0);
    ink_area.x1 = MIN (ink_area.x1, pw); ink_area.y1 = MIN (ink_area.y1, ph);
    /* 6 px/pt resolves 0.4 pt rules well; a big region (a whole page)
     * gets at most 4 Mpixels, still over 2.8 px/pt on a letter page. */
    *scale = MIN (*scale, sqrt (4.0e6 / MAX (1.0, (ink_area.x1 - ink_area.x0) * (ink_area.y1 - ink_area.y0))));
    *scale = MIN (*scale, fm_render_fit_scale (ink_area.x1 - ink_area.x0, ink_area.y1 - ink_area.y0, *scale));
    /* A crop of the page drawn once at this scale (fm-render.h), not a
     * render of its own: ink_area becomes the area its pixels cover. */
    s = (ink_area.x1 > ink_area.x0 && ink_area.y1 > ink_area.y0)
        ? fm_render_page_crop_locked (page, &ink_area, *scale, &ink_area, NULL) : NULL;
    if (s != NULL)
      {
        *img = fm_gray_image_new_from_surface (s);
        cairo_surface_destroy (s);
      }
    *area = ink_area;
  }
  g_object_unref (page);
  fm_document_unlock (doc);
  return TRUE;
}

/* UNAVAILABLE when the region has no glyphs or most have no meaning (a
 * Type 3 bitmap font, codes without ToUnicode): sets res and returns TRUE. */
static gboolean
read_unavailable (Reader *r, FmMathTextResult *res)
{
  int n_glyphs = 0;

  for (guint i = 0; i < r->items->len; i++)
    if (((Item *) r->items->pdata[i])->size > 0)
      n_glyphs++;
  if (n_glyphs == 0)
    {
      res->verdict = FM_MATHTEXT_UNAVAILABLE;
      res->reason = g_strdup ("no glyphs in the text layer (an image, Type 3 or no text)");
      return TRUE;
    }
  if (r->unknown * 2 > n_glyphs)
    {
      res->verdict = FM_MATHTEXT_UNAVAILABLE;
      res->reason = r->type3 * 2 > n_glyphs
                    ? g_strdup_printf ("%d of %d glyphs are in an unnamed Type 3 font", r->type3, n_glyphs)
                    : g_strdup_printf ("%d of %d glyphs have no Unicode meaning (no ToUnicode)",
                                       r->unknown, n_glyphs);
      return TRUE;
    }
  return FALSE;
}

/* ---- extensible delimiters from their pieces ------------------------------ */

static gboolean
piece_fits (gunichar d, gunichar e)
{
  return d == e || (d == '{' && e == '}') || (d == '}' && e == '{') || (d == '|' && e == 0x23D0);
}

/* Pieces stacked in one column, each touching the next (Poppler's boxes,
 * ascent to descent, overlap), become one sized delimiter: a bracket or
 * parenthesis needs its top and bottom, a brace also its middle; bars need
 * two or more copies whose centres differ (one printed twice over itself
 * is \pmb, merge_sequences). */
typedef struct {
  Reader *r;
  gunichar d;   /* the seed's delimiter */
} PieceJoin;

static const FmRect *
piece_box (gpointer data, guint j)
{
  return &((Item *) ((PieceJoin *) data)->r->items->pdata[j])->box;
}

static gboolean
piece_join (gpointer data, guint j)
{
  const PieceJoin *pj = data;
  const Item *b = pj->r->items->pdata[j];
  PiecePart bp;

  return !b->used && b->kind == ITEM_GLYPH && piece_fits (pj->d, piece_delim (b->c, &bp));
}

static void
merge_extensible (Reader *r)
{
  g_autoptr (GPtrArray) col = g_ptr_array_new ();
  g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (guint));

  for (guint i = 0; i < r->items->len; i++)
    {
      Item *a = r->items->pdata[i], *low = a;
      PiecePart part;
      gunichar d = piece_delim (a->c, &part);
      gboolean top = FALSE, mid = FALSE, bottom = FALSE;
      gboolean first = FALSE;
      PieceJoin pj = { r, d };
      /* Poppler boxes each piece at the font's ascent and descent around
       * where TeX set it, so the boxes of STIX Two's pieces can be apart
       * (2.8 pt at 10.9 pt on development seed 1101); copies of a bar are
       * only stacked where they touch (two lines' bars are apart). */
      FmPieceStack ps = { piece_box, piece_join, &pj, r->items->len,
                          d == '|' || d == 0x2016 ? 0.05 * r->em : 0.6 * r->em, FALSE };
      double span;

      if (a->used || a->kind != ITEM_GLYPH || d == 0 || fm_font_classify (a->font) != FM_FONT_MATH)
        continue;
      g_array_set_size (stack, 1);
      g_array_index (stack, guint, 0) = i;
      fm_mathtext_grow_stack (&ps, stack);
      g_ptr_array_set_size (col, 0);
      for (guint k = 0; k < stack->len; k++)
        g_ptr_array_add (col, r->items->pdata[g_array_index (stack, guint, k)]);
      if (col->len < 2)
        continue;
      span = 0;
      for (guint k = 0; k < col->len; k++)
        {
          Item *c = col->pdata[k];
          piece_delim (c->c, &part);
          top |= part == PIECE_TOP;
          mid |= part == PIECE_MID;
          bottom |= part == PIECE_BOTTOM;
          span = MAX (span, fabs (c->mid - a->mid));
          if (c->box.y1 > low->box.y1)
            low = c;
        }
      if ((d == '|' || d == 0x2016) ? span < 0.2 * a->size : !(top && bottom && (mid || (d != '{' && d != '}'))))
        continue;
      /* Which brace: the middle piece says (the extender is shared). */
      if (d == '{' || d == '}')
        for (guint k = 0; k < col->len; k++)
          {
            Item *c = col->pdata[k];
            gunichar e = piece_delim (c->c, &part);
            if (part == PIECE_MID)
              d = e;
          }
      for (guint k = 0; k < col->len; k++)
        {
          Item *c = col->pdata[k];
          if (c == low)
            continue;
          union_box (&low->box, &c->box, &first);
          c->used = TRUE;
          if (c->tex == NULL)
            r->unknown--;
          g_clear_pointer (&c->symbol, g_free);
        }
      if (low->tex == NULL)
        r->unknown--;
      low->c = d;
      g_free (low->tex);
      low->tex = fm_mathtext_glyph_latex (d, low->font);
      g_free (low->symbol);
      low->symbol = low->tex != NULL ? symbol_of (low->tex) : NULL;
      if (low->tex == NULL)
        r->unknown++;
      /* A sized delimiter (an integral's ink is fitted as an integral's). */
      low->ext = d != 0x222B;
      low->mid = cy (low);
    }
}

/* The region's main size: the largest size held by at least a third of
 * its glyphs would be better; the median is robust enough for now. */
static double
read_main_size (Reader *r)
{
  g_autofree double *v = g_new (double, r->items->len);
  int k = 0;
  for (guint i = 0; i < r->items->len; i++)
    v[k++] = ((Item *) r->items->pdata[i])->size;
  for (int a = 0; a < k; a++)
    for (int b = a + 1; b < k; b++)
      if (v[b] > v[a]) { double t = v[a]; v[a] = v[b]; v[b] = t; }
  return v[0];
}

/* A relation struck through by \not whose slash has no text-layer glyph:
 * pdfLaTeX's CMSY negation slash (code 0x36, zero width) is missing from
 * Poppler's layer, so "\neq" came as a bare "=" and its ink, inside the
 * "=" glyph's box, passed the ink check (development seed 1103: 0 = \lim
 * ... \neq \lim ... read CERTAIN with "=" on CM, LM and Times). Short
 * relations (=, \equiv, \sim, \approx, \in, <, >: ink under 0.6 em
 * tall) whose columns hold one unbroken ink run of 0.75 em or more are
 * struck through: TeX's slash spans the whole 1 em box, the bars of "="
 * are a thin stroke each. */
static gboolean
is_short_relation (gunichar c)
{
  return c == '=' || c == '<' || c == '>' || c == 0x2261 || c == 0x223C || c == 0x2248 ||
         c == 0x2243 || c == 0x2245 || c == 0x2208;
}

static void
find_struck_relation (Reader *r, const FmGrayImage *img, const FmRect *area, double scale, Item *it)
{
  FmRect fit;
  char *t;

  if (it->kind != ITEM_GLYPH || it->used || it->tex == NULL || !is_short_relation (it->c) ||
      g_str_has_prefix (it->tex, "\\not") || strcmp (it->tex, "\\neq") == 0 ||
      !ink_column_extent (img, area, scale, &it->box, &fit))
    return;
  if (g_getenv ("FM_MATHTEXT_DEBUG") != NULL)
    g_printerr ("relation U+%04X ink [%.1f %.1f] box [%.1f %.1f]\n", it->c, fit.y0, fit.y1, it->box.y0, it->box.y1);
  /* ink_column_extent reads the middle 80 % of the columns: a neighbour's
   * overhang stays out, the slash (centred in the relation) is in */
  if (fit.y1 - fit.y0 < 0.75 * it->size || fit.y0 < it->box.y0 - 0.1 * it->size || fit.y1 > it->box.y1 + 0.1 * it->size)
    return;
  t = it->c == '=' ? g_strdup ("\\neq") : it->c == 0x2208 ? g_strdup ("\\notin")
      : g_strdup_printf ("\\not%s%s", g_ascii_isalpha (it->tex[0]) ? " " : "", it->tex);
  g_free (it->tex);
  it->tex = t;
  g_ptr_array_add (r->symbols, g_strdup ("\\not"));
}

/* After merge_pieces: a relation that took in its \not glyph is done. */
static void
find_struck_relations (Reader *r, const FmGrayImage *img, const FmRect *area, double scale)
{
  if (img == NULL)
    return;
  for (guint i = 0; i < r->items->len; i++)
    find_struck_relation (r, img, area, scale, r->items->pdata[i]);
}

/* An integral sign slants right past its advance width: CMEX's display
 * \int (2.2 em tall, 0.56 em wide) has its upper half right of its box's
 * middle columns, and its ink there read from 0.95 em below its top
 * (an inline \displaystyle\int_R f became two lines, f above "\int R";
 * tests/fixtures/pdf/cls-inlinestyle-cm.pdf). The columns up to 0.6 of its
 * width right of the box, where they find a taller run (its script beside
 * it lies within its height), up to the first glyph or rule right of it
 * that is not a script, and a run that overlaps the glyph's own ink: the
 * widened columns took in a \biggl( or a \dfrac kerned under a
 * text-style integral (\int\!\dfrac{a}{b}: LM Math, STIX Two Math;
 * \int\!\!\biggl(: newtx, libertine, read CERTAIN \displaystyle\int;
 * review of reader12q, tests/fixtures/pdf/cls-dispstyle-*.pdf). */
static void
slanted_integral_ink (const FmGrayImage *img, const FmRect *area, double scale, const GPtrArray *items, const Item *it,
                      FmRect *fit)
{
  FmRect wide = it->box, more;

  wide.x1 += 0.6 * (it->box.x1 - it->box.x0);
  for (guint i = 0; i < items->len; i++)
    {
      const Item *o = items->pdata[i];
      if (o != it && o->box.x0 > it->box.x0 + 0.5 * (it->box.x1 - it->box.x0) && o->box.x0 < wide.x1 &&
          (o->kind == ITEM_RULE || o->size >= 0.85 * it->size) && o->box.y0 < it->box.y1 && o->box.y1 > it->box.y0)
        wide.x1 = o->box.x0;
    }
  /* a neighbour kerned over the slant's columns: the box's own middle
   * columns may hold only the lower part of the ink (LM Math's
   * \int\!\!\biggl( read "\intfdx", its delimiters lost); the text-size
   * box then, not a part of the glyph */
  if (wide.x1 <= it->box.x1)
    {
      if (fit->y1 - fit->y0 < 0.9 * it->size)
        {
          fit->y0 = MIN (fit->y0, it->box.y0);
          fit->y1 = MAX (fit->y1, it->box.y1);
        }
      return;
    }
  if (ink_column_extent (img, area, scale, &wide, &more) && more.y1 - more.y0 > fit->y1 - fit->y0 &&
      more.y0 < fit->y1 && more.y1 > fit->y0)
    {
      fit->y0 = more.y0;
      fit->y1 = more.y1;
    }
}

/* Radicals, big operators, extension-font glyphs and math delimiters get
 * boxes from their ink (TeX's hang below their Poppler box); every glyph's
 * symbol goes to r->symbols. */
static void
fit_items_to_ink (Reader *r, const FmGrayImage *img, const FmRect *area, double scale, const FmRect *region)
{
  for (guint i = 0; i < r->items->len; i++)
    {
      Item *it = r->items->pdata[i];
      FmRect fit;
      gboolean delim = it->kind == ITEM_GLYPH && !it->ext && (open_delim (it->c) != NULL || close_delim (it->c) != NULL) &&
                       fm_font_classify (it->font) == FM_FONT_MATH;
      if (img != NULL && (it->ext || is_radical_char (it->c) || it->bigop || is_integral_char (it->c) || delim) &&
          ink_column_extent (img, area, scale, &it->box, &fit))
        {
          /* OpenType math fonts keep their sized delimiters in the same
           * font at the same code: a delimiter taller than 1.05 em is one.
           * Measured ink of ( and \bigl( at 10.9 pt (seed 412): Latin
           * Modern Math 0.99 / 1.08 em, STIX Two Math 0.94 / 1.17,
           * Libertinus Math 0.90 / 1.16. */
          if (delim && fit.y1 - fit.y0 > 1.05 * it->size)
            it->ext = TRUE;
          if (is_integral_char (it->c))
            slanted_integral_ink (img, area, scale, r->items, it, &fit);
          if (!delim || it->ext)
            {
              it->box = fit;
              it->mid = cy (it);
            }
          /* Ink that runs out of the region: the detector's box cut
           * through a tall glyph (the render has 2 pt of margin), and what stood beyond it (a big
           * operator's limit, a line) is not in the reading (development
           * seed 1101: a \left( built from pieces whose top and the
           * limits above it were outside the box). */
          if (!it->used && (fit.y0 < region->y0 - 0.1 * it->size || fit.y1 > region->y1 + 0.1 * it->size))
            uncertain (r, "a glyph's ink crosses the region's edge");
          if (g_getenv ("FM_MATHTEXT_DEBUG") != NULL)
            g_printerr ("ink fit U+%04X [%.1f %.1f %.1f %.1f]\n", it->c, fit.x0, fit.y0, fit.x1, fit.y1);
        }
      if (it->symbol != NULL)
        g_ptr_array_add (r->symbols, g_strdup (it->symbol));
    }
}

/* A script outside tex's first \dfrac{..}{..} (at any depth). A
 * backslash's next character is a command's, never a group's brace or a
 * script: \{ and \} (the reader's set braces) and \_ leave the count alone. */
static gboolean
script_beside_dfrac (const char *tex)
{
  const char *d = strstr (tex, "\\dfrac{");
  const char *e;
  int depth = 0, groups = 0;

  if (d == NULL)
    return FALSE;
  for (e = d + 6; *e != 0 && groups < 2; e++)
    {
      if (*e == '\\' && e[1] != 0)
        {
          e++;
          continue;
        }
      depth += *e == '{';
      depth -= *e == '}';
      groups += *e == '}' && depth == 0;
    }
  for (const char *q = tex; *q != 0; q++)
    {
      if (*q == '\\' && q[1] != 0)
        q++;
      else if ((q < d || q >= e) && (*q == '^' || *q == '_'))
        return TRUE;
    }
  return FALSE;
}

/* A superscript (or prime) on tex's main line, not a word's limit above
 * (\limits^{..}). Its rise tells the styles apart: TeX raises it by sup1
 * in display style and sup2 in text style (CMSY: 0.413 and 0.363 em), so
 * \displaystyle\lim_{n}x^{2} and \lim\limits_{n}x^{2} do not draw alike.
 * Scripts inside a group (in a limit, a fraction's part, a radical, a
 * script) are in a style of their own that both share, or cramped (sup3
 * in both). A backslash's next character is a command's. */
static gboolean
main_line_superscript (const char *tex)
{
  gboolean limits = FALSE;
  int depth = 0;

  for (const char *q = tex; *q != 0; q++)
    {
      if (*q == '\\' && q[1] != 0)
        {
          if (depth == 0)
            limits = strncmp (q + 1, "limits", 6) == 0 && !g_ascii_isalpha (q[7]);
          for (q++; g_ascii_isalpha (q[0]) && g_ascii_isalpha (q[1]);)
            q++;
          continue;
        }
      depth += *q == '{';
      depth -= *q == '}';
      if (depth > 0 || *q == '}' || *q == '_')
        continue;
      if ((*q == '^' || *q == '\'') && !limits)
        return TRUE;
      limits = limits && *q == '^';
    }
  return FALSE;
}

/* An inline formula's style. Display style shown by a big operator at
 * its display size, or by a \lim-like word's limits above and below when
 * no glyph shows text style: \displaystyle, its full-size fractions plain
 * \frac (inline, \dfrac comes only from take_fraction's full-size parts)
 * and its words without \limits. A word's limits beside text-style glyphs
 * stay \limits, uncertain (\displaystyle\lim_{n}\frac{1}{n} draws a
 * full-size fraction). Several full-size fractions, or one with a script
 * beside it, are \dfrac's or \displaystyle\frac's alike (review of
 * reader12q: \displaystyle\frac{a}{b}+\frac{c}{d} read CERTAIN
 * \dfrac{a}{b}+\dfrac{c}{d} on 8 set-ups). */
static char *
inline_style (Reader *r, char *tex)
{
  gboolean by_words = r->word_limits > 0 && r->glyph_limits == 0 && !r->text_style;

  if (!r->inline_region)
    return tex;
  if (r->word_limits > 0 && !r->display_style && !by_words)
    uncertain (r, "a word's limits above and below beside text-style glyphs (\\limits or \\displaystyle?)");
  /* a word's limits alone show no style where a superscript's rise does
   * (the reviewer's \lim\limits_{n\to\infty}x^{\frac{1}{n}}=1 in a line
   * of pdfLaTeX CM text read CERTAIN \displaystyle); the commoner
   * \displaystyle reading stays, not sure */
  if (by_words && !r->display_style && main_line_superscript (tex))
    uncertain (r, "a superscript beside a word's limits above and below (its rise: \\displaystyle or \\limits?)");
  if (r->display_style || by_words)
    {
      g_autoptr (GString) t = g_string_new ("\\displaystyle");
      g_autoptr (GString) body = g_string_new (tex);
      g_string_replace (body, "\\dfrac{", "\\frac{", 0);
      if (r->glyph_limits == 0)
        g_string_replace (body, "\\limits", "", 0);
      tex_append (t, body->str);
      g_free (tex);
      return g_strdup (t->str);
    }
  if (r->inline_dfracs > 1 || (r->inline_dfracs == 1 && script_beside_dfrac (tex)))
    uncertain (r, "full-size fractions beside more (\\dfrac or \\displaystyle\\frac?)");
  return tex;
}

/* The parsed LaTeX (owned) into res, with the display's sentence
 * punctuation, and the verdict. */
static void
read_finish (Reader *r, FmMathTextResult *res, char *tex)
{
  if (tex == NULL || *tex == 0)
    {
      g_free (tex);
      res->verdict = FM_MATHTEXT_UNAVAILABLE;
      res->reason = g_strdup ("nothing readable in the text layer");
      return;
    }
  /* A radical sign whose vinculum was not found (or was taken as an
   * overline: \sqrt\overline{...} on lm-math, development seed 1105) is
   * written bare: no reading of a radical. */
  for (const char *q = strstr (tex, "\\sqrt"); q != NULL; q = strstr (q + 5, "\\sqrt"))
    if (q[5] != '{' && q[5] != '[')
      {
        uncertain (r, "a radical sign without its vinculum");
        break;
      }
  tex = inline_style (r, tex);
  if (r->trailing == '.' || r->trailing == ',' || r->trailing == ';')
    {
      char *t = g_strdup_printf ("%s%c", tex, (char) r->trailing);
      g_free (tex);
      tex = t;
      g_ptr_array_add (r->symbols, g_strdup_printf ("%c", (char) r->trailing));
    }
  /* Whatever the layout analysis missed, a reading that is not even
   * well-formed LaTeX is no sure one: a double subscript where a fraction's
   * bar was lost (\lim_{n\to\infty}_{n}^{1}=0 read CERTAIN on XeLaTeX,
   * tests/fixtures/pdf/cls-scriptfrac-xe), a script without its base,
   * unbalanced groups. The model reads it, or it goes out flagged. */
  if (!fm_latex_check_well_formed (tex))
    uncertain (r, "the reading is not well-formed LaTeX");
  if (g_getenv ("FM_MATHTEXT_DEBUG") != NULL)
    g_printerr ("reading %s (%s)\n", tex, r->reasons->len > 0 ? r->reasons->str : "certain");
  res->latex = tex;
  res->verdict = r->reasons->len > 0 ? FM_MATHTEXT_UNCERTAIN : FM_MATHTEXT_CERTAIN;
  res->unsure_spelling = spelling_doubt (r->reasons->str);
  res->reason = r->reasons->len > 0 ? g_strdup (r->reasons->str) : NULL;
}

FmMathTextResult *
fm_mathtext_read_region (FmDocument *doc, const FmRegion *region, GError **error)
{
  FmMathTextResult *res;
  Reader r = { 0 };
  FmRect area;
  g_autoptr (FmGrayImage) img = NULL;
  double scale = 6.0;
  g_autoptr (GPtrArray) top = NULL;

  g_return_val_if_fail (FM_IS_DOCUMENT (doc), NULL);
  g_return_val_if_fail (region != NULL, NULL);

  area = region->box;
  r.items = g_ptr_array_new_with_free_func (item_free);
  r.reasons = g_string_new (NULL);
  r.symbols = g_ptr_array_new_with_free_func (g_free);
  r.foreign = g_array_new (FALSE, FALSE, sizeof (FmRect));
  r.line_sizes = g_array_new (FALSE, FALSE, sizeof (double));

  if (!read_page (&r, doc, region, &area, &scale, &img, error))
    {
      g_array_unref (r.foreign);
  g_array_unref (r.line_sizes);
      g_ptr_array_unref (r.items);
      g_string_free (r.reasons, TRUE);
      g_ptr_array_unref (r.symbols);
      return NULL;
    }

  res = g_new0 (FmMathTextResult, 1);
  res->symbols = r.symbols;
  if (read_unavailable (&r, res))
    {
      g_array_unref (r.foreign);
  g_array_unref (r.line_sizes);
      g_ptr_array_unref (r.items);
      g_string_free (r.reasons, TRUE);
      return res;
    }
  r.em = read_main_size (&r);
  merge_extensible (&r);
  check_glyph_boxes (&r);
  if (r.unknown > 0)
    uncertain (&r, "glyphs without a LaTeX meaning");
  fit_items_to_ink (&r, img, &area, scale, &region->box);
  note_display_ops (&r);
  /* merge_sequences reads a colon's spaces from the ink; nothing before
   * the parse reads r->img otherwise. */
  r.img = img;
  r.img_area = area;
  r.img_scale = scale;
  merge_pieces (&r);
  find_struck_relations (&r, img, &area, scale);
  merge_italic_words (&r);
  merge_words (&r);
  merge_text_phrases (&r);
  if (r.inline_region)
    drop_leading_word (&r);
  /* before the rules: a lost bracket's serif is a stroke of its glyph */
  if (img != NULL)
    find_lost_delimiters (&r, img, &area, scale, &region->box);
  if (img != NULL)
    find_rules (&r, img, &area, scale);
  if (img != NULL && ink_outside_glyphs (&r, img, &area, scale, &region->box) > 0.02 * r.em * r.em)
    uncertain (&r, "ink that no glyph or rule explains");
  if (img != NULL)
    find_lost_accents (&r, img, &area, scale, &region->box);
  top = g_ptr_array_new ();
  for (guint i = 0; i < r.items->len; i++)
    if (!((Item *) r.items->pdata[i])->used)
      g_ptr_array_add (top, r.items->pdata[i]);
  read_finish (&r, res, parse_list (&r, top));
  g_array_unref (r.foreign);
  g_array_unref (r.line_sizes);
  g_ptr_array_unref (r.items);
  g_string_free (r.reasons, TRUE);
  return res;
}

void
fm_mathtext_result_free (FmMathTextResult *result)
{
  if (result == NULL)
    return;
  g_free (result->latex);
  g_free (result->reason);
  if (result->symbols != NULL)
    g_ptr_array_unref (result->symbols);
  g_free (result);
}
