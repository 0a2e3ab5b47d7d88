/* doc.h — a report as a document: what it says, built once, and the
 * writers that only render it.
 *
 * A document is a list of blocks in reading order — headings, paragraphs
 * of inline runs, cards, tables, figures — plus its data: a tree of typed
 * values (the JSON document) in schema order. A report section is one
 * function that adds its blocks and its data members
 * (render/report/report-doc.c); every writer then shows it:
 *
 *   HTML      blocks, figures drawn as inline SVG (render/html.h, cairo)
 *   Markdown  blocks; figures and bars are left out
 *   JSON      the data tree
 *   CSV       the data columns of the one table named by ml_doc_set_csv()
 *
 * Tables declare their columns once (a label for people, a key for
 * machines, which writers show it); every row has one cell per column,
 * so no writer can print a header that disagrees with its rows.
 *
 * Figures are described, not drawn: the buffers and plan (borrowed) and
 * how to look at them, so a writer that draws (HTML through cairo, or an
 * interactive page that ships the buffers as typed arrays) can use them
 * and the others skip them.
 *
 * Building never fails half-way: an allocation failure is remembered
 * (ml_doc_failed) and later calls do nothing, so a section is written
 * straight through and the caller checks once. Everything a document
 * holds is in its arena and freed with it; strings are copied in.
 */
#ifndef ML_DOC_H
#define ML_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/analysis/check.h"
#include "sim/base/error.h"
#include "sim/buffers.h"
#include "sim/plan.h"

/* ---- inline text ----------------------------------------------------------- */

typedef enum { ML_DOC_TONE_PLAIN, ML_DOC_TONE_GOOD, ML_DOC_TONE_BAD, ML_DOC_TONE_MUTED } MlDocTone;

typedef enum {
  ML_DOC_RUN_TEXT,    /* plain text */
  ML_DOC_RUN_CODE,    /* a path or call site: <code>, `x` */
  ML_DOC_RUN_STRONG,  /* a verdict: <b class="bad">, **x** */
  ML_DOC_RUN_BADGE,   /* a tag after a name ("best"): " <span class=…>", " (x)" */
  ML_DOC_RUN_BREAK,   /* a line break inside a paragraph */
} MlDocRunKind;

typedef struct MlDocRun {
  MlDocRunKind     kind;
  MlDocTone        tone;
  const char      *text;
  struct MlDocRun *next;
} MlDocRun;

typedef struct {
  MlDocRun *first, *last;
} MlDocText;

/* Extra attributes an HTML element carries for scripts and tests
 * (data-strategy, data-bytes, id); the other writers ignore them. */
typedef struct MlDocAttr {
  const char       *name, *value;
  struct MlDocAttr *next;
} MlDocAttr;

/* ---- blocks ------------------------------------------------------------- */

typedef enum {
  ML_DOC_PARA_TEXT,  /* a paragraph */
  ML_DOC_PARA_LEAD,  /* the line under the title */
  ML_DOC_PARA_NOTE,  /* an explanation in small print */
} MlDocParaKind;

typedef struct MlDocCard {
  const char       *label, *value, *note;
  MlDocTone         tone;  /* of the value */
  MlDocAttr        *attrs; /* on the value */
  struct MlDocCard *next;
} MlDocCard;

enum {
  ML_DOC_COL_SHOW  = 1 << 0,  /* a column people read (HTML, Markdown) */
  ML_DOC_COL_DATA  = 1 << 1,  /* a column of the CSV (its key, the raw values) */
  ML_DOC_COL_BAR   = 1 << 2,  /* a bar (HTML only) */
  ML_DOC_COL_RIGHT = 1 << 3,  /* numbers: aligned right */
};

typedef struct {
  const char *label; /* the header people read */
  const char *key;   /* the CSV header */
  unsigned    flags;
  const char *note;  /* a sentence for the table's note, said only where
                      * the column is shown ("The bar's black line …") */
} MlDocColumn;

/* A cell spanning the rest of its row's shown columns. */
#define ML_DOC_SPAN_REST (-1)

typedef struct {
  MlDocText   text;      /* what people read */
  const char *raw;       /* the CSV value; NULL = empty */
  const char *hint;      /* a tooltip (the exact bytes) */
  MlDocTone   tone;
  int         span;      /* 0 or 1: one column; n > 1 or ML_DOC_SPAN_REST */
  bool        has_bar;
  double      bar, mark; /* a bar's length and its mark, 0..100 % */
} MlDocCell;

