/* fm-fonts.c - math font and character rules. */
#include "fm-fonts.h"

#include <string.h>

const char *
fm_font_strip_subset (const char *name)
{
  if (name == NULL)
    return "";
  /* A subset tag is exactly six capitals and a plus (PDF 1.7, 9.6.4). */
  if (strlen (name) > 7 && name[6] == '+')
    {
      for (int i = 0; i < 6; i++)
        if (name[i] < 'A' || name[i] > 'Z')
          return name;
      return name + 7;
    }
  return name;
}

static GRegex *
regex_once (GRegex **slot, const char *pattern, GRegexCompileFlags flags)
{
  if (g_once_init_enter (slot))
    {
      GRegex *re = g_regex_new (pattern, flags | G_REGEX_OPTIMIZE, 0, NULL);
      g_assert (re != NULL);
      g_once_init_leave (slot, re);
    }
  return *slot;
}

gboolean
fm_font_is_math_pdfmathtranslate (const char *name)
{
  static GRegex *re;
  regex_once (&re, "^(CM[^R]|MS.M|XY|MT|BL|RM|EU|LA|RS|LINE|LCIRCLE|TeX-|rsfs|txsy|wasy|stmary"
                   "|.*Mono|.*Code|.*Ital|.*Sym|.*Math)", 0);
  return g_regex_match (re, fm_font_strip_subset (name), 0, NULL);
}

gboolean
fm_font_is_math_extension (const char *name)
{
  static GRegex *re;
  regex_once (&re, "^(cmex|euex|txex|pxex|ntxex|newtxex|rtxmex|rpxmex|zeuex|esint|mnsymbol.?e|stix\\w*ex(?!t))"
                   "|-ex-|-ex$|mathex|extension|largesymbols", G_REGEX_CASELESS);
  return g_regex_match (re, fm_font_strip_subset (name), 0, NULL);
}

/* TeX's math symbol fonts use the OMS encoding, which has no letters in
 * its lowercase slots, and the extension fonts OMX, none in 0x50-0x74; a
 * Type 1 font of them without glyph names (Fourier's) reaches Poppler's
 * text as those letters: the radical sign as "p", the angle brackets as
 * "h" and "i", a sum as "P". Returns the symbol of c for such a font, else
 * c. */
gunichar
fm_font_oms_symbol (const char *name, gunichar c)
{
  static const gunichar oms[] = {
    0x22A2, 0x22A3, 0x230A, 0x230B, 0x2308, 0x2309, '{', '}', 0x27E8, 0x27E9, '|', 0x2016, 0x2195,
    0x21D5, '\\', 0x2240, 0x221A, 0x2A3F, 0x2207, 0x222B, 0x2294, 0x2293, 0x2291, 0x2292, 0x00A7,
    0x2020, 0x2021,
  };
  /* OMX (the extension font: big operators, large delimiters, radicals),
   * its letter slots 0x50-0x74 */
  static const gunichar omx[] = {
    0x2211, 0x220F, 0x222B, 0x22C3, 0x22C2, 0x2A04, 0x22C0, 0x22C1, 0x2211, 0x220F, 0x222B, 0x22C3,
    0x22C2, 0x2A04, 0x22C0, 0x22C1, 0x2210, 0x2210, 0x0302, 0x0302, 0x0302, 0x0303, 0x0303, 0x0303,
    '[', ']', 0x230A, 0x230B, 0x2308, 0x2309, '{', '}', 0x221A, 0x221A, 0x221A, 0x221A, 0x221A,
  };
  static GRegex *re, *ext_re, *syc_re;

  /* txfonts', pxfonts' and kpfonts' extra symbol fonts (txsyc, pxsyc, the
   * \boldmath txbsyc/pxbsyc, jkpsyc: "Kp--M-Syc", [light] "Kp-Light-M-Syc")
   * set relations in the slots of punctuation, digits and capitals
   * (symbolsC in txfonts.sty and kpfonts.sty, one layout): \neq read as a
   * comma cut "E \neq \emptyset", kpfonts' \coloneqq read as a B.
   * The table holds the slots whose symbol has one Unicode code point;
   * \nbumpeq, \nll, \nSubset, \coloneq (colon minus) and the like have
   * none and keep their slot. */
  static const struct { gunichar slot, sym; } syc[] = {
    { 7, 0x26AA }, { 8, 0x26AB }, { 9, 0x2225 }, { 17, 0x2250 }, { 25, 0x22AB }, { 27, 0x2245 },
    { 28, 0x2AB3 }, { 29, 0x2AB4 }, { '!', 0x2275 }, { '$', 0x22E0 }, { '%', 0x22E1 }, { '&', 0x2279 },
    { '\'', 0x2278 }, { ',', 0x2260 }, { '-', 0x226D }, { '.', 0x2262 }, { '/', 0x2241 }, { '0', 0x2249 },
    { '1', 0x2284 }, { '2', 0x2285 }, { ';', 0x2244 }, { '<', 0x2209 }, { '=', 0x220C }, { '@', 0x22E2 },
    { 'A', 0x22E3 }, { 'B', 0x2254 }, { 'C', 0x2255 }, { 'F', 0x2A74 }, { 'M', 0x214B }, { 'N', 0x27C5 },
    { 'O', 0x27C6 }, { 'R', 0x29C0 }, { 'S', 0x29C1 }, { 'V', 0x29B6 }, { 'W', 0x29B8 }, { 'Z', 0x2A1D },
    { '^', 0x25C7 }, { '_', 0x25C6 }, { 'c', 0x21E0 }, { 'd', 0x21E2 }, { 'f', 0x21DC },
  };
  for (guint k = 0; k < G_N_ELEMENTS (syc); k++)
    if (c == syc[k].slot)
      {
        regex_once (&syc_re, "^(r?(tx|px)b?syc|jkp\\w*syc|Kp-[A-Za-z]*-?M-Syc)", G_REGEX_CASELESS);
        if (g_regex_match (syc_re, fm_font_strip_subset (name), 0, NULL))
          return syc[k].sym;
        break;
      }
  regex_once (&ext_re, "^(cmex|lmex)|Math-?Extension|MathEX", G_REGEX_CASELESS);
  if (c >= 0x50 && c <= 0x74 && g_regex_match (ext_re, fm_font_strip_subset (name), 0, NULL))
    return omx[c - 0x50];
  if (c < 0x60 || c > 0x7A)
    return c;
  regex_once (&re, "^(cmb?sy|txsy|pxsy|ntxsy|newtxsy|zplsy|lmsy|rtxmsy|rpxsy)|LMMathSymbols|Math-?Symbols|MathSY",
              G_REGEX_CASELESS);
  if (!g_regex_match (re, fm_font_strip_subset (name), 0, NULL))
    return c;
  return oms[c - 0x60];
}

