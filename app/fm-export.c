/* fm-export.c - JSON, LaTeX and Markdown output. */
#include "fm-export.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

FmExportJob *
fm_export_job_new (const char *source)
{
  FmExportJob *job = g_new0 (FmExportJob, 1);

  /* File names need not be UTF-8; every export format must be. */
  job->source = g_utf8_make_valid (source, -1);
  job->pages = g_array_new (FALSE, FALSE, sizeof (int));
  job->page_notes = g_ptr_array_new_with_free_func (g_free);
  job->page_analysis = g_ptr_array_new ();
  job->regions = g_ptr_array_new_with_free_func ((GDestroyNotify) fm_region_free);
  return job;
}

void
fm_export_job_free (FmExportJob *job)
{
  if (job == NULL)
    return;
  g_free (job->source);
  g_free (job->title);
  g_array_unref (job->pages);
  g_ptr_array_unref (job->page_notes);
  g_ptr_array_unref (job->page_analysis);
  g_ptr_array_unref (job->regions);
  g_free (job->model);
  g_free (job->device);
  g_free (job);
}

gboolean
fm_export_format_from_string (const char *name, FmExportFormat *out)
{
  if (g_strcmp0 (name, "json") == 0)
    *out = FM_EXPORT_JSON;
  else if (g_strcmp0 (name, "tex") == 0 || g_strcmp0 (name, "latex") == 0)
    *out = FM_EXPORT_TEX;
  else if (g_strcmp0 (name, "md") == 0 || g_strcmp0 (name, "markdown") == 0)
    *out = FM_EXPORT_MARKDOWN;
  else
    return FALSE;
  return TRUE;
}

/* ---- Is a recogniser's LaTeX safe to compile? -------------------------------
 *
 * The recogniser writes whatever its tokens spell, and one bad formula stops
 * pdflatex for the whole document: unbalanced braces, `&` outside an
 * alignment, `\sqrt\sqrt22` (an argument that takes arguments), `x^a^b`,
 * `\begin{pmatrix} .. \end{Vmatrix}`, a command that is not defined. So the
 * tex export only writes formulas that this small parser accepts: the
 * commands of the model's vocabulary (and common ones) with their arities,
 * environments by name, delimiters after \left, \right and \big. */

static const char *const tex_symbols[] = {
  "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta",
  "iota", "kappa", "lambda", "mu", "nu", "xi", "pi", "varpi", "rho", "varrho", "sigma", "varsigma",
  "tau", "upsilon", "phi", "varphi", "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda",
  "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega",
  "to", "in", "ni", "otimes", "times", "ldots", "cdots", "vdots", "ddots", "dots", "bullet", "partial",
  "subset", "supset", "subseteq", "supseteq", "subsetneq", "circ", "infty", "cap", "cup", "wedge",
  "vee", "leq", "geq", "le", "ge", "neq", "ne", "oplus", "ominus", "odot", "prime", "setminus",
  "cong", "equiv", "approx", "sim", "simeq", "propto", "mapsto", "longmapsto", "longrightarrow",
  "longleftarrow", "longleftrightarrow", "leftarrow", "rightarrow", "Rightarrow", "Leftarrow",
  "Leftrightarrow", "Longrightarrow", "Longleftarrow", "leftrightarrow", "uparrow", "downarrow",
  "hookrightarrow", "rightharpoonup", "leadsto", "emptyset", "varnothing", "pm", "mp", "div",
  "ast", "star", "dagger", "mid", "parallel", "perp", "forall", "exists", "neg", "lnot", "sharp",
  "natural", "flat", "gg", "ll", "colon", "bmod", "notin", "triangle", "bot", "top", "diamond",
  "wp", "imath", "jmath", "ell", "hbar", "aleph", "nabla", "Im", "Re", "S", "P", "cdot", "coloneqq",
  "doteq", "amalg", "boxtimes", "lfloor", "rfloor", "lceil", "rceil", "langle", "rangle", "vert",
  "Vert", "quad", "qquad", "enspace", "displaystyle", "textstyle", "scriptstyle",
  "scriptscriptstyle", "lvert", "rvert", "lVert", "rVert", "angle", "backslash", "le", "ge",
  NULL
};
/* Operators that take \limits and \nolimits. */
static const char *const tex_operators[] = {
  "sum", "prod", "coprod", "int", "iint", "iiint", "oint", "bigoplus", "bigotimes", "bigcup",
  "bigcap", "bigvee", "bigwedge", "lim", "liminf", "limsup", "max", "min", "sup", "inf", "det",
  "dim", "deg", "ln", "log", "exp", "sin", "cos", "tan", "sec", "csc", "cot", "sinh", "cosh",
  "tanh", "coth", "arcsin", "arccos", "arctan", "arg", "ker", "gcd", "Pr", "hom",
  NULL
};
static const char *const tex_one_arg[] = {
  "mathcal", "mathbf", "mathrm", "mathit", "mathbb", "mathfrak", "mathscr", "mathsf", "mathtt",
  "boldsymbol", "overline", "underline", "bar", "tilde", "hat", "widehat", "widetilde",
  "vec", "dot", "ddot", "acute", "grave", "breve", "check", "mathring", "overbrace", "underbrace",
  "overrightarrow", "overleftarrow", "phantom", "vphantom", "hphantom", "pmod", "mod",
  NULL
};
static const char *const tex_two_args[] = {
  "frac", "dfrac", "tfrac", "binom", "dbinom", "tbinom", "stackrel", "overset", "underset", NULL
};
static const char *const tex_text_arg[] = {
  "text", "textit", "textbf", "textrm", "mbox", "mspace", NULL
};
static const char *const tex_big[] = {
  "big", "bigl", "bigr", "Big", "Bigl", "Bigr", "bigg", "biggl", "biggr", "Bigg", "Biggl", "Biggr", NULL
};
static const char *const tex_envs[] = {
  "matrix", "pmatrix", "bmatrix", "Bmatrix", "vmatrix", "Vmatrix", "smallmatrix", "cases",
  "array", "aligned", "gathered", "split", NULL
};

typedef struct {
  const char *p;
  int left_depth;
  gboolean amp, newline;     /* & and \\ allowed here                  */
  gboolean arg_newline;      /* \\ allowed in the next argument (\substack) */
} TexCheck;

static gboolean
tex_in (const char *const *list, const char *name, gsize len)
{
  for (int i = 0; list[i]; i++)
    if (strlen (list[i]) == len && strncmp (list[i], name, len) == 0)
      return TRUE;
  return FALSE;
}

static void
tex_skip_spaces (TexCheck *t)
{
  while (*t->p == ' ')
    t->p++;
}

/* A control word at t->p (after the backslash): its length. */
static gsize
tex_word_len (const char *s)
{
  gsize n = 0;
  while (g_ascii_isalpha (s[n]))
    n++;
  return n;
}

static gboolean
tex_delimiter (TexCheck *t)
{
  gsize n;
  tex_skip_spaces (t);
  if (*t->p && strchr ("()[]|./<>", *t->p))
    {
      t->p++;
      return TRUE;
    }
  if (*t->p != '\\')
    return FALSE;
  if (t->p[1] == '{' || t->p[1] == '}' || t->p[1] == '|')
    {
      t->p += 2;
      return TRUE;
    }
  n = tex_word_len (t->p + 1);
  if (n > 0)
    {
      static const char *const delims[] = {
        "langle", "rangle", "lfloor", "rfloor", "lceil", "rceil", "vert", "Vert", "uparrow",
        "downarrow", "backslash", "lvert", "rvert", "lVert", "rVert", NULL
      };
      if (tex_in (delims, t->p + 1, n))
        {
          t->p += 1 + n;
          return TRUE;
        }
    }
  return FALSE;
}

static gboolean tex_list (TexCheck *t, char until);

/* Text-mode braces: plain characters and nested groups only. */
static gboolean
tex_text_group (TexCheck *t)
{
  int depth = 0;
  tex_skip_spaces (t);
  if (*t->p != '{')
    return FALSE;
  for (; *t->p; t->p++)
    {
      if (*t->p == '{')
        depth++;
      else if (*t->p == '}')
        {
          if (--depth == 0)
            {
              t->p++;
              return TRUE;
            }
        }
      else if ((guchar) *t->p >= 0x80 || strchr ("\\^_&#%$~", *t->p))
        return FALSE;
    }
  return FALSE;
}

/* One argument: a group, a character or a command without arguments. */
static gboolean
tex_arg (TexCheck *t)
{
  gsize n;
  tex_skip_spaces (t);
  if (*t->p == '{')
    {
      /* & and \\ inside braces are errors even in an alignment. */
      TexCheck inner = *t;
      gboolean ok;
      inner.p++;
      inner.amp = FALSE;
      inner.newline = t->arg_newline;
      inner.arg_newline = FALSE;
      ok = tex_list (&inner, '}');
      t->p = inner.p;
      return ok;
    }
  if (*t->p == '\\')
    {
      if (t->p[1] != '\0' && !g_ascii_isalpha (t->p[1]))
        {
          if ((guchar) t->p[1] >= 0x80 || strchr ("\\'`\"^~=.", t->p[1]))
            return FALSE;
          t->p += 2;
          return TRUE;
        }
      n = tex_word_len (t->p + 1);
      if (n > 0 && (tex_in (tex_symbols, t->p + 1, n) || tex_in (tex_operators, t->p + 1, n)) &&
          !tex_in ((const char *const[]) { "displaystyle", "textstyle", "scriptstyle",
                                           "scriptscriptstyle", NULL }, t->p + 1, n))
        {
          t->p += 1 + n;
          return TRUE;
        }
      return FALSE;
    }
  if (*t->p == '\0' || (guchar) *t->p >= 0x80 || strchr ("{}^_&#%$~\\'", *t->p))
    return FALSE;
  t->p++;
  return TRUE;
}

