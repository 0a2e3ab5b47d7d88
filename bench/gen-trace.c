/* gen-trace — writes a synthetic trace for benchmarks.
 * Usage: gen-trace [--events N] [--live N] [--sizes uniform|lognormal|pow2]
 *                  [--min SIZE] [--max SIZE] [--streams K] [--seed S] -o OUT.jsonl|.csv
 *        gen-trace --training BUFFERS [--seed S] -o OUT.jsonl|.csv
 * --training writes the training-run shape of bench/gen.h instead. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/gen.h"
#include "sim/formats/load.h"
#include "sim/base/units.h"

int
main (int argc, char **argv)
{
  static const struct option opts[] = {
    { "events", required_argument, 0, 'e' }, { "live", required_argument, 0, 'l' },
    { "sizes", required_argument, 0, 'd' }, { "min", required_argument, 0, 'm' },
    { "max", required_argument, 0, 'M' }, { "streams", required_argument, 0, 's' },
    { "seed", required_argument, 0, 'S' }, { "output", required_argument, 0, 'o' },
    { "training", required_argument, 0, 't' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
  };
  GenParams p;
  gen_params_init (&p);
  const char *out = NULL;
  uint64_t training = 0;
  MlError err = { 0 };
  int c;
  while ((c = getopt_long (argc, argv, "e:l:d:m:M:s:S:o:t:h", opts, NULL)) != -1)
    {
      uint64_t v;
      switch (c)
        {
        case 'e': if (ml_parse_size (optarg, &p.events, &err) < 0) goto bad; break;
        case 'l': if (ml_parse_size (optarg, &p.live, &err) < 0) goto bad; break;
        case 'd': if (gen_parse_dist (optarg, &p.dist) < 0) { fprintf (stderr, "gen-trace: unknown size distribution %s\n", optarg); return 2; } break;
        case 'm': if (ml_parse_size (optarg, &p.min_size, &err) < 0) goto bad; break;
        case 'M': if (ml_parse_size (optarg, &p.max_size, &err) < 0) goto bad; break;
        case 's': if (ml_parse_size (optarg, &v, &err) < 0) goto bad; p.streams = (uint32_t) v; break;
        case 'S': if (ml_parse_size (optarg, &p.seed, &err) < 0) goto bad; break;
        case 'o': out = optarg; break;
        case 't': if (ml_parse_size (optarg, &training, &err) < 0) goto bad; break;
        case 'h':
          printf ("Usage: gen-trace [--events N] [--live N] [--sizes uniform|lognormal|pow2] [--min SIZE] [--max SIZE]\n"
                  "                 [--streams K] [--seed S] -o OUT.jsonl|OUT.csv\n"
                  "       gen-trace --training BUFFERS [--seed S] -o OUT.jsonl|OUT.csv\n"
                  "Writes a synthetic allocation trace: a live set hovering around --live buffers,\n"
                  "or (--training) the buffers of a network's training iterations (bench/gen.h).\n");
          return 0;
        default: return 2;
        }
    }
  if (!out || p.live == 0 || p.min_size == 0 || p.max_size < p.min_size)
    {
      fprintf (stderr, "gen-trace: need -o OUT, --live > 0 and 0 < --min <= --max (see --help)\n");
      return 2;
    }
  MlTrace *t = ml_trace_new ();
  t->source = ml_strtab_intern0 (t->strings, "gen-trace");
  if (!t || (training ? gen_training (training, p.seed, t) : gen_trace (&p, t)) < 0)
    {
      fprintf (stderr, "gen-trace: out of memory\n");
      return 1;
    }
  if (ml_trace_save (t, out, &err) < 0)
    goto bad;
  ml_trace_free (t);
  return 0;
bad:
  fprintf (stderr, "gen-trace: %s\n", err.msg);
  return 2;
}