FmFontClass
fm_font_classify (const char *full_name)
{
  static GRegex *math_re, *text_re, *italic_re;
  const char *name = fm_font_strip_subset (full_name);

  /* OpenType and Type 1 math faces first: "Cambria Math" must not fall into
   * the Cambria text family below, nor "LMMathItalic" into LM's italics. */
  regex_once (&math_re,
              "^(Latin ?Modern ?Math|LatinModernMath|LMMath|STIX ?(Two)? ?Math|STIX(Size|NonUni|Integrals|Variants)|XITS ?Math|Cambria ?Math|TeXGyre\\w*Math"
              "|Asana|Libertinus ?Math|Fira ?Math|NewCM\\w*Math|DejaVuMath|Garamond ?Math|Euler"
              "|CMMI|CMSY|CMEX|CMBSY|CMMIB|MSAM|MSBM|EUFM|EUSM|EURM|EUEX|rsfs|RSFS|wasy|stmary"
              "|PazoMath|StandardSym|Symbol|rtxm|rpxm|txm|txsy|txex|pxm|pxsy|pxex|zplm|zptm|ztmcm|cmmi|cmsy|cmex"
              "|MTMI|MTSY|MTEX|MathTime|Lucida\\w*Math|ESSTIX|Mathematica"
              /* newtxmath, libertine's newtxmath, kpfonts' math faces (their
               * math-roman "LibertineMathRM", "Kp--M-Regular" hold digits
               * and function names, which are text-like) */
              "|NewTX(B?MI|SY|EX)|ntxmi|ntxsy|ntxex|LibertineMath(MI|SY|EX|BMI)|Kp-+M-(Sy|Ex|Italic|Bold|Semibold|Light)"
              /* the math alphabets newtx and mathalfa load for \mathscr,
               * \mathcal, \mathbb, \mathfrak: their letters map to plain or
               * letterlike characters, and a text font there cut the
               * formula (newtx's {\mathscr{M}}' = {\mathscr{M}}) */
              "|stxb?scr|BOONDOX|BBOLDX|DutchCalligraphic)",
              /* Poppler capitalises some names ("Pxex", "Rpxmi"). STIX Two
               * Text, STIXGeneral and XITS are the text faces that go with
               * the STIX and XITS math fonts. */
              G_REGEX_CASELESS);
  if (g_regex_match (math_re, name, 0, NULL))
    return FM_FONT_MATH;

  /* Known text faces; their italics are flagged below. */
  regex_once (&italic_re, "(Ital|Italic|Oblique|Obl|Slant|-It(-|$)|-BoldIt|-MediumIt|TI\\d|SL\\d|^CMTI|^CMSL|^CMBXTI|^CMMIB?\\d|^Lin(Libertine|Biolinum)\\w*I$)", 0);
  regex_once (&text_re,
              "^(CMR|CMBX|CMTI|CMSL|CMSS|CMTT|CMCSC|CMB\\d|CMDUNH|CMFIB|CMU|LMRoman|LMSans|LMMono|LMTypewriter"
              "|SF[A-Z]{2}|EC[A-Z]{2}|TC[A-Z]{2}|Times|Nimbus|Helvetica|Arial|Cambria|Calibri|Palatino|URWPalladio"
              "|P052|TeXGyre|Georgia|Garamond|EBGaramond|DejaVu|Liberation|Verdana|Tahoma|Utopia|Charter"
              "|Bookman|Century|NewCentury|Courier|Optima|Minion|Myriad|Source|Open ?Sans|Roboto|Noto"
              "|Lato|Libertine|Linux|Linotype|Baskerville|Bembo|Caslon|Sabon|Segoe|Consolas|Menlo"
              "|AdvOT|Adv|Gulliver|Warnock|Frutiger|Univers|Futura|Gill|Trebuchet|STIX|XITS|Fira|Libertinus"
              /* mathdesign's text-encoded faces (OT1 is its math roman: = + digits;
               * its other math faces: -MathItalic-, -Symbol-, -Extension-) */
              "|MathDesign-\\w+-\\w+-(T1|TS1)-)", 0);
  if (g_regex_match (text_re, name, 0, NULL))
    return g_regex_match (italic_re, name, 0, NULL) ? FM_FONT_TEXT_ITALIC : FM_FONT_TEXT;

  if (fm_font_is_math_pdfmathtranslate (full_name))
    {
      /* PDFMathTranslate counts every *Ital* face as math; an unknown italic
       * is more often emphasis than a formula. */
      static GRegex *pmt_ital_re;
      regex_once (&pmt_ital_re, "^.*Ital", 0);
      if (g_regex_match (pmt_ital_re, name, 0, NULL) && !strstr (name, "Math"))
        return FM_FONT_TEXT_ITALIC;
      return FM_FONT_MATH;
    }
  return g_regex_match (italic_re, name, 0, NULL) ? FM_FONT_TEXT_ITALIC : FM_FONT_TEXT;
}

