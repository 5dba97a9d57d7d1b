/* cli: a command's options as a table, parsed from argv, with `--help` generated from it.
 *
 * Front-end code (ddpsim's commands; meant for ddpcalib's too): each command declares its options
 * as cli_opt tables, {long name, value kind, destination pointer, help line}, and calls cli_parse.
 * The parser accepts `--name VALUE`, `--name=VALUE`, `-x VALUE`, `-xVALUE`, flags, unambiguous
 * prefixes of long names, `--` (end of options), `-h`/`--help` and `--version` ("PROG VERSION",
 * common/version.h, written where the help goes); it checks every value against
 * its kind and bounds, and on misuse writes one message naming the flag into the caller's context:
 *   unknown option '--x'             option '--x' needs a value
 *   option '--x' does not apply here (a name the program knows, listed in cli_cmd.elsewhere)
 *   --x must be WHAT, got 'VALUE'    (WHAT from the kind and bounds; cli_opt.must replaces
 *                                     "must be WHAT" where they do not say it)
 *   --x: 'ITEM' is not WHAT          (an item of a list)
 *   unexpected argument 'A'
 * It never prints except the help, and only to the stream it is given.
 *
 * A name may stand in more than one of a command's tables: the first wins, in parsing and in the
 * help (a command overrides a shared option by listing its own first).
 *
 * Status codes: CLI_OK, CLI_HELP (help printed: exit 0), CLI_USAGE (misuse: exit 2); a command
 * passes any other positive code (a library's failure: exit 1) through. cli_exit is the one place
 * a status becomes an exit code (cli_exit_code: the contract of common/err.h's err_exit_code, which
 * can replace it). */
#ifndef DDPSIM_CLI_H
#define DDPSIM_CLI_H

#include <stddef.h>
#include <stdio.h>

enum { CLI_OK = 0, CLI_HELP = -1, CLI_USAGE = -2 };

#define CLI_MAX_LIST 64

/* A number macro's digits as a string literal, for help text that quotes a default written once
 * elsewhere: "(default " CLI_TEXT(BUYOPTS_DRAWS) ")". */
#define CLI_TEXT_(v) #v
#define CLI_TEXT(v) CLI_TEXT_(v)

typedef enum {
  CLI_FLAG,   /* int *: set to 1 */
  CLI_INT,    /* int * (bounds: min, max) */
  CLI_LONG,   /* long * */
  CLI_ULONG,  /* unsigned long *: digits only */
  CLI_DOUBLE, /* double *: finite (bounds: min, max, open or closed) */
  CLI_STRING, /* const char **: the argv text itself */
  CLI_ENUM,   /* int *: the index of the value in names */
  CLI_CUSTOM, /* parse(text, dest) == 0; must says what is expected */
} cli_kind;

/* cli_opt.bounds */
enum { CLI_MIN = 1, CLI_MAX = 2, CLI_MIN_OPEN = 4, CLI_MAX_OPEN = 8 };

/* A comma-separated list (cli_opt.list > 0): text is the default on entry, what was given after;
 * (NULL on entry: no default, and the list stays empty, n = 0, unless given);
 * cli_parse splits and checks it (default or given) into n items: i[] for CLI_INT, CLI_LONG and
 * CLI_ENUM, d[] for CLI_DOUBLE, s[] (each item's text, in buf) for every kind. */
typedef struct {
  const char *text;
  int n;
  long i[CLI_MAX_LIST];
  double d[CLI_MAX_LIST];
  const char *s[CLI_MAX_LIST];
  char buf[4096];
} cli_list;

typedef struct {
  const char *name;        /* long name without "--"; NULL ends a table */
  char short_name;         /* 'o' for -o, or 0 */
  cli_kind kind;
  void *dest;              /* by kind (above); a cli_list * when list > 0 */
  const char *arg;         /* the value's name in the help ("N", "fp32|fp16"); NULL for flags */
  const char *help;        /* help text, lines separated by '\n'; NULL: left out of the help */
  int bounds;              /* CLI_MIN | CLI_MAX | CLI_MIN_OPEN | CLI_MAX_OPEN */
  double min, max;
  const char *const *names; /* CLI_ENUM: the values, NULL-terminated */
  int list;                /* > 0: a list of at most this many items, into a cli_list */
  int (*parse)(const char *text, void *dest); /* CLI_CUSTOM: 0, or -1 when text is bad */
  const char *must;        /* the predicate when the kind and bounds do not say it: "must list ring
                              and/or tree"; NULL: "must be " + what they say */
} cli_opt;