/* A list of atoms up to `until` ('}', 'E' for \end, 'R' for \right, 0 for
 * the end of the string). */
static gboolean
tex_list (TexCheck *t, char until)
{
  gboolean sup = FALSE, sub = FALSE, op = FALSE;
  int infix = 0;

  for (;;)
    {
      char c = *t->p;
      gboolean was_op = op;

      op = FALSE;
      if (c == '\0')
        return until == 0;
      if (c == ' ')
        {
          t->p++;
          op = was_op;
          continue;
        }
      if (c == '}')
        {
          t->p++;
          return until == '}';
        }
      if (c == '{')
        {
          if (!tex_arg (t))
            return FALSE;
          sup = sub = FALSE;
          continue;
        }
      if (c == '^' || c == '_')
        {
          gboolean *used = c == '^' ? &sup : &sub;
          if (*used)
            return FALSE;  /* double superscript or subscript */
          *used = TRUE;
          t->p++;
          if (!tex_arg (t))
            return FALSE;
          continue;
        }
      if (c == '\'')
        {
          if (sup)
            return FALSE;  /* x^2' is a double superscript */
          while (*t->p == '\'')
            t->p++;
          continue;
        }
      if (c == '&')
        {
          if (!t->amp)
            return FALSE;
          t->p++;
          sup = sub = FALSE;
          continue;
        }
      if (c == '\\')
        {
          const char *name = t->p + 1;
          gsize n = tex_word_len (name);
          if (n == 0)
            {
              /* Control symbols. */
              if (name[0] == '\\')
                {
                  if (!t->newline)
                    return FALSE;
                  t->p += 2;
                  tex_skip_spaces (t);
                  if (*t->p == '[')
                    return FALSE;  /* \\[2pt] is not worth parsing */
                  sup = sub = FALSE;
                  continue;
                }
              if (name[0] == '\0' || (guchar) name[0] >= 0x80 || strchr ("'`\"^~=.", name[0]))
                return FALSE;  /* text accents are errors in math */
              t->p += 2;
              sup = sub = FALSE;
              continue;
            }
          t->p += 1 + n;
          if (n == 5 && strncmp (name, "begin", 5) == 0)
            {
              const char *env;
              gsize len;
              TexCheck inner;
              tex_skip_spaces (t);
              if (*t->p != '{')
                return FALSE;
              env = ++t->p;
              len = tex_word_len (env);
              if (!tex_in (tex_envs, env, len) || env[len] != '}')
                return FALSE;
              t->p = env + len + 1;
              if (len == 5 && strncmp (env, "array", 5) == 0)
                {
                  /* Column specification: {cc|l}. */
                  tex_skip_spaces (t);
                  if (*t->p != '{')
                    return FALSE;
                  for (t->p++; *t->p != '}'; t->p++)
                    if (*t->p == '\0' || !strchr ("lcr| ", *t->p))
                      return FALSE;
                  t->p++;
                }
              inner = *t;
              inner.amp = !(len == 8 && strncmp (env, "gathered", 8) == 0);
              inner.newline = TRUE;
              inner.left_depth = 0;
              if (!tex_list (&inner, 'E'))
                return FALSE;
              t->p = inner.p;
              /* tex_list stopped after "\end": the same name must follow. */
              tex_skip_spaces (t);
              if (*t->p != '{' || strncmp (t->p + 1, env, len) != 0 || t->p[1 + len] != '}')
                return FALSE;
              t->p += len + 2;
              sup = sub = FALSE;
              continue;
            }
          if (n == 3 && strncmp (name, "end", 3) == 0)
            return until == 'E';
          if (n == 4 && strncmp (name, "left", 4) == 0)
            {
              TexCheck inner = *t;
              if (!tex_delimiter (t))
                return FALSE;
              inner.p = t->p;
              inner.left_depth++;
              inner.amp = inner.newline = FALSE;  /* a group, as braces */
              if (!tex_list (&inner, 'R'))
                return FALSE;
              t->p = inner.p;
              if (!tex_delimiter (t))
                return FALSE;
              sup = sub = FALSE;
              continue;
            }
          if (n == 5 && strncmp (name, "right", 5) == 0)
            return until == 'R';
          if (n == 6 && strncmp (name, "middle", 6) == 0)
            {
              if (t->left_depth == 0 || !tex_delimiter (t))
                return FALSE;
              continue;
            }
          if (tex_in (tex_big, name, n))
            {
              if (!tex_delimiter (t))
                return FALSE;
              sup = sub = FALSE;
              continue;
            }
          if ((n == 6 && strncmp (name, "limits", 6) == 0) || (n == 8 && strncmp (name, "nolimits", 8) == 0))
            {
              if (!was_op)
                return FALSE;  /* "Limit controls must follow a math operator" */
              op = TRUE;
              continue;
            }
          if ((n == 6 && strncmp (name, "choose", 6) == 0) || (n == 4 && strncmp (name, "atop", 4) == 0))
            {
              if (++infix > 1)
                return FALSE;  /* two generalised fractions in one group */
              sup = sub = FALSE;
              continue;
            }
          if (n == 5 && strncmp (name, "hline", 5) == 0)
            {
              if (!t->newline)
                return FALSE;
              continue;
            }
          if (tex_in (tex_symbols, name, n))
            {
              sup = sub = FALSE;
              continue;
            }
          if (tex_in (tex_operators, name, n))
            {
              sup = sub = FALSE;
              op = TRUE;
              continue;
            }
          if ((n == 12 && strncmp (name, "operatorname", 12) == 0) || (n == 6 && strncmp (name, "mathop", 6) == 0))
            {
              if (*t->p == '*')
                t->p++;
              if (!tex_arg (t))
                return FALSE;
              sup = sub = FALSE;
              op = TRUE;
              continue;
            }
          if ((n == 4 && strncmp (name, "sqrt", 4) == 0) || (n == 11 && strncmp (name, "xrightarrow", 11) == 0) ||
              (n == 10 && strncmp (name, "xleftarrow", 10) == 0))
            {
              tex_skip_spaces (t);
              if (*t->p == '[')
                {
                  TexCheck opt = *t;
                  int depth = 0;
                  /* The optional argument: math up to the matching ]. */
                  for (opt.p++; *opt.p && !(*opt.p == ']' && depth == 0); opt.p++)
                    depth += (*opt.p == '{') - (*opt.p == '}');
                  if (*opt.p != ']')
                    return FALSE;
                  {
                    g_autofree char *inside = g_strndup (t->p + 1, opt.p - t->p - 1);
                    TexCheck sub_check = { inside, 0, FALSE, FALSE, FALSE };
                    if (!tex_list (&sub_check, 0))
                      return FALSE;
                  }
                  t->p = opt.p + 1;
                }
              if (!tex_arg (t))
                return FALSE;
              sup = sub = FALSE;
              continue;
            }
          if (n == 8 && strncmp (name, "substack", 8) == 0)
            {
              TexCheck inner = *t;
              inner.arg_newline = TRUE;
              if (!tex_arg (&inner))
                return FALSE;
              t->p = inner.p;
              continue;
            }
          if (tex_in (tex_one_arg, name, n))
            {
              if (!tex_arg (t))
                return FALSE;
              sup = sub = FALSE;
              continue;
            }
          if (tex_in (tex_two_args, name, n))
            {
              if (!tex_arg (t) || !tex_arg (t))
                return FALSE;
              sup = sub = FALSE;
              continue;
            }
          if (tex_in (tex_text_arg, name, n))
            {
              if (!tex_text_group (t))
                return FALSE;
              sup = sub = FALSE;
              continue;
            }
          return FALSE;  /* not a command this parser knows to be defined */
        }
      if ((guchar) c >= 0x80 || strchr ("#%$~", c) || c < 0x20)
        return FALSE;  /* non-ASCII needs packages; # % $ would break out */
      t->p++;
      sup = sub = FALSE;
    }
}

gboolean
fm_export_latex_is_balanced (const char *latex)
{
  TexCheck t = { latex, 0, FALSE, FALSE, FALSE };

  if (latex == NULL || latex[strspn (latex, " ")] == '\0')
    return FALSE;  /* "$$" would open display math */
  return tex_list (&t, 0);
}

static double
round2 (double v)
{
  return round (v * 100.0) / 100.0;
}