/* The letters of the math alphabets that Unicode had encoded before it made
 * the Mathematical Alphanumeric Symbols block, and left as holes there
 * (script H, I, L, M, R, e, g, o; double-struck C, H, N, P, Q, R, Z; black-letter
 * C, H, I, R, Z): a font that maps its \mathscr{M} or \mathbb{C} through glyph
 * names (newtx's stxscr, a Type 1 blackboard face) gives these, in a font
 * not known as math, and the formula was cut at them. The ohm, Kelvin and
 * Angstrom signs and the numero sign of the same block are no math
 * letters. (fm-mathtext.c's letterlike() maps the same holes to their
 * letters: a letter added here belongs there too.) */
static gboolean
letterlike_math (gunichar c)
{
  switch (c)
    {
    case 0x2102: /* ℂ */ case 0x210A: case 0x210B: case 0x210C: case 0x210D: /* ℊ ℋ ℌ ℍ */
    case 0x210E: /* ℎ (Planck: math italic h) */ case 0x2110: case 0x2112: /* ℐ ℒ */
    case 0x2115: /* ℕ */ case 0x2119: case 0x211A: case 0x211B: case 0x211D: /* ℙ ℚ ℛ ℝ */
    case 0x2124: /* ℤ */ case 0x2128: /* ℨ */ case 0x212C: case 0x212D: /* ℬ ℭ */
    case 0x212F: case 0x2130: case 0x2131: case 0x2133: case 0x2134: /* ℯ ℰ ℱ ℳ ℴ */
    case 0x213C: case 0x213D: case 0x213E: case 0x213F: case 0x2140: /* double-struck pi gamma Gamma Pi sum */
    case 0x2145: case 0x2146: case 0x2147: case 0x2148: case 0x2149: /* double-struck D d e i j */
      return TRUE;
    default:
      return FALSE;
    }
}