typedef struct MlDocRow {
  MlDocCell       *cells; /* one per column */
  MlDocAttr       *attrs;
  bool             highlight;
  struct MlDocRow *next;
} MlDocRow;

typedef struct {
  const char  *id, *cls;
  MlDocColumn *cols;
  size_t       n_cols, cap_cols;
  bool         no_header; /* a list of key and value rows */
  MlDocRow    *rows, *last;
  size_t       n_rows;
  MlDocText    note;      /* small print under the table, with the notes
                           * of the columns shown */
} MlDocTable;

typedef enum {
  ML_DOC_FIGURE_LAYOUT,  /* address × time, curves, fragmentation */
  ML_DOC_FIGURE_ACTIVE,  /* the live buffers stacked over time */
  ML_DOC_FIGURE_SERIES,  /* step curves of bytes over ticks on one axis (series) */
  ML_DOC_FIGURE_RANKS,   /* one pair of bars per rank: peak reserved, peak allocated, OOM marked */
} MlDocFigureView;

/* One rank of a RANKS figure (the label copied into the document). */
typedef struct {
  const char *label;
  uint64_t    reserved, allocated;  /* peak bytes */
  uint32_t    ooms;                 /* OOMs recorded: marked */
} MlDocRankBar;

/* One step curve of a SERIES figure: from x[i] on, the value is y[i]
 * (borrowed, n points, x increasing); drawn to @x_end. */
typedef struct {
  const char     *label;
  const uint64_t *x, *y;
  size_t          n;
  uint64_t        x_end;
  bool            dashed;
} MlDocSeries;

typedef struct {
  const MlBuffers *bufs;         /* borrowed, as the plan and the issues */
  const MlPlan    *plan;
  const MlIssues  *issues;       /* drawn in red; may be NULL */
  const char      *name;         /* the trace's name in the title */
  const char      *title;        /* instead of the default title; may be NULL */
  MlDocFigureView  view;
  bool             no_frag;      /* without the fragmentation panel */
  int              width, height;
  double           t_max, a_max; /* > 0: the time and byte scale shared
                                  * with the other figures of the group */
  bool             linked;       /* zoomed and panned with the others (HTML) */
  const char      *prefix;       /* for the ids of its inline SVG */
  MlDocText        caption;
  const MlDocSeries *series;     /* SERIES: the curves (borrowed) */
  size_t           n_series;
  uint64_t         y_line;       /* SERIES: a horizontal line there (a capacity), 0 = none */
  const char      *y_line_label;
  const MlDocRankBar *ranks;     /* RANKS: the bars, in order */
  size_t           n_ranks;
} MlDocFigure;

typedef enum {
  ML_DOC_BLOCK_HEADING, ML_DOC_BLOCK_PARA, ML_DOC_BLOCK_CARDS, ML_DOC_BLOCK_TABLE, ML_DOC_BLOCK_FIGURE,
} MlDocBlockKind;

typedef struct MlDocBlock {
  MlDocBlockKind     kind;
  int                level; /* heading: 1..3 */
  MlDocParaKind      para;
  MlDocTone          tone;  /* of a paragraph */
  MlDocText          text;  /* heading, paragraph */
  MlDocCard         *cards;
  MlDocTable        *table;
  MlDocFigure       *figure;
  struct MlDocBlock *next;
} MlDocBlock;

/* ---- data --------------------------------------------------------------- */

typedef enum {
  ML_DOC_VAL_ABSENT,  /* a placeholder that keeps a member's place; not written */
  ML_DOC_VAL_NULL, ML_DOC_VAL_BOOL, ML_DOC_VAL_U64, ML_DOC_VAL_NUM, ML_DOC_VAL_STR,
  ML_DOC_VAL_OBJECT, ML_DOC_VAL_ARRAY,
  ML_DOC_VAL_WRITER,  /* a value written by its owner's JSON writer */
  ML_DOC_VAL_SPLICE,  /* members written by their owner's writer into this object */
} MlDocValueKind;

/* A JSON writer of an object whose schema another command shares
 * (compare --json's results, diagnose --json): @obj and @aux as given. */
