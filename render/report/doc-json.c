/* doc-json.c — a document's data as JSON (see doc.h). */
#include "render/report/doc.h"

#include "sim/base/jsonutil.h"

static int
write_value (FILE *fp, const MlDocValue *v, MlError *err)
{
  switch (v->kind)
    {
    case ML_DOC_VAL_ABSENT:
    case ML_DOC_VAL_SPLICE:
      return 0;  /* written by the containing object */
    case ML_DOC_VAL_NULL:
      fputs ("null", fp);
      return 0;
    case ML_DOC_VAL_BOOL:
      fputs (v->b ? "true" : "false", fp);
      return 0;
    case ML_DOC_VAL_U64:
      ml_json_put_u64 (fp, v->u);
      return 0;
    case ML_DOC_VAL_NUM:
      fprintf (fp, "%.*f", v->decimals, v->num);
      return 0;
    case ML_DOC_VAL_STR:
      ml_json_put_str (fp, v->str);
      return 0;
    case ML_DOC_VAL_WRITER:
      return v->write (fp, v->obj, v->aux, err);
    case ML_DOC_VAL_OBJECT:
    case ML_DOC_VAL_ARRAY:
      break;
    }
  bool object = v->kind == ML_DOC_VAL_OBJECT;
  fputc (object ? '{' : '[', fp);
  bool first = true;
  for (const MlDocValue *m = v->first; m; m = m->next)
    {
      if (m->kind == ML_DOC_VAL_ABSENT)
        continue;
      if (!first)
        fputc (',', fp);
      first = false;
      if (m->kind == ML_DOC_VAL_SPLICE)
        {
          if (m->write (fp, m->obj, m->aux, err) < 0)
            return ML_EIO;
          continue;
        }
      if (object)
        {
          ml_json_put_str (fp, m->key);
          fputc (':', fp);
        }
      if (write_value (fp, m, err) < 0)
        return ML_EIO;
    }
  fputc (object ? '}' : ']', fp);
  return 0;
}

int
ml_doc_write_json (const MlDoc *doc, FILE *fp, MlError *err)
{
  if (write_value (fp, doc->data, err) < 0)
    return err && err->code ? err->code : ML_EIO;
  fputc ('\n', fp);
  return ml_doc_finish (fp, err);
}