gboolean
fm_char_is_math_symbol (gunichar c)
{
  if (c >= 0x0391 && c <= 0x03F5 && c != 0x0387)   /* Greek and its symbol forms */
    return TRUE;
  if (c >= 0x1D400 && c <= 0x1D7FF)                /* mathematical alphanumerics */
    return TRUE;
  if (letterlike_math (c))
    return TRUE;
  if ((c >= 0x2190 && c <= 0x22FF) ||              /* arrows, operators */
      (c >= 0x27C0 && c <= 0x27FF) || (c >= 0x2900 && c <= 0x2AFF) ||
      (c >= 0x2308 && c <= 0x230B) ||              /* ceilings, floors */
      (c >= 0x239B && c <= 0x23B3))                /* bracket pieces */
    return TRUE;
  switch (c)
    {
    case 0x00B1: /* ± */ case 0x00D7: /* × */ case 0x00F7: /* ÷ */ case 0x00AC: /* ¬ */
    case 0x2032: case 0x2033: /* primes */ case 0x2016: /* ‖ */ case 0x221E: /* ∞ */
    case 0x2202: /* ∂ */ case 0x210F: /* ℏ */ case 0x2113: /* ℓ */ case 0x2118: /* ℘ */
    case 0x211C: case 0x2111: case 0x2135: /* ℜ ℑ ℵ */
    /* Greek that Poppler maps through glyph names to look-alike symbols:
     * CMR's Omega becomes the ohm sign, mu the micro sign. */
    case 0x2126: /* Ω */ case 0x00B5: /* µ */ case 0x2127: /* ℧ */
      return TRUE;
    default:
      break;
    }
  return FALSE;
}

gboolean
fm_char_is_neutral (gunichar c)
{
  if (c >= '0' && c <= '9')
    return TRUE;
  if (c == 0x2026 || c == 0x00B7 || c == 0x2013)  /* … · – */
    return TRUE;
  /* Accents set apart from their letter (\bar, \hat, \tilde, \dot, \ddot,
   * \check, \breve, \acute, \grave, OT1 text accents): they sit over a
   * formula's letter as often as over a word's. */
  if (c == 0x00AF || c == 0x00A8 || c == 0x00B4 || c == 0x02C6 || c == 0x02C7 || c == 0x02D8 ||
      c == 0x02D9 || c == 0x02DA || c == 0x02DC || (c >= 0x0300 && c <= 0x036F))
    return TRUE;
  /* '#': math takes \# from the roman font (\emptyset^\#, a sharp
   * operator's superscript), so as a text glyph it was cut off its base. */
  return c < 128 && strchr ("+-=<>()[]{}/|',.;:!*^_~#", (int) c) != NULL && c != 0;
}

gboolean
fm_font_is_bold (const char *full_name)
{
  static GRegex *re;
  const char *name = fm_font_strip_subset (full_name);

  if (name == NULL)
    return FALSE;
  /* CMBX10, SFBX1000, LMRoman10-Bold, NimbusRomNo9L-Medi (Times bold),
   * URWPalladioL-Bold, texgyretermes-bold, STIXTwoText-Bold, ...; the
   * libertine package's faces by a letter after T or O, B bold and Z
   * semibold (LinLibertineTZ: its \mathbf) */
  regex_once (&re, "(Bold|^CMBX|^SFBX|^ECBX|^CMB\\d|Medi$|Medi[^a-z]|Black|Heavy|Semibold|Demi|"
              "^Lin(Libertine|Biolinum)[OT][BZ])", G_REGEX_CASELESS);
  return g_regex_match (re, name, 0, NULL);
}

gboolean
fm_word_is_math_function (const char *word)
{
  static const char *const names[] = {
    "sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan", "sinh", "cosh",
    "tanh", "coth", "log", "ln", "lg", "exp", "lim", "liminf", "limsup", "max", "min", "sup",
    "inf", "det", "dim", "ker", "deg", "arg", "gcd", "hom", "Pr", "mod", "tr", "Tr", "diag",
    "rank", "sgn", "span", "Re", "Im",
    /* algebra, geometry, analysis and statistics (the corpus's \mathrm{} and
     * \operatorname{} names) */
    "Hom", "Spec", "Proj", "Aut", "Ker", "Coker", "coker", "id", "Id", "pr", "Res", "ord",
    "supp", "vol", "Var", "Cov", "erf", "Tor", "Gal", "lcm", "codim", "colim", "Pic", "div",
    "grad", "curl", "argmax", "argmin", "Frac", "Mor", "Sym", "Stab", "Isom", "Spf", "Sh", NULL
  };
  for (int i = 0; names[i]; i++)
    if (strcmp (word, names[i]) == 0)
      return TRUE;
  return FALSE;
}