typedef struct {
  const char *usage;       /* synopsis and description, printed before the option lines */
  const char *epilog;      /* printed after them, or NULL */
  const cli_opt *const *tables; /* the command's options: NULL-terminated list of tables */
  const char *const *elsewhere; /* names the program knows but this command does not (NULL-terminated,
                                   or NULL): "does not apply here" instead of "unknown option" */
  const char *not_here;    /* that message's ending; NULL: "does not apply here" */
  int max_args;            /* positional arguments accepted (into cli_parse's args) */
} cli_cmd;

/* Who is speaking: messages print as "PROG WHERE: msg", the usage hint names "PROG CMD --help". */
typedef struct {
  const char *prog;        /* "ddpsim" */
  const char *cmd;         /* "predict", or NULL for the program itself */
  char where[64];          /* cmd, or more precisely (genmodel: "genmodel bert") */
  char msg[1024];
} cli_ctx;

/* Sets up a context for prog and cmd (NULL: none). */
void cli_ctx_init(cli_ctx *x, const char *prog, const char *cmd);

/* Parses argv[1..argc-1] (argv[0] is the command's name) against c's tables. Returns CLI_OK;
 * CLI_HELP after writing the help (or the version) to `help`; or CLI_USAGE with the message in x. Positional
 * arguments go to args (at most c->max_args; *nargs their count) when args is non-NULL. Values
 * reach their destinations as they are parsed; lists are split after the whole line was read. */
int cli_parse(cli_ctx *x, const cli_cmd *c, int argc, char **argv, char **args, int *nargs, FILE *help);

/* Copies the entries of `from` (NULL-ended) named in names (NULL-ended), in names' order, to out
 * and ends it; out needs one more entry than names. A name not in from is left out. */
void cli_select(const cli_opt *from, const char *const *names, cli_opt *out);

/* The option whose long name is name[0..len-1] or of which it is an unambiguous prefix, as
 * cli_parse finds it; NULL for none (or an ambiguous prefix). */
const cli_opt *cli_lookup(const cli_cmd *c, const char *name, size_t len);

/* Writes c's help: usage, one line per option (help text at column 23), epilog. */
void cli_help(const cli_cmd *c, FILE *f);

/* Write the printf-style message into x and return CLI_USAGE, or code (a failure, > 0). */
int cli_usage(cli_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_fail(cli_ctx *x, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* 0 for CLI_OK and CLI_HELP; else common/err.h's err_exit_code, the one policy (CLI_USAGE as ERR_USAGE:
 * 2; any other failure 1). */
int cli_exit_code(int status);

/* The end of a command: prints x's message to stderr when status is a misuse or a failure (with
 * the usage hint for a misuse) and returns the exit code. */
int cli_exit(const cli_ctx *x, int status);

/* A program of commands (ddpsim, ddpcalib): each command gets argv from its own name on and a
 * context for its messages, and returns a status. */
typedef struct {
  const char *name;
  const char *summary; /* one line for `PROG --help` */
  int (*run)(cli_ctx *x, int argc, char **argv);
} cli_command;

typedef struct {
  const char *prog;            /* "ddpsim" */
  const char *intro;           /* the help before the list of commands */
  const char *outro;           /* after it (may be NULL) */
  const cli_command *commands;
  int ncommands;
  int (*quiet)(void);          /* non-NULL and true: a misuse is not printed (MPI ranks but 0) */
} cli_program;

/* Runs the command argv[1] names and returns the exit code (cli_exit): the program's help for
 * --help, -h or help (exit 0), "PROG VERSION" for --version (exit 0), or with no command (exit 2),
 * and a misuse naming the commands for an unknown one. Standard output is then flushed and closed:
 * if any of it could not be written (a full disk, /dev/full) "PROG: write error: WHY" goes to
 * stderr and the exit is 1 (or the command's own failure code). */
int cli_main(const cli_program *p, int argc, char **argv);

#endif