typedef int (*MlDocValueWriter) (FILE *fp, const void *obj, const void *aux, MlError *err);

typedef struct MlDocValue {
  MlDocValueKind     kind;
  const char        *key;                 /* in an object */
  bool               b;
  uint64_t           u;
  double             num;
  int                decimals;            /* of num */
  const char        *str;
  MlDocValueWriter   write;
  const void        *obj, *aux;
  struct MlDocValue *first, *last, *next; /* members or elements */
} MlDocValue;

/* ---- the document --------------------------------------------------------- */

typedef struct MlDocArena MlDocArena;

typedef struct {
  const char       *title;     /* the page's title (HTML <title>) */
  const char       *generator; /* "memlens 0.1.0" */
  MlDocBlock       *blocks, *last;
  MlDocText         footer;
  MlDocValue       *data;      /* the root object */
  const MlDocTable *csv;       /* the CSV, or NULL */
  bool              failed;    /* an allocation failed while building */
  MlDocArena       *arena;
} MlDoc;

/* A new empty document (NULL when out of memory). Free with ml_doc_free(). */
MlDoc      *ml_doc_new    (const char *title, const char *generator);
void        ml_doc_free   (MlDoc *doc);
/* 0, or ML_ENOMEM (in @err) when building ran out of memory. */
int         ml_doc_status (const MlDoc *doc, MlError *err) ML_MUST_CHECK;
/* A copy of @s / the formatted text in the document's arena ("" when out
 * of memory; NULL stays NULL). */
const char *ml_doc_strdup (MlDoc *doc, const char *s);
const char *ml_doc_printf (MlDoc *doc, const char *fmt, ...) __attribute__((format (printf, 2, 3)));

/* Appends a run to @in (the text copied). */
void ml_doc_run   (MlDoc *doc, MlDocText *in, MlDocRunKind kind, MlDocTone tone, const char *text);
void ml_doc_textf (MlDoc *doc, MlDocText *in, const char *fmt, ...) __attribute__((format (printf, 3, 4)));

static inline void
ml_doc_text (MlDoc *doc, MlDocText *in, const char *s)
{
  ml_doc_run (doc, in, ML_DOC_RUN_TEXT, ML_DOC_TONE_PLAIN, s);
}

static inline void
ml_doc_code (MlDoc *doc, MlDocText *in, const char *s)
{
  ml_doc_run (doc, in, ML_DOC_RUN_CODE, ML_DOC_TONE_PLAIN, s);
}

static inline void
ml_doc_break (MlDoc *doc, MlDocText *in)
{
  ml_doc_run (doc, in, ML_DOC_RUN_BREAK, ML_DOC_TONE_PLAIN, "");
}

/* True when @in has no text. */
bool ml_doc_text_empty (const MlDocText *in);

/* Blocks, appended in reading order; each returns what the caller fills
 * in (a dummy when out of memory, never NULL). */
MlDocText   *ml_doc_heading (MlDoc *doc, int level);
MlDocText   *ml_doc_para    (MlDoc *doc, MlDocParaKind kind, MlDocTone tone);
/* A card; cards in a row make one block. */
MlDocCard   *ml_doc_card    (MlDoc *doc, const char *label, const char *value, const char *note);
MlDocTable  *ml_doc_table   (MlDoc *doc, const char *id, const char *cls);
MlDocFigure *ml_doc_figure  (MlDoc *doc);
/* @n zeroed series for SERIES figure @f (f->series, f->n_series), to fill
 * in; NULL (and none) when out of memory. */
MlDocSeries *ml_doc_figure_series (MlDoc *doc, MlDocFigure *f, size_t n);
/* @n zeroed bars for RANKS figure @f (f->ranks, f->n_ranks), to fill in;
 * NULL (and none) when out of memory. */
MlDocRankBar *ml_doc_figure_ranks (MlDoc *doc, MlDocFigure *f, size_t n);
/* Adds an attribute to @list. */
void         ml_doc_attrf   (MlDoc *doc, MlDocAttr **list, const char *name, const char *fmt, ...)
  __attribute__((format (printf, 4, 5)));

