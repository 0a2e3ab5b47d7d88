/* sites.c — call sites by rule (sites.h). */
#include "sim/sites.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
ml_frames_parse (const char *text, MlFrames *out, MlError *err)
{
  if (!text || !*text)
    return ml_error_set (err, ML_EUSAGE, "--frames: expected user, all or a regular expression");
  if (strcmp (text, "user") == 0)
    *out = (MlFrames) { ML_FRAMES_USER, NULL };
  else if (strcmp (text, "all") == 0)
    *out = (MlFrames) { ML_FRAMES_ALL, NULL };
  else
    {
      regex_t re;
      int rc = regcomp (&re, text, REG_EXTENDED | REG_NOSUB);
      if (rc != 0)
        {
          char why[128];
          regerror (rc, &re, why, sizeof why);
          return ml_error_set (err, ML_EUSAGE, "--frames %s: not a regular expression: %s", text, why);
        }
      regfree (&re);
      *out = (MlFrames) { ML_FRAMES_REGEX, text };
    }
  return 0;
}

bool
ml_frame_is_library (const char *file)
{
  if (!file)
    return false;
  if (strstr (file, "site-packages") || strstr (file, "dist-packages"))
    return true;
  /* the standard library: .../lib/python3.11/threading.py (not a
   * virtualenv's site-packages, caught above), <frozen runpy> */
  for (const char *p = strstr (file, "/lib/python"); p; p = strstr (p + 1, "/lib/python"))
    if (p[11] >= '0' && p[11] <= '9')
      return true;
  return strstr (file, "\\Lib\\") != NULL || strncmp (file, "<frozen", 7) == 0;
}

/* The allocator's and the interpreter's own frames: never a call site
 * (memory_viz's frameFilter omits the same). */
static bool
is_internal (const char *file, const char *func)
{
  static const char *const funcs[] = { "CachingAllocator", "CachingDeviceAllocator", "unwind::", "CapturedTraceback",
                                       "gather_with_cpp", "_start", "__libc_start", "PyEval_", "PyObject_",
                                       "PyFunction_", "_PyEval", "_PyObject", "_PyFunction" };
  static const char *const files[] = { "core/boxing", "/Register", "/Redispatch", "pythonrun.c", "Modules/main.c",
                                       "Objects/call.c", "Objects/methodobject.c", "pycore_ceval.h", "ceval.c",
                                       "cpython/abstract.h" };
  for (size_t k = 0; k < sizeof funcs / sizeof funcs[0]; k++)
    if (func && strstr (func, funcs[k]))
      return true;
  for (size_t k = 0; k < sizeof files / sizeof files[0]; k++)
    if (file && strstr (file, files[k]))
      return true;
  return false;
}

void
ml_frame_text (const MlTrace *t, const MlFrame *f, char *buf, size_t len)
{
  const char *file = ml_trace_str (t, f->file), *func = ml_trace_str (t, f->func);
  if (!file || !*file || strcmp (file, "??") == 0)
    snprintf (buf, len, "%s", func && *func ? func : "??");
  else
    snprintf (buf, len, "%s:%u:%s", file, f->line, func ? func : "");
}

/* The frame of stack @st the rule picks (its index), -1 when none. */
static long
pick (const MlTrace *t, const MlStack *st, const MlFrames *rule, const regex_t *re)
{
  if (!st->n)
    return -1;
  if (rule->mode == ML_FRAMES_ALL)
    return 0;
  char buf[1024];
  for (uint32_t k = 0; rule->mode == ML_FRAMES_REGEX && k < st->n; k++)
    {
      ml_frame_text (t, ml_trace_stack_frame (t, st, k), buf, sizeof buf);
      if (regexec (re, buf, 0, NULL, 0) == 0)
        return k;
    }
  for (uint32_t k = 0; k < st->n; k++)
    {
      const MlFrame *f = ml_trace_stack_frame (t, st, k);
      const char *file = ml_trace_str (t, f->file), *func = ml_trace_str (t, f->func);
      if (!ml_frame_is_framework (file, func) && !ml_frame_is_library (file))
        return k;
    }
  for (uint32_t k = 0; k < st->n; k++)
    {
      const MlFrame *f = ml_trace_stack_frame (t, st, k);
      if (!is_internal (ml_trace_str (t, f->file), ml_trace_str (t, f->func)))
        return k;
    }
  return 0;
}

int
ml_trace_set_sites (MlTrace *t, const MlFrames *rule, MlError *err)
{
  static const MlFrames user = { ML_FRAMES_USER, NULL };
  regex_t re;
  memset (&re, 0, sizeof re);
  if (!rule)
    rule = &user;
  if (rule->mode == ML_FRAMES_REGEX)
    {
      int rc = regcomp (&re, rule->regex, REG_EXTENDED | REG_NOSUB);
      if (rc != 0)
        return ml_error_set (err, ML_EUSAGE, "--frames %s: not a regular expression", rule->regex);
    }
  int rc = 0;
  char frame[1024], site[1200];
  for (size_t s = 1; s < t->n_stacks && rc == 0; s++)
    {
      MlStack *st = &t->stacks[s];
      long k = pick (t, st, rule, &re);
      if (k < 0)
        continue;   /* no frames: the site the reader gave it */
      ml_frame_text (t, ml_trace_stack_frame (t, st, (uint32_t) k), frame, sizeof frame);
      if (st->kind == ML_STACK_FREED_BEFORE_TRACE || st->kind == ML_STACK_FREED_BEFORE_WINDOW)
        snprintf (site, sizeof site, "allocated before the %s, freed at %s",
                  st->kind == ML_STACK_FREED_BEFORE_TRACE ? "trace" : "window", frame);
      else
        snprintf (site, sizeof site, "%s", frame);
      uint32_t idx = ml_strtab_intern0 (t->strings, site);
      if (idx == UINT32_MAX)
        rc = ml_error_set (err, ML_ENOMEM, "out of memory");
      else
        st->site = idx;
    }
  if (rule->mode == ML_FRAMES_REGEX)
    regfree (&re);
  return rc;
}