static char *
to_json (FmExportJob *job)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "format");
  json_builder_add_string_value (b, "formulate-pdf-1");
  json_builder_set_member_name (b, "source");
  json_builder_add_string_value (b, job->source);
  json_builder_set_member_name (b, "title");
  if (job->title)
    json_builder_add_string_value (b, job->title);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "n_pages");
  json_builder_add_int_value (b, job->n_pages);
  json_builder_set_member_name (b, "recognized");
  json_builder_add_boolean_value (b, job->recognized);
  json_builder_set_member_name (b, "text_reader");
  json_builder_add_boolean_value (b, job->text_reader);
  if (job->model)
    {
      json_builder_set_member_name (b, "model");
      json_builder_add_string_value (b, job->model);
    }
  if (job->device)
    {
      json_builder_set_member_name (b, "device");
      json_builder_add_string_value (b, job->device);
    }
  json_builder_set_member_name (b, "units");
  json_builder_add_string_value (b, "pt, origin top-left of the displayed page");

  json_builder_set_member_name (b, "pages");
  json_builder_begin_array (b);
  for (guint i = 0; i < job->pages->len; i++)
    {
      const char *note = i < job->page_notes->len ? job->page_notes->pdata[i] : NULL;
      const char *analysis = i < job->page_analysis->len ? job->page_analysis->pdata[i] : NULL;
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "page");
      json_builder_add_int_value (b, g_array_index (job->pages, int, i) + 1);
      json_builder_set_member_name (b, "note");
      if (note)
        json_builder_add_string_value (b, note);
      else
        json_builder_add_null_value (b);
      /* Which pages were read from pixels (a scan): their boxes and LaTeX
       * deserve another look. */
      json_builder_set_member_name (b, "analysis");
      if (analysis)
        json_builder_add_string_value (b, analysis);
      else
        json_builder_add_null_value (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "regions");
  json_builder_begin_array (b);
  for (guint i = 0; i < job->regions->len; i++)
    {
      FmRegion *r = job->regions->pdata[i];
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "page");
      json_builder_add_int_value (b, r->page + 1);
      json_builder_set_member_name (b, "kind");
      json_builder_add_string_value (b, fm_region_kind_to_string (r->kind));
      json_builder_set_member_name (b, "box");
      json_builder_begin_array (b);
      json_builder_add_double_value (b, round2 (r->box.x0));
      json_builder_add_double_value (b, round2 (r->box.y0));
      json_builder_add_double_value (b, round2 (r->box.x1));
      json_builder_add_double_value (b, round2 (r->box.y1));
      json_builder_end_array (b);
      json_builder_set_member_name (b, "font_size");
      json_builder_add_double_value (b, round2 (r->font_size));
      json_builder_set_member_name (b, "text");
      json_builder_add_string_value (b, r->text ? r->text : "");
      json_builder_set_member_name (b, "latex");
      if (r->latex)
        json_builder_add_string_value (b, r->latex);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "confidence");
      if (r->latex && r->confidence >= 0)
        json_builder_add_double_value (b, round (r->confidence * 1000.0) / 1000.0);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "provenance");
      if (r->latex && fm_provenance_to_string (r->provenance))
        json_builder_add_string_value (b, fm_provenance_to_string (r->provenance));
      else
        json_builder_add_null_value (b);
      if (r->kind == FM_REGION_NUMBER)
        {
          json_builder_set_member_name (b, "label_of");
          if (r->label_of >= 0)
            json_builder_add_int_value (b, r->label_of);
          else
            json_builder_add_null_value (b);
        }
      json_builder_set_member_name (b, "recognize_ms");
      json_builder_add_double_value (b, round2 (r->recognize_ms));
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "timings");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "detect_ms");
  json_builder_add_double_value (b, round2 (job->detect_ms));
  json_builder_set_member_name (b, "recognize_ms");
  json_builder_add_double_value (b, round2 (job->recognize_ms));
  json_builder_set_member_name (b, "total_ms");
  json_builder_add_double_value (b, round2 (job->total_ms));
  json_builder_end_object (b);
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  json_generator_set_indent (gen, 1);
  {
    char *s = json_generator_to_data (gen, NULL);
    char *out = g_strconcat (s, "\n", NULL);
    g_free (s);
    return out;
  }
}

/* A text-layer string as a TeX comment: one line, no control characters. */
static void
append_comment (GString *out, const char *prefix, const char *text)
{
  g_string_append_printf (out, "%% %s", prefix);
  for (const char *p = text ? text : ""; *p; p++)
    g_string_append_c (out, (*p == '\n' || *p == '\r') ? ' ' : *p);
  g_string_append_c (out, '\n');
}

static char *
number_tag (const FmRegion *number)
{
  /* "(3.1)" -> "3.1" for \tag. */
  g_autofree char *t = g_strstrip (g_strdup (number->text ? number->text : ""));
  gsize n = strlen (t);
  if (n >= 2 && t[0] == '(' && t[n - 1] == ')')
    {
      t[n - 1] = '\0';
      return g_strdup (t + 1);
    }
  return g_steal_pointer (&t);
}

static gboolean
tag_is_safe (const char *tag)
{
  for (const char *p = tag; *p; p++)
    if (!(g_ascii_isalnum (*p) || *p == '.' || *p == '-' || *p == '*'))
      return FALSE;
  return *tag != '\0';
}

/* Every equation number of display i, "3.1" or "3.1, 3.2" for a display
 * that carries several (an amsldoc align): one \tag with all of them
 * compiles in equation* and keeps every number; NULL when it has none or
 * one would not be safe inside \tag. */
static char *
display_tags (FmExportJob *job, guint i)
{
  GString *tags = NULL;
  gboolean safe = TRUE;

  for (guint k = i + 1; k < job->regions->len; k++)
    {
      FmRegion *num = job->regions->pdata[k];
      g_autofree char *tag = NULL;
      if (num->kind != FM_REGION_NUMBER || num->label_of != (int) i)
        continue;
      tag = number_tag (num);
      safe = safe && tag_is_safe (tag);
      if (tags == NULL)
        tags = g_string_new (tag);
      else
        g_string_append_printf (tags, ", %s", tag);
    }
  if (tags == NULL)
    return NULL;
  if (!safe)
    {
      g_string_free (tags, TRUE);
      return NULL;
    }
  return g_string_free (tags, FALSE);
}

/* Only for the comment's wording: do the braces balance? */
static gboolean
braces_balance (const char *latex)
{
  int depth = 0;
  for (const char *p = latex; *p; p++)
    {
      if (*p == '\\' && p[1] != '\0')
        p++;
      else if (*p == '{')
        depth++;
      else if (*p == '}' && --depth < 0)
        return FALSE;
    }
  return depth == 0;
}

static char *
to_tex (FmExportJob *job)
{
  GString *out = g_string_new (NULL);
  int last_page = -1;

  g_string_append (out, "% Formulas found by Formulate in ");
  for (const char *p = job->source; *p; p++)
    g_string_append_c (out, (*p == '\n') ? ' ' : *p);
  /* Two commands of the model's vocabulary need packages a plain TeX Live
   * may lack (mathtools, mathrsfs): close stand-ins instead. */
  g_string_append (out, "\n\\documentclass{article}\n\\usepackage{amsmath,amssymb}\n"
                        "\\providecommand{\\coloneqq}{\\mathrel{:}=}\n"
                        "\\providecommand{\\mathscr}{\\mathcal}\n"
                        "\\begin{document}\n");
  for (guint i = 0; i < job->regions->len; i++)
    {
      FmRegion *r = job->regions->pdata[i];
      g_autofree char *tag = NULL;

      if (r->page != last_page)
        {
          g_string_append_printf (out, "\n%% Page %d\n", r->page + 1);
          last_page = r->page;
        }
      if (r->kind == FM_REGION_NUMBER)
        continue;  /* written as the \tag of its display */
      if (r->kind == FM_REGION_DISPLAY)
        tag = display_tags (job, i);
      if (r->latex == NULL || !fm_export_latex_is_balanced (r->latex))
        {
          append_comment (out, r->latex == NULL ? "not recognised, text layer: "
                               : braces_balance (r->latex) ? "LaTeX that would not compile: "
                               : "unbalanced LaTeX: ",
                          r->latex ? r->latex : r->text);
          continue;
        }
      if (r->kind == FM_REGION_DISPLAY)
        {
          g_string_append_printf (out, "\\begin{equation*}\n  %s", r->latex);
          if (tag)
            g_string_append_printf (out, " \\tag{%s}", tag);
          g_string_append (out, "\n\\end{equation*}\n");
        }
      else
        g_string_append_printf (out, "$%s$\\par\n", r->latex);
    }
  g_string_append (out, "\\end{document}\n");
  return g_string_free (out, FALSE);
}

/* ---- Markdown -------------------------------------------------------------
 *
 * Poppler's text order is not used as the reading order: it leaves the pieces
 * of a display formula that its boxes put outside the region (radical signs,
 * "det" before a matrix, limits, numerators) as lines of their own, puts page
 * numbers between the lines of a formula, and reads a rotated page's lines in
 * a wrong order. So each page is laid out again, in a frame where text runs
 * left to right and lines go down:
 *  1. every glyph goes to the region that covers it; glyphs on a display's
 *     line next to it, or stacked on it, go to the display too, and an
 *     equation number on its line becomes the display's \tag;
 *  2. the other glyphs and the inline regions make lines, lines and displays
 *     are split into columns (a gutter that few items cross) and read column
 *     by column; page numbers and running headers are left out;
 *  3. lines make paragraphs (indent, a wider gap, a short last line), joined
 *     with hyphens undone; text is escaped for Markdown, formulas are not.
 */

typedef struct {
  gunichar c;
  FmRect r;               /* text frame                                     */
  double size;            /* font size, points (0: unknown)                 */
  gboolean space_before;  /* a space in the text layer before it            */
  gboolean line_before;   /* Poppler started a line before it               */
  int slot;               /* MdSlot it belongs to, or -1                    */
} MdGlyph;

typedef struct {
  FmRegion *reg;
  FmRect r;               /* text frame; displays grow by their glyphs      */
  char *tag;              /* DISPLAY: its equation number ("3.1") or NULL   */
  FmRect crop;            /* DISPLAY: r widened by the pieces on its line   */
  gboolean placed;
} MdSlot;

typedef struct {
  gboolean math;          /* an inline region (index = slot), else a glyph  */
  int index;
  FmRect r;
  gboolean piece_start;   /* Poppler's space before it is a line break      */
} MdTok;

typedef struct {
  gboolean display;       /* a display (slot), else a text line (toks)      */
  int slot;
  GArray *toks;
  FmRect r;
  double base;            /* bottom of its text glyphs (median)             */
  double em;              /* median font size of its glyphs                 */
  int column;             /* 0: spanning or single column, 1 left, 2 right  */
  gboolean drop;          /* page number or running header                  */
} MdItem;