/* Declares a column of @table (before its first row): its index. */
int        ml_doc_column  (MlDoc *doc, MlDocTable *table, const char *label, const char *key, unsigned flags);
/* Appends a row of empty cells. */
MlDocRow  *ml_doc_row     (MlDoc *doc, MlDocTable *table);
/* Cell @col of @row (a dummy when out of memory). */
MlDocCell *ml_doc_cell    (MlDoc *doc, MlDocRow *row, int col);
/* Appends the formatted text to cell @col of @row (and returns it). */
MlDocCell *ml_doc_cellf   (MlDoc *doc, MlDocRow *row, int col, const char *fmt, ...)
  __attribute__((format (printf, 4, 5)));
/* Sets the cell's CSV value. */
void       ml_doc_rawf    (MlDoc *doc, MlDocCell *cell, const char *fmt, ...) __attribute__((format (printf, 3, 4)));
/* How many of @table's columns from @col on a cell spanning @span
 * covers, counting only those whose flags meet @shown (what a writer
 * shows): 1 for a plain cell, the rest of the row for ML_DOC_SPAN_REST. */
size_t     ml_doc_span    (const MlDocTable *table, size_t col, int span, unsigned shown);
/* Whether @table has a note where the columns meeting @shown are shown. */
bool       ml_doc_table_has_note (const MlDocTable *table, unsigned shown);
/* Names @table as the document's CSV (its ML_DOC_COL_DATA columns). */
void       ml_doc_set_csv (MlDoc *doc, const MlDocTable *table);

/* Data. Each adds a member @key to the object @parent (replacing one of
 * that key in its place: declare a schema's members first as
 * placeholders to fix their order) or an element to the array @parent
 * (@key NULL). Containers are returned to fill. */
MlDocValue *ml_doc_value_object (MlDoc *doc, MlDocValue *parent, const char *key);
MlDocValue *ml_doc_value_array  (MlDoc *doc, MlDocValue *parent, const char *key);
void        ml_doc_value_absent (MlDoc *doc, MlDocValue *parent, const char *key);
void        ml_doc_value_null   (MlDoc *doc, MlDocValue *parent, const char *key);
void        ml_doc_value_bool   (MlDoc *doc, MlDocValue *parent, const char *key, bool v);
/* Written as a number, or a string above 2^53 (as every memlens JSON). */
void        ml_doc_value_u64    (MlDoc *doc, MlDocValue *parent, const char *key, uint64_t v);
/* Written with @decimals digits after the point. */
void        ml_doc_value_num    (MlDoc *doc, MlDocValue *parent, const char *key, double v, int decimals);
/* @s NULL: null. */
void        ml_doc_value_str    (MlDoc *doc, MlDocValue *parent, const char *key, const char *s);
void        ml_doc_value_writer (MlDoc *doc, MlDocValue *parent, const char *key, MlDocValueWriter write,
                                const void *obj, const void *aux);
/* Members of the object @parent written by @write ("k":v,... without braces). */
void        ml_doc_value_splice (MlDoc *doc, MlDocValue *parent, MlDocValueWriter write, const void *obj,
                                 const void *aux);

/* ---- writers ------------------------------------------------------------ */

/* Each writes the whole document to @fp; errors are write errors (and
 * those of a value's writer). The CSV writer: ML_EUSAGE when the document
 * has no CSV. */
int ml_doc_write_json     (const MlDoc *doc, FILE *fp, MlError *err) ML_MUST_CHECK;
int ml_doc_write_markdown (const MlDoc *doc, FILE *fp, MlError *err) ML_MUST_CHECK;
int ml_doc_write_csv      (const MlDoc *doc, FILE *fp, MlError *err) ML_MUST_CHECK;

/* Flushes @fp: 0, or ML_EIO "write error: …" (the writers' last step). */
int ml_doc_finish (FILE *fp, MlError *err) ML_MUST_CHECK;

/* A writer as ml_doc_save() calls it, with the writer's options. */
typedef int (*MlDocWriter) (const MlDoc *doc, FILE *fp, const void *opts, MlError *err);
/* The writer of the format the extension of @path names: .json, .md or
 * .markdown, .csv; NULL for any other. */
MlDocWriter ml_doc_text_writer (const char *path);
/* Writes @doc to @path ("-": stdout) through @write, atomically: on an
 * error nothing is left behind and the message names the path. */
int ml_doc_save (const MlDoc *doc, const char *path, MlDocWriter write, const void *opts, MlError *err) ML_MUST_CHECK;

#endif
