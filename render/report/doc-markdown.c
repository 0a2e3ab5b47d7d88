/* doc-markdown.c — a document as Markdown (see doc.h): headings, text,
 * cards as a list, tables as pipe tables; figures and bars are left out
 * (a heading over nothing but figures too). */
#include "render/report/doc.h"

#include <string.h>

/* Text with what Markdown would read as markup escaped; in a table cell
 * (@cell) also pipes, and newlines everywhere become spaces. */
static void
md_text (FILE *fp, const char *s, bool cell)
{
  for (; *s; s++)
    {
      if (*s == '\n' || *s == '\r')
        fputc (' ', fp);
      else if (strchr ("\\`*<", *s) || (cell && *s == '|'))
        {
          fputc ('\\', fp);
          fputc (*s, fp);
        }
      else
        fputc (*s, fp);
    }
}

static void
md_inline (FILE *fp, const MlDocText *in, bool cell)
{
  for (const MlDocRun *r = in->first; r; r = r->next)
    switch (r->kind)
      {
      case ML_DOC_RUN_TEXT:
        md_text (fp, r->text, cell);
        break;
      case ML_DOC_RUN_CODE:
        {
          /* a backtick inside: a double fence */
          bool tick = strchr (r->text, '`') != NULL;
          fputs (tick ? "`` " : "`", fp);
          for (const char *s = r->text; *s; s++)
            if (cell && *s == '|')
              fputs ("\\|", fp);  /* GitHub's tables split cells first */
            else
              fputc (*s == '\n' || *s == '\r' ? ' ' : *s, fp);
          fputs (tick ? " ``" : "`", fp);
          break;
        }
      case ML_DOC_RUN_STRONG:
        fputs ("**", fp);
        md_text (fp, r->text, cell);
        fputs ("**", fp);
        break;
      case ML_DOC_RUN_BADGE:
        fputs (" (", fp);
        md_text (fp, r->text, cell);
        fputc (')', fp);
        break;
      case ML_DOC_RUN_BREAK:
        fputs (cell ? " " : "  \n", fp);
        break;
      }
}

static bool
md_shown (const MlDocColumn *c)
{
  return c->flags & ML_DOC_COL_SHOW;
}

static void
md_row (FILE *fp, const MlDocTable *t, const MlDocRow *r)
{
  if (t->no_header)
    {
      /* a key and its values: "- key: v1, v2" */
      size_t k = 0;
      for (size_t c = 0; c < t->n_cols; c++)
        if (md_shown (&t->cols[c]))
          {
            fputs (k == 0 ? "- " : k == 1 ? ": " : ", ", fp);
            md_inline (fp, &r->cells[c].text, false);
            k++;
          }
      fputc ('\n', fp);
      return;
    }
  fputc ('|', fp);
  for (size_t c = 0; c < t->n_cols; c++)
    {
      if (!md_shown (&t->cols[c]))
        continue;
      const MlDocCell *cell = &r->cells[c];
      fputc (' ', fp);
      md_inline (fp, &cell->text, true);
      fputs (" |", fp);
      /* the columns a spanning cell covers stay empty */
      size_t n = ml_doc_span (t, c, cell->span, ML_DOC_COL_SHOW);
      for (size_t left = n > 1 ? n - 1 : 0; left && ++c < t->n_cols;)
        if (md_shown (&t->cols[c]))
          {
            fputs (" |", fp);
            left--;
          }
    }
  fputc ('\n', fp);
}

static void
md_table (FILE *fp, const MlDocTable *t)
{
  if (!t->no_header)
    {
      fputc ('|', fp);
      for (size_t c = 0; c < t->n_cols; c++)
        if (md_shown (&t->cols[c]))
          {
            fputc (' ', fp);
            md_text (fp, t->cols[c].label, true);
            fputs (" |", fp);
          }
      fputs ("\n|", fp);
      for (size_t c = 0; c < t->n_cols; c++)
        if (md_shown (&t->cols[c]))
          fputs (t->cols[c].flags & ML_DOC_COL_RIGHT ? "---:|" : "---|", fp);
      fputc ('\n', fp);
    }
  for (const MlDocRow *r = t->rows; r; r = r->next)
    md_row (fp, t, r);
  if (ml_doc_table_has_note (t, ML_DOC_COL_SHOW))
    {
      fputc ('\n', fp);
      md_inline (fp, &t->note, false);
      for (size_t c = 0; c < t->n_cols; c++)
        if ((t->cols[c].flags & ML_DOC_COL_SHOW) && t->cols[c].note)
          {
            fputc (' ', fp);
            md_text (fp, t->cols[c].note, false);
          }
      fputc ('\n', fp);
    }
}

/* Whether Markdown shows anything of @b. */
static bool
md_has (const MlDocBlock *b)
{
  return b->kind != ML_DOC_BLOCK_FIGURE;
}

/* A heading over nothing Markdown shows (up to the next heading of its
 * level or above) is left out with its blocks. */
static bool
md_empty_section (const MlDocBlock *h)
{
  for (const MlDocBlock *b = h->next; b; b = b->next)
    {
      if (b->kind == ML_DOC_BLOCK_HEADING)
        return b->level <= h->level;
      if (md_has (b))
        return false;
    }
  return true;
}

static void
md_block (FILE *fp, const MlDocBlock *b)
{
  switch (b->kind)
    {
    case ML_DOC_BLOCK_HEADING:
      fprintf (fp, "%.*s ", b->level, "######");
      md_inline (fp, &b->text, false);
      fputc ('\n', fp);
      break;
    case ML_DOC_BLOCK_PARA:
      md_inline (fp, &b->text, false);
      fputc ('\n', fp);
      break;
    case ML_DOC_BLOCK_CARDS:
      for (const MlDocCard *c = b->cards; c; c = c->next)
        {
          fputs ("- ", fp);
          md_text (fp, c->label, false);
          fputs (": **", fp);
          md_text (fp, c->value, false);
          fputs ("**", fp);
          if (c->note && *c->note)
            {
              fputs (" — ", fp);
              md_text (fp, c->note, false);
            }
          fputc ('\n', fp);
        }
      break;
    case ML_DOC_BLOCK_TABLE:
      md_table (fp, b->table);
      break;
    case ML_DOC_BLOCK_FIGURE:
      break;
    }
}

int
ml_doc_write_markdown (const MlDoc *doc, FILE *fp, MlError *err)
{
  bool first = true;
  for (const MlDocBlock *b = doc->blocks; b; b = b->next)
    {
      if (b->kind == ML_DOC_BLOCK_HEADING && md_empty_section (b))
        {
          /* skip to the next heading of this level or above */
          int level = b->level;
          while (b->next && !(b->next->kind == ML_DOC_BLOCK_HEADING && b->next->level <= level))
            b = b->next;
          continue;
        }
      if (!md_has (b))
        continue;
      if (!first)
        fputc ('\n', fp);
      first = false;
      md_block (fp, b);
    }
  if (!ml_doc_text_empty (&doc->footer))
    {
      fputs ("\n---\n", fp);
      md_inline (fp, &doc->footer, false);
      fputc ('\n', fp);
    }
  return ml_doc_finish (fp, err);
}