typedef struct {
  MdGlyph *g;
  int n;
  MdSlot *slots;
  int n_slots;
  GArray *items;          /* MdItem, in reading order after md_layout       */
  double body_em;
  int dir;                /* text direction, as for to_frame                */
  double page_w, page_h;  /* displayed page                                 */
} MdPage;

static void
md_page_clear (MdPage *pg)
{
  for (int s = 0; s < pg->n_slots; s++)
    g_free (pg->slots[s].tag);
  if (pg->items)
    {
      for (guint i = 0; i < pg->items->len; i++)
        {
          MdItem *it = &g_array_index (pg->items, MdItem, i);
          if (it->toks)
            g_array_unref (it->toks);
        }
      g_array_unref (pg->items);
    }
  g_free (pg->g);
  g_free (pg->slots);
  memset (pg, 0, sizeof *pg);
}

static double rect_w (const FmRect *r) { return r->x1 - r->x0; }
static double rect_h (const FmRect *r) { return r->y1 - r->y0; }
static double rect_cx (const FmRect *r) { return 0.5 * (r->x0 + r->x1); }
static double rect_cy (const FmRect *r) { return 0.5 * (r->y0 + r->y1); }

static double
v_overlap (const FmRect *a, const FmRect *b)
{
  return MIN (a->y1, b->y1) - MAX (a->y0, b->y0);
}

static double
h_gap (const FmRect *a, const FmRect *b)
{
  return MAX (0.0, MAX (a->x0 - b->x1, b->x0 - a->x1));
}

static double
v_gap (const FmRect *a, const FmRect *b)
{
  return MAX (0.0, MAX (a->y0 - b->y1, b->y0 - a->y1));
}

static void
rect_union (FmRect *a, const FmRect *b)
{
  a->x0 = MIN (a->x0, b->x0);
  a->y0 = MIN (a->y0, b->y0);
  a->x1 = MAX (a->x1, b->x1);
  a->y1 = MAX (a->y1, b->y1);
}

/* A displayed-page rectangle in the text frame of direction dir (0: text runs
 * right, 1: down, 2: left, 3: up) on a w x h page. */
static FmRect
to_frame (const FmRect *r, int dir, double w, double h)
{
  switch (dir)
    {
    case 1:
      return (FmRect) { r->y0, w - r->x1, r->y1, w - r->x0 };
    case 2:
      return (FmRect) { w - r->x1, h - r->y1, w - r->x0, h - r->y0 };
    case 3:
      return (FmRect) { h - r->y1, r->x0, h - r->y0, r->x1 };
    default:
      return *r;
    }
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *v, int n, double fallback)
{
  if (n <= 0)
    return fallback;
  qsort (v, n, sizeof *v, cmp_double);
  return v[n / 2];
}

/* "(3.1)", "(12a)", "(A.2)", "(2.1′)": an equation number set beside a
 * display. Returns the label without parentheses, or NULL. */
static char *
md_equation_label (const char *text)
{
  g_autofree char *t = g_strstrip (g_strdup (text ? text : ""));
  gsize n = strlen (t);
  char *inner;

  if (n < 3 || t[0] != '(' || t[n - 1] != ')')
    return NULL;
  t[n - 1] = '\0';
  inner = g_strstrip (t + 1);
  if (*inner == '\0' || strlen (inner) > 12)
    return NULL;
  for (const char *p = inner; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      if (!(g_unichar_isalnum (c) || c == '.' || c == '-' || c == 0x2032 || c == '\''))
        return NULL;
    }
  return g_strdup (inner);
}

static gboolean
md_load (MdPage *pg, GPtrArray *regions, FmDocument *doc, int page_index, GError **error)
{
  PopplerPage *page;
  char *text;
  PopplerRectangle *rects = NULL;
  guint n_rects = 0;
  GList *attrs = NULL;
  double w = 0, h = 0, *size_of;
  glong n_chars;
  const char *p;
  gboolean space = TRUE, newline = TRUE;
  int votes[4] = { 0 }, dir = 0;
  double *sizes;
  int n_sizes = 0;

  fm_document_lock (doc);
  page = fm_document_get_page_locked (doc, page_index, error);
  if (page == NULL)
    {
      fm_document_unlock (doc);
      return FALSE;
    }
  poppler_page_get_size (page, &w, &h);
  text = poppler_page_get_text (page);
  if (text && *text)
    {
      if (!poppler_page_get_text_layout (page, &rects, &n_rects))
        n_rects = 0;
      attrs = poppler_page_get_text_attributes (page);
    }
  g_object_unref (page);
  fm_document_unlock (doc);

  n_chars = text ? g_utf8_strlen (text, -1) : 0;
  size_of = g_new0 (double, n_chars + 1);
  for (GList *l = attrs; l; l = l->next)
    {
      PopplerTextAttributes *a = l->data;
      for (int k = MAX (0, a->start_index); k <= a->end_index && k < n_chars; k++)
        size_of[k] = a->font_size;
    }
  poppler_page_free_text_attributes (attrs);

  pg->g = g_new0 (MdGlyph, MIN ((glong) n_rects, n_chars) + 1);
  p = text ? text : "";
  for (glong k = 0; k < n_chars && k < (glong) n_rects; k++, p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      PopplerRectangle *pr = &rects[k];
      MdGlyph *gl;

      if (g_unichar_isspace (c) || c == 0xA0 || !isfinite (pr->x1) || !isfinite (pr->y1) ||
          !isfinite (pr->x2) || !isfinite (pr->y2))
        {
          space = TRUE;
          if (c == '\n')
            newline = TRUE;
          continue;
        }
      gl = &pg->g[pg->n++];
      gl->c = c;
      gl->r = (FmRect) { MIN (pr->x1, pr->x2), MIN (pr->y1, pr->y2), MAX (pr->x1, pr->x2), MAX (pr->y1, pr->y2) };
      gl->size = size_of[k];
      gl->space_before = space;
      gl->line_before = newline;
      gl->slot = -1;
      space = newline = FALSE;
    }
  g_free (size_of);
  g_free (rects);
  g_free (text);

  /* The direction text runs in: the step from one glyph to the next. */
  for (int i = 1; i < pg->n; i++)
    if (!pg->g[i].line_before)
      {
        double dx = rect_cx (&pg->g[i].r) - rect_cx (&pg->g[i - 1].r);
        double dy = rect_cy (&pg->g[i].r) - rect_cy (&pg->g[i - 1].r);
        if (fabs (dx) >= fabs (dy))
          votes[dx >= 0 ? 0 : 2]++;
        else
          votes[dy >= 0 ? 1 : 3]++;
      }
  for (int d = 1; d < 4; d++)
    if (votes[d] > votes[dir])
      dir = d;

  sizes = g_new (double, pg->n + 1);
  for (int i = 0; i < pg->n; i++)
    {
      pg->g[i].r = to_frame (&pg->g[i].r, dir, w, h);
      if (pg->g[i].size > 0)
        sizes[n_sizes++] = pg->g[i].size;
    }
  pg->body_em = median (sizes, n_sizes, 10.0);
  g_free (sizes);
  for (int i = 0; i < pg->n; i++)
    if (pg->g[i].size <= 0)
      pg->g[i].size = pg->body_em;

  pg->dir = dir;
  pg->page_w = w;
  pg->page_h = h;
  pg->slots = g_new0 (MdSlot, regions->len + 1);
  for (guint i = 0; i < regions->len; i++)
    {
      FmRegion *reg = regions->pdata[i];
      if (reg->page != page_index)
        continue;
      pg->slots[pg->n_slots].reg = reg;
      pg->slots[pg->n_slots].r = to_frame (&reg->box, dir, w, h);
      pg->slots[pg->n_slots].crop = pg->slots[pg->n_slots].r;
      pg->n_slots++;
    }
  return TRUE;
}

/* Step 1: glyphs to regions. */
static void
md_assign (MdPage *pg, GPtrArray *regions)
{
  int *chunk_of = g_new (int, pg->n + 1);
  int n_chunks = 0;
  gboolean changed = TRUE;

  for (int i = 0; i < pg->n; i++)
    {
      MdGlyph *g = &pg->g[i];
      double cx = rect_cx (&g->r), cy = rect_cy (&g->r);
      double area = MAX (rect_w (&g->r) * rect_h (&g->r), 1e-6);
      double best = G_MAXDOUBLE, best_ov = 0;
      int pick = -1;

      /* The smallest region whose box holds the glyph's centre. */
      for (int s = 0; s < pg->n_slots; s++)
        {
          const FmRect *b = &pg->slots[s].r;
          if (cx >= b->x0 - 0.5 && cx <= b->x1 + 0.5 && cy >= b->y0 - 0.5 && cy <= b->y1 + 0.5 &&
              rect_w (b) * rect_h (b) < best)
            {
              best = rect_w (b) * rect_h (b);
              pick = s;
            }
        }
      /* Else one that covers most of it, or an inline formula it sticks out
       * of (a radical sign or superscript Poppler boxes too high). */
      for (int s = 0; pick < 0 && s < pg->n_slots; s++)
        {
          const FmRect *b = &pg->slots[s].r;
          double ov = MAX (0.0, MIN (g->r.x1, b->x1) - MAX (g->r.x0, b->x0)) * MAX (0.0, v_overlap (&g->r, b));
          if (ov >= 0.5 * area && ov > best_ov)
            best_ov = ov, pick = s;
        }
      for (int s = 0; pick < 0 && s < pg->n_slots; s++)
        {
          const FmRect *b = &pg->slots[s].r;
          if (pg->slots[s].reg->kind == FM_REGION_INLINE && cx >= b->x0 && cx <= b->x1 &&
              v_overlap (&g->r, b) >= 0.3 * rect_h (&g->r))
            pick = s;
        }
      /* TeX's radical signs hang below their baseline but Poppler boxes
       * them from the font's ascent, most of a line too high (as in
       * fm-detect.c): try where the sign is drawn. */
      if (pick < 0 && (g->c == 0x221A || g->c == 0x221B || g->c == 0x221C))
        for (int s = 0; pick < 0 && s < pg->n_slots; s++)
          {
            const FmRect *b = &pg->slots[s].r;
            double dy = cy + 0.75 * rect_h (&g->r);
            if (cx >= b->x0 - 0.5 && cx <= b->x1 + 0.5 && dy >= b->y0 - 0.5 && dy <= b->y1 + 0.5)
              pick = s;
          }
      g->slot = pick;
      if (pick >= 0 && pg->slots[pick].reg->kind != FM_REGION_NUMBER)
        rect_union (&pg->slots[pick].r, &g->r);
    }

  /* Equation numbers the detector found. */
  for (int s = 0; s < pg->n_slots; s++)
    {
      FmRegion *num = pg->slots[s].reg;
      if (num->kind != FM_REGION_NUMBER || num->label_of < 0 || num->label_of >= (int) regions->len)
        continue;
      for (int d = 0; d < pg->n_slots; d++)
        if (pg->slots[d].reg == regions->pdata[num->label_of] && pg->slots[d].tag == NULL)
          pg->slots[d].tag = md_equation_label (num->text);
    }

  /* Chunks: runs of unassigned glyphs on one Poppler line without a wide gap. */
  for (int i = 0; i < pg->n; i++)
    {
      MdGlyph *g = &pg->g[i];
      if (g->slot >= 0)
        {
          chunk_of[i] = -1;
          continue;
        }
      if (i > 0 && chunk_of[i - 1] >= 0 && !g->line_before &&
          h_gap (&g->r, &pg->g[i - 1].r) <= g->size && v_overlap (&g->r, &pg->g[i - 1].r) > 0)
        chunk_of[i] = chunk_of[i - 1];
      else
        chunk_of[i] = n_chunks++;
    }

  /* Pieces of a display that Poppler boxed outside it: on its line and next
   * to it, or stacked on it (limits, numerators) and no wider than it. The
   * display grows with each, so a chain of pieces is taken in a few rounds. */
  for (int round = 0; changed && round < 8; round++)
    {
      changed = FALSE;
      for (int c = 0; c < n_chunks; c++)
        {
          FmRect b = { G_MAXDOUBLE, G_MAXDOUBLE, -G_MAXDOUBLE, -G_MAXDOUBLE };
          GString *txt = g_string_new (NULL);
          double em = 0;
          int count = 0, take = -1;
          gboolean as_tag = FALSE;
          g_autofree char *label = NULL;

          for (int i = 0; i < pg->n; i++)
            if (chunk_of[i] == c && pg->g[i].slot < 0)
              {
                rect_union (&b, &pg->g[i].r);
                em = MAX (em, pg->g[i].size);
                if (pg->g[i].space_before && count > 0)
                  g_string_append_c (txt, ' ');
                g_string_append_unichar (txt, pg->g[i].c);
                count++;
              }
          if (count == 0)
            {
              g_string_free (txt, TRUE);
              continue;
            }
          label = md_equation_label (txt->str);
          g_string_free (txt, TRUE);
          for (int d = 0; d < pg->n_slots && take < 0; d++)
            {
              MdSlot *ds = &pg->slots[d];
              const FmRect *D = &ds->r;
              gboolean band = rect_cy (&b) >= D->y0 && rect_cy (&b) <= D->y1;
              if (ds->reg->kind != FM_REGION_DISPLAY)
                continue;
              if (band && label && ds->tag == NULL)
                {
                  ds->tag = g_steal_pointer (&label);
                  take = d;
                  as_tag = TRUE;
                }
              else if (band && h_gap (&b, D) <= 1.5 * em)
                {
                  take = d;
                  /* "det" before a matrix: part of the formula the
                   * recogniser should see. Only sideways: a piece stacked
                   * above may be boxed by Poppler up into the line above. */
                  ds->crop.x0 = MIN (ds->crop.x0, b.x0);
                  ds->crop.x1 = MAX (ds->crop.x1, b.x1);
                }
              else if (b.x0 >= D->x0 - em && b.x1 <= D->x1 + em && v_gap (&b, D) <= 0.5 * em)
                take = d;
            }
          if (take < 0)
            continue;
          for (int i = 0; i < pg->n; i++)
            if (chunk_of[i] == c && pg->g[i].slot < 0)
              pg->g[i].slot = take;
          if (!as_tag)  /* a number stays outside: it would widen the band */
            rect_union (&pg->slots[take].r, &b);
          changed = TRUE;
        }
    }
  g_free (chunk_of);
}

static char *md_line_plain (MdPage *pg, const MdItem *it);

static void
md_item_measure (MdPage *pg, MdItem *it)
{
  double *bases, *sizes;
  int nb = 0, ns = 0;

  if (it->display)
    {
      it->r = pg->slots[it->slot].r;
      it->base = it->r.y1;
      it->em = pg->body_em;
      return;
    }
  bases = g_new (double, it->toks->len + 1);
  sizes = g_new (double, it->toks->len + 1);
  it->r = (FmRect) { G_MAXDOUBLE, G_MAXDOUBLE, -G_MAXDOUBLE, -G_MAXDOUBLE };
  for (guint k = 0; k < it->toks->len; k++)
    {
      MdTok *t = &g_array_index (it->toks, MdTok, k);
      rect_union (&it->r, &t->r);
      if (!t->math)
        {
          bases[nb++] = t->r.y1;
          sizes[ns++] = pg->g[t->index].size;
        }
    }
  it->base = median (bases, nb, it->r.y1);
  it->em = median (sizes, ns, pg->body_em);
  g_free (bases);
  g_free (sizes);
}

static int
cmp_tok_x (const void *a, const void *b)
{
  const MdTok *x = a, *y = b;
  return (x->r.x0 > y->r.x0) - (x->r.x0 < y->r.x0);
}

typedef struct {
  int band, column;
  double y;
  guint index;
} MdOrderKey;

static int
cmp_order (const void *a, const void *b)
{
  const MdOrderKey *x = a, *y = b;
  if (x->band != y->band)
    return x->band - y->band;
  if (x->column != y->column)
    return x->column - y->column;
  if (x->y != y->y)
    return (x->y > y->y) - (x->y < y->y);
  return (x->index > y->index) - (x->index < y->index);
}

/* Two columns: a vertical strip in the middle of the text that (almost) no
 * glyph covers while the text beside it covers each point many times over
 * (a line per point in one column), with a fifth of the glyphs on each side. */
static gboolean
md_find_gutter (MdPage *pg, double *gutter_lo, double *gutter_hi)
{
  double lo = G_MAXDOUBLE, hi = -G_MAXDOUBLE, *sorted, typical;
  int n_bins, *cov, best_lo = -1, best_len = 0, left = 0, right = 0;

  for (int i = 0; i < pg->n; i++)
    {
      lo = MIN (lo, pg->g[i].r.x0);
      hi = MAX (hi, pg->g[i].r.x1);
    }
  if (pg->n < 40 || hi - lo < 100 || hi - lo > 10000)
    return FALSE;
  n_bins = (int) ceil (hi - lo) + 1;
  cov = g_new0 (int, n_bins);
  for (int i = 0; i < pg->n; i++)
    for (int b = (int) floor (pg->g[i].r.x0 - lo); b <= (int) ceil (pg->g[i].r.x1 - lo) && b < n_bins; b++)
      cov[MAX (b, 0)]++;
  sorted = g_new (double, n_bins);
  for (int b = 0; b < n_bins; b++)
    sorted[b] = cov[b];
  typical = median (sorted + n_bins / 10, n_bins - 2 * (n_bins / 10), 0);
  g_free (sorted);
  for (int b = (int) (0.3 * n_bins); b < (int) (0.7 * n_bins); b++)
    {
      int len = 0;
      while (b + len < (int) (0.7 * n_bins) && cov[b + len] <= 0.1 * typical)
        len++;
      if (len > best_len ||
          (len == best_len && len > 0 && fabs (b + 0.5 * len - 0.5 * n_bins) < fabs (best_lo + 0.5 * best_len - 0.5 * n_bins)))
        best_lo = b, best_len = len;
      b += len;
    }
  if (g_getenv ("FM_MD_DEBUG"))
    g_printerr ("gutter: lo %.0f hi %.0f typical %.1f best %d+%d\n", lo, hi, typical, best_lo, best_len);
  g_free (cov);
  if (best_len < 3 || typical < 5)
    return FALSE;
  *gutter_lo = lo + best_lo;
  *gutter_hi = lo + best_lo + best_len;
  for (int i = 0; i < pg->n; i++)
    {
      left += pg->g[i].r.x1 <= *gutter_lo + 0.5;
      right += pg->g[i].r.x0 >= *gutter_hi - 0.5;
    }
  return left >= pg->n / 5 && right >= pg->n / 5;
}

/* Step 2: lines, columns, reading order. */
static void
md_layout (MdPage *pg)
{
  GArray *pieces = g_array_new (FALSE, TRUE, sizeof (MdItem));
  MdItem *cur = NULL;
  const MdTok *last = NULL;
  double gutter_lo = 0, gutter_hi = 0, gutter;
  gboolean two;
  GArray *lines;
  guint n_span = 0;
  double *span_y;
  MdOrderKey *keys;

  two = md_find_gutter (pg, &gutter_lo, &gutter_hi);
  gutter = 0.5 * (gutter_lo + gutter_hi);

  /* Pieces: Poppler's text order, cut where the next token is not on the
   * same line (no vertical overlap, or back to the left, or far right) and
   * at the gutter (Poppler joins lines of two columns that line up). */
  for (int i = 0; i < pg->n; i++)
    {
      MdGlyph *g = &pg->g[i];
      MdTok t = { FALSE, i, g->r };
      gboolean same;

      if (g->slot >= 0)
        {
          MdSlot *s = &pg->slots[g->slot];
          if (s->reg->kind != FM_REGION_INLINE || s->placed)
            continue;
          s->placed = TRUE;
          t = (MdTok) { TRUE, g->slot, s->r };
        }
      else if (g->c < 0x20 || (g->c >= 0x7F && g->c < 0xA0) || g_unichar_type (g->c) == G_UNICODE_PRIVATE_USE)
        continue;  /* unmapped glyphs of big delimiters and the like */
      same = cur != NULL && last != NULL &&
             v_overlap (&t.r, &last->r) >= 0.4 * MIN (rect_h (&t.r), rect_h (&last->r)) &&
             t.r.x0 >= last->r.x0 - 0.5 * g->size && t.r.x0 - last->r.x1 <= 3 * g->size &&
             !(two && last->r.x1 <= gutter_lo + 0.5 && t.r.x0 >= gutter_hi - 0.5);
      t.piece_start = !same;
      if (!same)
        {
          MdItem it = { 0 };
          it.toks = g_array_new (FALSE, FALSE, sizeof (MdTok));
          g_array_append_val (pieces, it);
          cur = &g_array_index (pieces, MdItem, pieces->len - 1);
        }
      g_array_append_val (cur->toks, t);
      last = &g_array_index (cur->toks, MdTok, cur->toks->len - 1);
    }
  /* Inline regions with no glyph of their own, and displays. */
  for (int s = 0; s < pg->n_slots; s++)
    {
      MdItem it = { 0 };
      if (pg->slots[s].reg->kind == FM_REGION_INLINE && !pg->slots[s].placed)
        {
          MdTok t = { TRUE, s, pg->slots[s].r };
          it.toks = g_array_new (FALSE, FALSE, sizeof (MdTok));
          g_array_append_val (it.toks, t);
          g_array_append_val (pieces, it);
        }
      else if (pg->slots[s].reg->kind == FM_REGION_DISPLAY)
        {
          it.display = TRUE;
          it.slot = s;
          g_array_append_val (pieces, it);
        }
    }
  for (guint i = 0; i < pieces->len; i++)
    {
      MdItem *it = &g_array_index (pieces, MdItem, i);
      md_item_measure (pg, it);
    }

  for (guint i = 0; i < pieces->len; i++)
    {
      MdItem *it = &g_array_index (pieces, MdItem, i);
      it->column = !two ? 0 : it->r.x1 <= gutter ? 1 : it->r.x0 >= gutter ? 2 : 0;
    }

  /* Pieces of one column on one baseline are one line ("1" and "Theory"
   * of a numbered heading, text on both sides of an inline formula that
   * Poppler split). */
  lines = g_array_new (FALSE, TRUE, sizeof (MdItem));
  for (guint i = 0; i < 3 * pieces->len; i++)
    {
      /* Text first, then script-size pieces (a footnote mark Poppler put
       * on a line of its own), then formulas alone: they join the text line
       * they sit in whatever Poppler's order. */
      MdItem *p = &g_array_index (pieces, MdItem, i % pieces->len);
      gboolean merged = FALSE, only_math = !p->display, script;
      if (!p->display && p->toks == NULL)
        continue;  /* merged in the first pass */
      for (guint k = 0; !p->display && k < p->toks->len && only_math; k++)
        only_math = g_array_index (p->toks, MdTok, k).math;
      script = !p->display && !only_math && p->em < 0.9 * pg->body_em;
      if (i / pieces->len != (only_math ? 2u : script ? 1u : 0u))
        continue;
      if (p->display)
        {
          g_array_append_val (lines, *p);
          continue;
        }
      for (guint j = 0; j < lines->len && !merged; j++)
        {
          MdItem *l = &g_array_index (lines, MdItem, j);
          double em = MAX (l->em, p->em);
          if (l->display || l->column != p->column)
            continue;
          /* A formula alone (a sum with limits) has no baseline of its own:
           * its middle sits on the math axis, inside the text line. */
          if ((!only_math && fabs (l->base - p->base) <= 0.25 * em) ||
              (only_math && rect_cy (&p->r) <= l->base + 0.3 * l->em &&
               rect_cy (&p->r) >= l->base - 1.2 * l->em) ||
              (script && l->em > 1.1 * p->em && v_overlap (&p->r, &l->r) >= 0.5 * rect_h (&p->r) &&
               p->r.x0 >= l->r.x0 - l->em && p->r.x1 <= l->r.x1 + l->em))
            {
              g_array_append_vals (l->toks, p->toks->data, p->toks->len);
              g_array_unref (p->toks);
              p->toks = NULL;
              merged = TRUE;
            }
        }
      if (!merged)
        g_array_append_val (lines, *p);
    }
  g_array_unref (pieces);
  for (guint i = 0; i < lines->len; i++)
    {
      MdItem *l = &g_array_index (lines, MdItem, i);
      if (!l->display)
        {
          /* Stable within a piece: pieces start left of where the next begins. */
          g_array_sort (l->toks, cmp_tok_x);
          md_item_measure (pg, l);
        }
    }

  /* Reading order: items spanning both columns cut the page into bands;
   * each band is read left column, right column, then the spanning item. */
  span_y = g_new (double, lines->len + 1);
  for (guint i = 0; i < lines->len; i++)
    {
      MdItem *l = &g_array_index (lines, MdItem, i);
      if (two && l->column == 0)
        span_y[n_span++] = rect_cy (&l->r);
    }
  qsort (span_y, n_span, sizeof *span_y, cmp_double);
  keys = g_new (MdOrderKey, lines->len + 1);
  for (guint i = 0; i < lines->len; i++)
    {
      MdItem *l = &g_array_index (lines, MdItem, i);
      double y = rect_cy (&l->r);
      int band = 0;
      while ((guint) band < n_span && span_y[band] < y)
        band++;
      keys[i] = (MdOrderKey) { band, two && l->column == 0 ? 3 : l->column, y, i };
    }
  qsort (keys, lines->len, sizeof *keys, cmp_order);
  pg->items = g_array_sized_new (FALSE, TRUE, sizeof (MdItem), lines->len);
  for (guint i = 0; i < lines->len; i++)
    g_array_append_val (pg->items, g_array_index (lines, MdItem, keys[i].index));
  /* FM_MD_DEBUG=1: the laid-out items, for working on the layout. */
  if (g_getenv ("FM_MD_DEBUG"))
    for (guint i = 0; i < pg->items->len; i++)
      {
        MdItem *l = &g_array_index (pg->items, MdItem, i);
        g_autofree char *t = md_line_plain (pg, l);
        g_printerr ("item %u col %d [%.0f %.0f %.0f %.0f] base %.1f em %.1f %s%s\n", i, l->column,
                    l->r.x0, l->r.y0, l->r.x1, l->r.y1, l->base, l->em, l->display ? "DISPLAY " : "", t);
      }
  g_array_unref (lines);
  g_free (keys);
  g_free (span_y);
}

/* A line's text layer, math included, for comparing lines across pages. */
static char *
md_line_plain (MdPage *pg, const MdItem *it)
{
  GString *s = g_string_new (NULL);
  if (it->display)
    return g_string_free (s, FALSE);
  for (guint k = 0; k < it->toks->len; k++)
    {
      const MdTok *t = &g_array_index (it->toks, MdTok, k);
      if (k > 0 && (t->math || pg->g[t->index].space_before))
        g_string_append_c (s, ' ');
      if (t->math)
        g_string_append (s, pg->slots[t->index].reg->text ? pg->slots[t->index].reg->text : "");
      else
        g_string_append_unichar (s, pg->g[t->index].c);
    }
  return g_string_free (s, FALSE);
}

/* "12", "- 12 -", "xii", "Page 12", "12 / 30": a page number. */
static gboolean
md_is_page_number (const char *text)
{
  g_autofree char *t = g_utf8_strdown (text, -1);
  const char *p = g_strstrip (t);
  gboolean digits = FALSE, roman = TRUE;

  if (g_str_has_prefix (p, "page "))
    p += 5;
  if (*p == '\0' || strlen (p) > 16)
    return FALSE;
  for (const char *q = p; *q; q++)
    {
      if (g_ascii_isdigit (*q))
        digits = TRUE;
      else if (strchr ("ivxlcdm", *q) == NULL)
        roman = FALSE;
      if (!g_ascii_isdigit (*q) && strchr ("ivxlcdm-/ ", *q) == NULL && (guchar) *q < 0x80)
        return FALSE;
      if ((guchar) *q >= 0x80 && !g_str_has_prefix (q, "\xe2\x80\x93") && !g_str_has_prefix (q, "\xe2\x80\x94") &&
          (guchar) *q >= 0xC0)
        return FALSE;  /* only en and em dashes besides ASCII */
    }
  return digits || (roman && strlen (p) <= 6);
}

/* The top or bottom item of a page, apart from the rest by more than a line:
 * where page numbers and running heads sit. Returns its index or -1. */
static int
md_edge_item (MdPage *pg, gboolean top)
{
  int pick = -1;
  double gap = G_MAXDOUBLE;

  for (guint i = 0; i < pg->items->len; i++)
    {
      MdItem *it = &g_array_index (pg->items, MdItem, i);
      if (pick < 0 || (top ? it->r.y0 < g_array_index (pg->items, MdItem, pick).r.y0
                           : it->r.y1 > g_array_index (pg->items, MdItem, pick).r.y1))
        pick = (int) i;
    }
  if (pick < 0 || g_array_index (pg->items, MdItem, pick).display || pg->items->len < 2)
    return -1;
  for (guint i = 0; i < pg->items->len; i++)
    {
      MdItem *it = &g_array_index (pg->items, MdItem, i), *e = &g_array_index (pg->items, MdItem, pick);
      if ((int) i != pick)
        gap = MIN (gap, top ? it->r.y0 - e->r.y1 : e->r.y0 - it->r.y1);
    }
  return gap >= 1.0 * g_array_index (pg->items, MdItem, pick).em ? pick : -1;
}

/* A line for running-head comparison: digits left out (page numbers). */
static char *
md_head_key (MdPage *pg, int index)
{
  g_autofree char *plain = md_line_plain (pg, &g_array_index (pg->items, MdItem, index));
  GString *s = g_string_new (NULL);
  for (const char *p = plain; *p; p++)
    if (!g_ascii_isdigit (*p) && !g_ascii_isspace (*p))
      g_string_append_c (s, *p);
  return g_string_free (s, FALSE);
}

/* Page numbers at the top or bottom of a page, and running heads and feet:
 * the same top or bottom line (digits aside) on two or more pages. */
static void
md_drop_furniture (MdPage *pages, int n_pages)
{
  for (int e = 0; e < 2; e++)
    {
      int *edge = g_new (int, n_pages + 1);
      char **key = g_new0 (char *, n_pages + 1);

      for (int i = 0; i < n_pages; i++)
        {
          edge[i] = pages[i].items ? md_edge_item (&pages[i], e == 0) : -1;
          if (edge[i] >= 0)
            key[i] = md_head_key (&pages[i], edge[i]);
        }
      for (int i = 0; i < n_pages; i++)
        {
          MdItem *it;
          g_autofree char *plain = NULL;
          gboolean repeated = FALSE;

          if (edge[i] < 0)
            continue;
          it = &g_array_index (pages[i].items, MdItem, edge[i]);
          plain = md_line_plain (&pages[i], it);
          for (int j = 0; j < n_pages && !repeated; j++)
            repeated = j != i && key[j] && *key[i] && strcmp (key[i], key[j]) == 0;
          if (md_is_page_number (plain) || repeated)
            it->drop = TRUE;
        }
      for (int i = 0; i < n_pages; i++)
        g_free (key[i]);
      g_free (key);
      g_free (edge);
    }
}

/* Paragraph text being built: Markdown-escaped text and $math$. */
typedef struct {
  GString *s;
  gboolean last_math;        /* the last thing written is a formula    */
  gsize math_end;            /* where that formula's closing $ is      */
  gboolean pending_space;
  gboolean hyphen_pending;   /* the last line ended "letter-"          */
  gboolean math_line_end;    /* the last line ended with that formula  */
} MdPara;

/* Does the formula before s[end] end in a relation or operator, where TeX
 * breaks an inline formula across lines? */
static gboolean
md_math_ends_open (const char *s, gsize end)
{
  static const char *const ops[] = {
    "leq", "geq", "le", "ge", "neq", "ne", "times", "cdot", "pm", "mp", "to", "in", "subset",
    "subseteq", "approx", "equiv", "sim", "simeq", "cong", "rightarrow", "Rightarrow", "mapsto",
    "cup", "cap", "oplus", "otimes", "ll", "gg", "propto", NULL
  };
  gsize k = end;

  while (k > 0 && s[k - 1] == ' ')
    k--;
  if (k == 0)
    return FALSE;
  if (strchr ("=+-<>,", s[k - 1]) && !(k >= 2 && s[k - 2] == '\\'))
    return TRUE;
  {
    gsize j = k;
    while (j > 0 && g_ascii_isalpha (s[j - 1]))
      j--;
    if (j > 0 && j < k && s[j - 1] == '\\')
      return tex_in (ops, s + j, k - j);
  }
  return FALSE;
}

static gboolean
md_is_closing (gunichar c)
{
  return c != 0 && (strchr (".,;:!?)]}", (int) (c < 0x80 ? c : 0x80)) != NULL ||
                    c == 0x2019 || c == 0x201D || c == 0x2026);
}

static gboolean
md_is_opening (gunichar c)
{
  return c == '(' || c == '[' || c == '{' || c == 0x2018 || c == 0x201C;
}

static gunichar
md_last_char (GString *s)
{
  const char *p;
  if (s->len == 0)
    return 0;
  p = g_utf8_find_prev_char (s->str, s->str + s->len);
  return p ? g_utf8_get_char (p) : 0;
}

static void
md_para_separator (MdPara *P, gunichar next, gboolean next_math)
{
  gunichar prev = md_last_char (P->s);
  gboolean space = P->pending_space;

  P->pending_space = FALSE;
  if (P->s->len == 0)
    return;
  if (P->hyphen_pending)
    {
      P->hyphen_pending = FALSE;
      /* "equa-" + "tion": a word broken at the line end; "Navier-" +
       * "Stokes" keeps its hyphen. Either way no space. */
      if (!next_math && g_unichar_islower (next))
        g_string_truncate (P->s, g_utf8_find_prev_char (P->s->str, P->s->str + P->s->len) - P->s->str);
      return;
    }
  if (P->last_math && next_math)
    space = TRUE;  /* "$a$$b$" would open a display */
  else if (P->last_math)
    space = g_unichar_isalnum (next) || (space && !md_is_closing (next));
  else if (next_math)
    space = g_unichar_isalnum (prev) || (space && !md_is_opening (prev));
  if (space && prev != ' ')
    g_string_append_c (P->s, ' ');
}

static void
md_para_add_char (MdPara *P, gunichar c, gboolean space_before)
{
  P->pending_space |= space_before;
  /* A formula that ends in the punctuation the text goes on with: the crop
   * took the comma or period after it (E = mc^{2}. followed by ","). */
  if (P->last_math && (c == '.' || c == ',' || c == ';' || c == ':') &&
      P->math_end + 1 == P->s->len && P->math_end >= 3 &&
      strchr (".,;:", P->s->str[P->math_end - 1]) && P->s->str[P->math_end - 2] != '\\' &&
      P->s->str[P->math_end - 2] != '$')
    {
      g_string_erase (P->s, P->math_end - 1, 1);
      P->math_end--;
    }
  md_para_separator (P, c, FALSE);
  P->last_math = P->math_line_end = FALSE;
  if (c == '\\' || c == '*' || c == '_' || c == '`' || c == '$')
    g_string_append_c (P->s, '\\');
  g_string_append_unichar (P->s, c);
}

/* Formula text for between dollars: one line, no unescaped $. Without
 * LaTeX (--detect-only) it is the text layer of the glyphs the region was
 * given here, pieces outside its box included, so the output shows them. */
static char *
md_math_body (MdPage *pg, int slot)
{
  const FmRegion *reg = pg->slots[slot].reg;
  g_autoptr(GString) layer = g_string_new (NULL);
  const char *src;
  GString *s = g_string_new (NULL);

  for (int i = 0; reg->latex == NULL && i < pg->n; i++)
    if (pg->g[i].slot == slot)
      {
        if (layer->len > 0 && pg->g[i].space_before)
          g_string_append_c (layer, ' ');
        g_string_append_unichar (layer, pg->g[i].c);
      }
  src = reg->latex ? reg->latex : layer->len > 0 ? layer->str : reg->text ? reg->text : "";

  for (const char *p = src; *p; p++)
    {
      if (*p == '\\' && p[1] != '\0')
        {
          g_string_append_c (s, *p++);
          g_string_append_c (s, *p);
          continue;
        }
      if (*p == '$')
        g_string_append_c (s, '\\');
      /* Control characters: unmapped glyphs (big delimiters) in a text layer. */
      g_string_append_c (s, ((guchar) *p < 0x20 || *p == 0x7F) ? ' ' : *p);
    }
  /* Pandoc and most note apps want no space inside the dollars. */
  for (;;)
    {
      g_strstrip (s->str);
      s->len = strlen (s->str);
      if (s->len >= 2 && s->str[s->len - 2] == '\\' && strchr (",;:! ", s->str[s->len - 1]) &&
          (s->len < 3 || s->str[s->len - 3] != '\\'))
        g_string_truncate (s, s->len - 2);
      else
        break;
    }
  return g_string_free (s, FALSE);
}

static void
md_para_add_math (MdPara *P, MdPage *pg, int slot, gboolean space_before)
{
  g_autofree char *body = md_math_body (pg, slot);
  if (*body == '\0')
    return;
  /* One formula that TeX broke at the line end after "E =": one $...$. */
  if (P->last_math && P->math_line_end && P->math_end + 1 == P->s->len &&
      md_math_ends_open (P->s->str, P->math_end))
    {
      g_string_truncate (P->s, P->math_end);
      g_string_append_printf (P->s, " %s$", body);
      P->math_end = P->s->len - 1;
      P->pending_space = P->math_line_end = FALSE;
      return;
    }
  P->math_line_end = FALSE;
  P->pending_space |= space_before;
  md_para_separator (P, 0, TRUE);
  g_string_append_printf (P->s, "$%s$", body);
  P->last_math = TRUE;
  P->math_end = P->s->len - 1;
}

static void
md_para_line_end (MdPara *P)
{
  gsize n = P->s->len;
  const char *prev;

  if (n == 0)
    return;
  P->math_line_end = P->last_math;
  prev = g_utf8_find_prev_char (P->s->str, P->s->str + n);
  if (!P->last_math && prev && prev > P->s->str &&
      (*prev == '-' || g_str_has_prefix (prev, "\xe2\x80\x90") || g_str_has_prefix (prev, "\xc2\xad")))
    {
      const char *before = g_utf8_find_prev_char (P->s->str, prev);
      if (before && g_unichar_isalpha (g_utf8_get_char (before)))
        {
          P->hyphen_pending = TRUE;
          return;
        }
    }
  P->pending_space = TRUE;
}

/* Writes the paragraph, escaping what would start a Markdown block. */
static void
md_para_flush (MdPara *P, GString *out, const char *prefix)
{
  const char *s;

  g_strstrip (P->s->str);
  P->s->len = strlen (P->s->str);
  s = P->s->str;
  if (P->s->len > 0)
    {
      gsize digits = strspn (s, "0123456789");
      g_string_append (out, prefix);
      if (*s == '#' || *s == '>' || *s == '=' || *s == '|' ||
          ((*s == '-' || *s == '+') && (s[1] == ' ' || s[1] == '\0' || s[1] == *s)))
        g_string_append_c (out, '\\');
      else if (digits > 0 && digits <= 9 && (s[digits] == '.' || s[digits] == ')') &&
               (s[digits + 1] == ' ' || s[digits + 1] == '\0'))
        {
          g_string_append_len (out, s, digits);
          g_string_append_c (out, '\\');
          s += digits;
        }
      g_string_append (out, s);
      g_string_append (out, "\n\n");
    }
  g_string_truncate (P->s, 0);
  P->last_math = P->pending_space = P->hyphen_pending = P->math_line_end = FALSE;
}

typedef struct {
  double left, right, pitch;
} MdColumn;

/* Step 3: paragraphs. */
static void
md_emit (MdPage *pg, GString *out)
{
  MdPara P = { g_string_new (NULL), FALSE, 0, FALSE, FALSE, FALSE };
  MdColumn col[3];
  const MdItem *prev = NULL;

  /* Each column's usual left and right edge and line pitch. */
  for (int c = 0; c < 3; c++)
    {
      double *l = g_new (double, pg->items->len + 1), *r = g_new (double, pg->items->len + 1);
      double *d = g_new (double, pg->items->len + 1);
      int n = 0, nd = 0;
      const MdItem *before = NULL;
      for (guint i = 0; i < pg->items->len; i++)
        {
          const MdItem *it = &g_array_index (pg->items, MdItem, i);
          if (it->column != c || it->drop)
            continue;
          if (it->display)
            {
              before = NULL;
              continue;
            }
          l[n] = it->r.x0;
          r[n++] = it->r.x1;
          if (before && it->base > before->base && it->base - before->base < 3 * it->em)
            d[nd++] = it->base - before->base;
          before = it;
        }
      col[c].left = median (l, n, 0);
      col[c].right = median (r, n, 0);
      col[c].pitch = median (d, nd, 1.2 * pg->body_em);
      g_free (l);
      g_free (r);
      g_free (d);
    }

  for (guint i = 0; i < pg->items->len; i++)
    {
      const MdItem *it = &g_array_index (pg->items, MdItem, i);
      const MdColumn *c = &col[it->column];
      gboolean heading;

      if (it->drop)
        continue;
      if (it->display)
        {
          MdSlot *s = &pg->slots[it->slot];
          g_autofree char *body = md_math_body (pg, it->slot);
          md_para_flush (&P, out, "");
          if (*body)
            {
              g_string_append_printf (out, "$$%s", body);
              if (s->tag && tag_is_safe (s->tag))
                g_string_append_printf (out, " \\tag{%s}", s->tag);
              g_string_append (out, "$$\n\n");
            }
          prev = it;
          continue;
        }
      /* A heading: a line in a font clearly larger than the body's. */
      heading = it->em >= 1.15 * pg->body_em && it->toks->len <= 80;
      if (heading || (prev && prev->display))
        md_para_flush (&P, out, "");
      else if (prev && !prev->display && P.s->len > 0)
        {
          gboolean indent = it->r.x0 > c->left + 0.7 * it->em;
          gboolean gap = prev->column == it->column && it->base - prev->base > 1.45 * c->pitch &&
                         it->base - prev->base > c->pitch + 0.3 * it->em;
          gunichar endc = md_last_char (P.s);
          gboolean short_end = prev->column == it->column &&
                               prev->r.x1 < col[prev->column].right - 2.0 * prev->em &&
                               (endc == '.' || endc == ':' || endc == '!' || endc == '?');
          /* A change of font size: a footnote after the text, or the text
           * after it. */
          gboolean size = fabs (it->em - prev->em) > 0.12 * MAX (it->em, prev->em);
          if (indent || gap || short_end || size || prev->em >= 1.15 * pg->body_em)
            md_para_flush (&P, out, "");
        }
      for (guint k = 0; k < it->toks->len; k++)
        {
          const MdTok *t = &g_array_index (it->toks, MdTok, k);
          gboolean space = k > 0 && h_gap (&t->r, &g_array_index (it->toks, MdTok, k - 1).r) >= 0.15 * it->em;
          if (t->math)
            md_para_add_math (&P, pg, t->index, space);
          else
            md_para_add_char (&P, pg->g[t->index].c,
                              space || (k > 0 && !t->piece_start && pg->g[t->index].space_before));
        }
      md_para_line_end (&P);
      if (heading)
        md_para_flush (&P, out, "## ");
      prev = it;
    }
  md_para_flush (&P, out, "");
  g_string_free (P.s, TRUE);
}

/* The inverse of to_frame. */
static FmRect
from_frame (const FmRect *r, int dir, double w, double h)
{
  switch (dir)
    {
    case 1:
      return (FmRect) { w - r->y1, r->x0, w - r->y0, r->x1 };
    case 2:
      return (FmRect) { w - r->x1, h - r->y1, w - r->x0, h - r->y0 };
    case 3:
      return (FmRect) { r->y0, h - r->x1, r->y1, h - r->x0 };
    default:
      return *r;
    }
}

gboolean
fm_export_crop_boxes (FmDocument *doc,
                      GPtrArray  *regions,
                      guint       first,
                      FmRect     *boxes,
                      GError    **error)
{
  MdPage pg = { 0 };
  int page;

  if (first >= regions->len)
    return TRUE;
  page = ((FmRegion *) regions->pdata[first])->page;
  for (guint i = first; i < regions->len; i++)
    boxes[i - first] = ((FmRegion *) regions->pdata[i])->box;
  if (!md_load (&pg, regions, doc, page, error))
    return FALSE;
  md_assign (&pg, regions);
  for (int s = 0; s < pg.n_slots; s++)
    for (guint i = first; i < regions->len; i++)
      if (regions->pdata[i] == pg.slots[s].reg && pg.slots[s].reg->kind == FM_REGION_DISPLAY)
        {
          FmRect grown = from_frame (&pg.slots[s].crop, pg.dir, pg.page_w, pg.page_h);
          rect_union (&boxes[i - first], &grown);
        }
  md_page_clear (&pg);
  return TRUE;
}

static char *
to_markdown (FmExportJob *job, FmDocument *doc, GError **error)
{
  GString *out = g_string_new (NULL);
  MdPage *pages = g_new0 (MdPage, job->pages->len + 1);
  /* A page that cannot be read is a note in its place, as in json and tex:
   * the rest of the document is still worth writing (docs/cli.md). */
  char **unreadable = g_new0 (char *, job->pages->len + 1);
  gboolean ok = TRUE;

  (void) error;
  for (guint i = 0; i < job->pages->len; i++)
    {
      g_autoptr(GError) page_error = NULL;
      if (md_load (&pages[i], job->regions, doc, g_array_index (job->pages, int, i), &page_error))
        {
          md_assign (&pages[i], job->regions);
          md_layout (&pages[i]);
        }
      else
        {
          md_page_clear (&pages[i]);
          unreadable[i] = g_strdup (page_error ? page_error->message : "the page cannot be read");
        }
    }
  if (ok)
    {
      md_drop_furniture (pages, (int) job->pages->len);
      if (job->title)
        {
          g_autofree char *t = g_strdup (job->title);
          g_strdelimit (t, "\r\n", ' ');
          g_string_append_printf (out, "# %s\n\n", g_strstrip (t));
        }
      for (guint i = 0; i < job->pages->len; i++)
        {
          const char *note = i < job->page_notes->len ? job->page_notes->pdata[i] : NULL;
          if (i > 0)
            g_string_append (out, "---\n\n");
          if (note == NULL)
            note = unreadable[i];
          if (note)
            {
              g_autofree char *flat = g_strdup (note);
              g_strdelimit (flat, "\r\n", ' ');
              g_string_append_printf (out, "> Page %d: %s\n\n",
                                      g_array_index (job->pages, int, i) + 1, flat);
            }
          if (pages[i].items)
            md_emit (&pages[i], out);
        }
    }
  for (guint i = 0; i < job->pages->len; i++)
    md_page_clear (&pages[i]);
  for (guint i = 0; i < job->pages->len; i++)
    g_free (unreadable[i]);  /* not g_strfreev: readable pages leave NULL holes */
  g_free (unreadable);
  g_free (pages);
  if (!ok)
    {
      g_string_free (out, TRUE);
      return NULL;
    }
  return g_string_free (out, FALSE);
}

char *
fm_export_to_string (FmExportJob    *job,
                     FmDocument     *doc,
                     FmExportFormat  format,
                     GError        **error)
{
  switch (format)
    {
    case FM_EXPORT_JSON:
      return to_json (job);
    case FM_EXPORT_TEX:
      return to_tex (job);
    case FM_EXPORT_MARKDOWN:
      return to_markdown (job, doc, error);
    default:
      break;
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "unknown export format");
  return NULL;
}
